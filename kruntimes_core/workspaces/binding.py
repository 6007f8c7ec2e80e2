"""Binding: Pending -> Bound -> Lost (spec workspaces.md section 2).

Theory of operation. A workspace without a binding is bound to one ready pod
of its Runtime, chosen by a stable hash of its uid over the ready pods sorted
by name. The binding (pod name AND uid) is then immutable: the workspace
stays Bound while that exact pod exists, ready or not, and becomes Lost when
the pod is gone, replaced under the same name, or being deleted. Lost is
final; the selection is never run again for a workspace that has a binding.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from kruntimes_core.core.hashing import fnv1a_32
from kruntimes_core.core.meta import ObjectMeta
from kruntimes_core.resources.pod import Pod
from kruntimes_core.resources.workspace import WorkspaceStatus
from kruntimes_core.workspaces.pods import RuntimePods


class BoundReason(StrEnum):
    """Reasons of the ``Bound`` condition."""

    BOUND = "Bound"
    NO_READY_RUNTIME_PODS = "NoReadyRuntimePods"
    RUNTIME_NOT_FOUND = "RuntimeNotFound"
    DELETED_BEFORE_BINDING = "DeletedBeforeBinding"
    BOUND_POD_DELETED = "BoundPodDeleted"
    BOUND_POD_REPLACED = "BoundPodReplaced"
    BOUND_POD_DELETING = "BoundPodDeleting"


def selection_key(meta: ObjectMeta) -> str:
    """What the selection hashes: the uid, or ``namespace/name`` without one."""
    return meta.uid or f"{meta.namespace}/{meta.name}"


def select_pod(meta: ObjectMeta, ready: Sequence[Pod]) -> Pod | None:
    """The pod a new binding goes to; ``ready`` must be sorted by name."""
    if not ready:
        return None
    return ready[fnv1a_32(selection_key(meta)) % len(ready)]


def loss_reason(status: WorkspaceStatus, pods: RuntimePods) -> BoundReason | None:
    """Why the recorded binding no longer holds, or None while it does."""
    pod = pods.by_name.get(status.bound_pod)
    if pod is None:
        return BoundReason.BOUND_POD_DELETED
    if pod.metadata.uid != status.bound_pod_uid:
        return BoundReason.BOUND_POD_REPLACED
    if pod.metadata.deleting:
        return BoundReason.BOUND_POD_DELETING
    return None


def loss_message(reason: BoundReason, status: WorkspaceStatus) -> str:
    pod = f"pod {status.bound_pod!r} (uid {status.bound_pod_uid})"
    what = {
        BoundReason.BOUND_POD_DELETED: f"bound {pod} no longer exists",
        BoundReason.BOUND_POD_REPLACED: f"bound {pod} was replaced by a pod with another uid",
        BoundReason.BOUND_POD_DELETING: f"bound {pod} is being deleted",
    }[reason]
    return f"{what}; the workspace is lost and will not be rebound"
