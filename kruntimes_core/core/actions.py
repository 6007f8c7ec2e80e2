"""Actions: what a decision wants done, as data an adapter applies later.

Every action names its target by kind, namespace, name and uid; adapters use
the uid (and, for status, the resourceVersion) as a precondition so an action
computed from a stale snapshot fails instead of hitting a newer object.

A decision's actions are applied in order. ``resource_version`` is the
version the decision observed; an applier carries it forward through the
decision's own writes to the same object (each write returns the next
version), so adding a finalizer and then patching status in one decision
is not a conflict, while a change made by anyone else in between is.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Generic, TypeVar

from attrs import frozen

from kruntimes_core.core.meta import ObjectMeta

S_co = TypeVar("S_co", covariant=True)


@frozen
class ObjectRef:
    api_version: str
    kind: str
    namespace: str
    name: str
    uid: str

    @classmethod
    def to(cls, api_version: str, kind: str, meta: ObjectMeta) -> ObjectRef:
        return cls(api_version, kind, meta.namespace, meta.name, meta.uid)


@frozen
class Action:
    """Base of every action; an adapter dispatches on the concrete class."""

    target: ObjectRef


@frozen
class PatchStatus(Action, Generic[S_co]):
    """Write ``status`` through the status subresource, if still at ``resource_version``."""

    resource_version: str
    status: S_co


@frozen
class CreateObject(Action, Generic[S_co]):
    """Create ``object`` (``target.uid`` is empty: the API server assigns it).

    An applier that meets AlreadyExists adopts the existing object when its
    controller owner is the decider's owner, and reports a conflict otherwise.
    """

    object: S_co


@frozen
class RequestCancel(Action):
    """Set ``spec.cancelRequested: true`` on a child (a Run or WorkflowRun)."""


@frozen
class AddFinalizer(Action):
    finalizer: str


@frozen
class RemoveFinalizer(Action):
    finalizer: str


@frozen
class DeleteObject(Action):
    """Request deletion (finalizers keep the object until they are removed)."""


@frozen
class DeleteWorkspaceDirectory(Action):
    """runtimed on pod ``target`` deletes the directory ``path`` on its own volume."""

    path: str


class EventType(StrEnum):
    NORMAL = "Normal"
    WARNING = "Warning"


@frozen
class Event:
    """A Kubernetes Event about the decided object; emitted on transitions only."""

    type: EventType
    reason: str
    message: str
