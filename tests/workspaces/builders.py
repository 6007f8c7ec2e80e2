"""Builders for workspace tests: objects as literal attrs values, and ``apply``.

Every builder returns a valid, frozen object with Kubernetes' zero values for
whatever the test does not name. ``apply`` plays the API server: it applies a
Decision's actions to a workspace the way Kubernetes would.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta

from attrs import evolve

from kruntimes_core.core.actions import (
    Action,
    AddFinalizer,
    DeleteObject,
    DeleteWorkspaceDirectory,
    ObjectRef,
    PatchStatus,
    RemoveFinalizer,
)
from kruntimes_core.core.conditions import Condition, ConditionStatus, find_condition
from kruntimes_core.core.decision import Decision
from kruntimes_core.core.meta import ObjectMeta
from kruntimes_core.resources.pod import RUNTIME_LABEL, RUNTIMED_READY, Pod, PodCondition, PodStatus
from kruntimes_core.resources.run import Run, RunPhase, RunSpec, RunStatus, WorkspaceRef
from kruntimes_core.resources.runtime import Runtime, RuntimeCapacity, RuntimeSpec
from kruntimes_core.resources.workspace import (
    FINALIZER,
    CleanupPolicy,
    PersistentWorkspace,
    WorkspaceSpec,
    WorkspaceStatus,
)
from kruntimes_core.workspaces.controller import decide_workspace
from kruntimes_core.workspaces.pods import RuntimePods

NAMESPACE = "default"
RUNTIME = "bash"

T0 = datetime(2026, 7, 6, 12, 0, 0, tzinfo=UTC)
"""A whole-second instant every scenario starts from."""

DELETION_TIME = datetime(2026, 7, 1, 0, 0, 0, tzinfo=UTC)
"""The deletionTimestamp ``apply`` writes for a DeleteObject action."""


def at(seconds: float) -> datetime:
    """``T0`` plus ``seconds`` (fractions allowed)."""
    return T0 + timedelta(seconds=seconds)


# --------------------------------------------------------------------------- objects


def pod(
    name: str,
    *,
    uid: str | None = None,
    ready: bool = True,
    deleting: bool = False,
    runtime: str = RUNTIME,
    namespace: str = NAMESPACE,
    phase: str = "Running",
    pod_ready: bool | None = None,
    runtimed_ready: bool | None = None,
) -> Pod:
    """A Runtime Pod; ``ready`` sets both readiness conditions unless overridden."""

    def flag(value: bool | None) -> ConditionStatus:
        chosen = ready if value is None else value
        return ConditionStatus.TRUE if chosen else ConditionStatus.FALSE

    return Pod(
        metadata=ObjectMeta(
            name=name,
            namespace=namespace,
            uid=f"uid-{name}" if uid is None else uid,
            labels={RUNTIME_LABEL: runtime} if runtime else {},
            deletion_timestamp=DELETION_TIME if deleting else None,
        ),
        status=PodStatus(
            phase=phase,
            conditions=(
                PodCondition("Ready", flag(pod_ready)),
                PodCondition(RUNTIMED_READY, flag(runtimed_ready)),
            ),
        ),
    )


def runtime(name: str = RUNTIME, *, namespace: str = NAMESPACE, runs: int | None = None) -> Runtime:
    resources = {} if runs is None else {"runs": runs}
    return Runtime(
        metadata=ObjectMeta(name=name, namespace=namespace, uid=f"uid-runtime-{name}"),
        spec=RuntimeSpec(capacity=RuntimeCapacity(resources=resources)),
    )


def workspace(
    name: str = "data",
    *,
    uid: str | None = None,
    namespace: str = NAMESPACE,
    runtime: str = RUNTIME,
    ttl: int | None = None,
    policy: CleanupPolicy = CleanupPolicy.DELETE_AFTER_TTL,
    status: WorkspaceStatus | None = None,
    finalizer: bool = False,
    deleting: bool = False,
    generation: int = 1,
) -> PersistentWorkspace:
    return PersistentWorkspace(
        metadata=ObjectMeta(
            name=name,
            namespace=namespace,
            uid=f"uid-ws-{name}" if uid is None else uid,
            finalizers=(FINALIZER,) if finalizer else (),
            deletion_timestamp=DELETION_TIME if deleting else None,
            generation=generation,
            resource_version="1",
        ),
        spec=WorkspaceSpec(
            runtime=runtime,
            ttl_seconds_after_unused=ttl,
            cleanup_policy=policy,
        ),
        status=WorkspaceStatus() if status is None else status,
    )


def run(
    name: str,
    *,
    workspace: str | None = "data",
    namespace: str = NAMESPACE,
    runtime: str = RUNTIME,
    phase: RunPhase = RunPhase.RUNNING,
    assigned_pod: str = "",
    assigned_pod_uid: str = "",
) -> Run:
    return Run(
        metadata=ObjectMeta(name=name, namespace=namespace, uid=f"uid-run-{name}"),
        spec=RunSpec(
            runtime=runtime,
            workspace=None if workspace is None else WorkspaceRef(name=workspace),
        ),
        status=RunStatus(phase=phase, assigned_pod=assigned_pod, assigned_pod_uid=assigned_pod_uid),
    )


def placed_run(
    name: str, on: Pod, *, workspace: str | None = "data", phase: RunPhase = RunPhase.RUNNING
) -> Run:
    """A Run scheduled on ``on`` (same namespace)."""
    return run(
        name,
        workspace=workspace,
        namespace=on.metadata.namespace,
        phase=phase,
        assigned_pod=on.metadata.name,
        assigned_pod_uid=on.metadata.uid,
    )


def runtime_pods(*pods: Pod, present: bool = True, name: str = RUNTIME) -> RuntimePods:
    """The index ``decide_workspace`` takes; ``present=False``: the Runtime is missing."""
    return RuntimePods.index(runtime(name) if present else None, pods)


# --------------------------------------------------------------------------- reading


def condition(ws: PersistentWorkspace | WorkspaceStatus, type_: str) -> Condition:
    status = ws.status if isinstance(ws, PersistentWorkspace) else ws
    found = find_condition(status.conditions, type_)
    assert found is not None, f"condition {type_} missing in {status.conditions}"
    return found


def action_types(decision: Decision[WorkspaceStatus] | Decision[None]) -> list[type[Action]]:
    return [type(action) for action in decision.actions]


def patched_status(decision: Decision[WorkspaceStatus]) -> WorkspaceStatus:
    """The status of the (single) PatchStatus action."""
    patches = [a for a in decision.actions if isinstance(a, PatchStatus)]
    assert len(patches) == 1, f"expected one PatchStatus, got {decision.actions}"
    status = patches[0].status
    assert isinstance(status, WorkspaceStatus)
    return status


# --------------------------------------------------------------------------- the API server


def _check_target(ws: PersistentWorkspace, target: ObjectRef) -> None:
    expected = ObjectRef.to(ws.API_VERSION, ws.KIND, ws.metadata)
    assert target == expected, f"action aimed at {target}, workspace is {expected}"


class Conflict(AssertionError):
    """409: a status patch carried a resourceVersion the object no longer has."""


def apply(
    ws: PersistentWorkspace,
    decision: Decision[WorkspaceStatus] | Decision[None],
    *,
    check_resource_version: bool = False,
) -> PersistentWorkspace | None:
    """Apply ``decision``'s actions to ``ws``, in order, as Kubernetes would.

    Returns the object afterwards, or None once it is gone (deleted with no
    finalizer left). Every write moves ``metadata.resourceVersion`` on. With
    ``check_resource_version`` a PatchStatus whose resourceVersion is not the
    version the decision observed (carried forward through the decision's
    own earlier writes, as core/actions.py tells appliers to) raises Conflict,
    as the status subresource would. Actions aimed at other objects (a
    directory on a pod) are not the API server's business and are skipped.
    """
    current: PersistentWorkspace | None = ws
    observed = ws.metadata.resource_version
    for action in decision.actions:
        if isinstance(action, DeleteWorkspaceDirectory):
            continue
        assert current is not None, f"{action} applied to an object that is already gone"
        _check_target(current, action.target)
        applied = action
        if isinstance(action, PatchStatus) and action.resource_version == observed:
            # Our own writes moved the version on; the precondition carries forward.
            applied = evolve(action, resource_version=current.metadata.resource_version)
        current = _apply_one(current, applied, check_resource_version=check_resource_version)
    return current


def _apply_one(
    ws: PersistentWorkspace, action: Action, *, check_resource_version: bool
) -> PersistentWorkspace | None:
    meta = ws.metadata
    if isinstance(action, AddFinalizer):
        assert not meta.deleting, "Kubernetes forbids new finalizers on a deleting object"
        if action.finalizer in meta.finalizers:
            return ws
        return _write(ws, metadata=evolve(meta, finalizers=(*meta.finalizers, action.finalizer)))
    if isinstance(action, RemoveFinalizer):
        remaining = tuple(f for f in meta.finalizers if f != action.finalizer)
        if meta.deleting and not remaining:
            return None
        return _write(ws, metadata=evolve(meta, finalizers=remaining))
    if isinstance(action, PatchStatus):
        stale = action.resource_version and action.resource_version != meta.resource_version
        if check_resource_version and stale:
            raise Conflict(
                f"status patch at resourceVersion {action.resource_version!r}, "
                f"object is at {meta.resource_version!r}"
            )
        assert isinstance(action.status, WorkspaceStatus)
        return _write(ws, status=action.status)
    if isinstance(action, DeleteObject):
        if not meta.finalizers:
            return None
        if meta.deleting:
            return ws
        return _write(ws, metadata=evolve(meta, deletion_timestamp=DELETION_TIME))
    raise AssertionError(f"unexpected action {action!r}")


def _write(
    ws: PersistentWorkspace,
    *,
    metadata: ObjectMeta | None = None,
    status: WorkspaceStatus | None = None,
) -> PersistentWorkspace:
    """A write: the resourceVersion moves on, as on the API server."""
    meta = ws.metadata if metadata is None else metadata
    meta = evolve(meta, resource_version=str(int(meta.resource_version or "0") + 1))
    return evolve(ws, metadata=meta, status=ws.status if status is None else status)


# --------------------------------------------------------------------------- flows


def reconcile(
    ws: PersistentWorkspace, pods: RuntimePods, runs: Sequence[Run], now: datetime
) -> tuple[PersistentWorkspace | None, Decision[WorkspaceStatus]]:
    """Decide, then apply: one controller pass."""
    decision = decide_workspace(ws, pods, runs, now)
    return apply(ws, decision), decision


def settle(
    ws: PersistentWorkspace, pods: RuntimePods, runs: Sequence[Run], now: datetime
) -> PersistentWorkspace:
    """One controller pass that must leave the object in place."""
    after, _ = reconcile(ws, pods, runs, now)
    assert after is not None
    return after


def bound_workspace(
    on: Pod,
    *,
    name: str = "data",
    ttl: int | None = None,
    policy: CleanupPolicy = CleanupPolicy.DELETE_AFTER_TTL,
    now: datetime = T0,
    others: Iterable[Pod] = (),
) -> PersistentWorkspace:
    """A workspace of ``on``'s Runtime, bound to it by the controller at ``now``.

    Idle (no Runs), finalizer on.
    """
    rt = on.runtime or RUNTIME
    ws = workspace(name, ttl=ttl, policy=policy, namespace=on.metadata.namespace, runtime=rt)
    ws = settle(ws, runtime_pods(on, *others, name=rt), (), now)
    assert ws.status.bound_pod == on.metadata.name, "builder bound to an unexpected pod"
    assert ws.metadata.has_finalizer(FINALIZER)
    return ws


def with_deletion(ws: PersistentWorkspace) -> PersistentWorkspace:
    """``kubectl delete``: deletionTimestamp set (finalizers keep the object)."""
    assert ws.metadata.finalizers, "an object without finalizers would be gone"
    return evolve(ws, metadata=evolve(ws.metadata, deletion_timestamp=DELETION_TIME))


def without_finalizer(ws: PersistentWorkspace) -> PersistentWorkspace:
    return evolve(ws, metadata=evolve(ws.metadata, finalizers=()))
