"""Pods of the workspace world and the parties that act on it.

A pod of the world is one incarnation (``PodId``: namespace, name AND uid;
the same name with another uid is another pod) with a Runtime and a health
that fails or passes the readiness rule of spec section 1; ``WorldPod.to_pod``
renders it as the ``Pod`` decisions read. An ``Actor`` says who applies a
batch of actions (the controller, runtimed on one pod, a user, a foreign
controller). ``bound_pod_of`` and ``assigned_pod_of`` read the pod a
workspace status or a Run refers to.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from attrs import frozen

from kruntimes_core.core.conditions import ConditionStatus
from kruntimes_core.core.meta import ObjectMeta
from kruntimes_core.resources.pod import (
    POD_RUNNING,
    RUNTIME_LABEL,
    RUNTIMED_READY,
    Pod,
    PodCondition,
    PodStatus,
)
from kruntimes_core.resources.run import Run
from kruntimes_core.resources.workspace import WorkspaceStatus


class PodHealth(StrEnum):
    """How a pod fails (or passes) the readiness rule of spec section 1."""

    READY = "Ready"
    NOT_RUNNING = "NotRunning"
    """``status.phase`` is not Running yet."""
    NOT_READY = "NotReady"
    """The kubelet's ``Ready`` condition is False."""
    RUNTIMED_DOWN = "RuntimedDown"
    """runtimed's ``kruntimes.io/RuntimedReady`` heartbeat is False."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}.{self.name}"


@frozen(order=True)
class PodId:
    """One incarnation of a pod: the same name with another uid is another pod."""

    namespace: str
    name: str
    uid: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}#{self.uid}"

    @classmethod
    def of(cls, meta: ObjectMeta) -> PodId:
        return cls(meta.namespace, meta.name, meta.uid)


@frozen
class WorldPod:
    id: PodId
    runtime: str
    health: PodHealth = PodHealth.READY
    deleted_at: datetime | None = None

    @property
    def ready(self) -> bool:
        """The world's own reading of spec section 1 (not ``Pod.ready``)."""
        return self.health is PodHealth.READY and self.deleted_at is None

    def to_pod(self) -> Pod:
        ready = (
            ConditionStatus.FALSE if self.health is PodHealth.NOT_READY else ConditionStatus.TRUE
        )
        runtimed = (
            ConditionStatus.FALSE
            if self.health is PodHealth.RUNTIMED_DOWN
            else ConditionStatus.TRUE
        )
        return Pod(
            metadata=ObjectMeta(
                name=self.id.name,
                namespace=self.id.namespace,
                uid=self.id.uid,
                labels={RUNTIME_LABEL: self.runtime},
                deletion_timestamp=self.deleted_at,
            ),
            status=PodStatus(
                phase="Pending" if self.health is PodHealth.NOT_RUNNING else POD_RUNNING,
                conditions=(
                    PodCondition("Ready", ready),
                    PodCondition(RUNTIMED_READY, runtimed),
                ),
            ),
        )


class Party(StrEnum):
    CONTROLLER = "controller"
    RUNTIMED = "runtimed"
    USER = "user"
    FOREIGN = "foreign-controller"


@frozen
class Actor:
    """Who applies a batch of actions; runtimed is always runtimed on one pod."""

    party: Party
    pod: PodId | None = None

    def __str__(self) -> str:
        return f"{self.party}@{self.pod}" if self.pod else str(self.party)

    @classmethod
    def controller(cls) -> Actor:
        return cls(Party.CONTROLLER)

    @classmethod
    def runtimed(cls, pod: PodId) -> Actor:
        return cls(Party.RUNTIMED, pod)


def bound_pod_of(status: WorkspaceStatus, namespace: str) -> PodId | None:
    if not status.bound_pod and not status.bound_pod_uid:
        return None
    return PodId(namespace, status.bound_pod, status.bound_pod_uid)


def assigned_pod_of(run: Run) -> PodId | None:
    if not run.status.assigned_pod:
        return None
    return PodId(run.metadata.namespace, run.status.assigned_pod, run.status.assigned_pod_uid)
