"""Public Hypothesis strategies for pods, workspaces, Runs and cluster snapshots.

Everything generated is a state the world can be in: valid objects, uids
unique across the snapshot, timestamps timezone-aware UTC in whole seconds
(as the API server stores them). Statuses are drawn against the drawn pods,
so a workspace may be bound to a live pod, to a pod that was replaced (same
name, another uid) or to one that is gone; Runs may be placed on any of them.
Names come from small pools so that objects collide on purpose.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from hypothesis import strategies as st

from kruntimes_core.core.conditions import Condition, ConditionStatus
from kruntimes_core.core.meta import ObjectMeta
from kruntimes_core.resources.cluster import ClusterSnapshot
from kruntimes_core.resources.pod import (
    POD_RUNNING,
    RUNTIME_LABEL,
    RUNTIMED_READY,
    Pod,
    PodCondition,
    PodStatus,
)
from kruntimes_core.resources.run import Run, RunPhase, RunSpec, RunStatus, WorkspaceRef
from kruntimes_core.resources.runtime import Runtime
from kruntimes_core.resources.workspace import (
    FINALIZER,
    CleanupPolicy,
    PersistentWorkspace,
    WorkspacePhase,
    WorkspaceSpec,
    WorkspaceStatus,
    workspace_path,
)
from kruntimes_core.testing.workspace_world import FOREIGN_FINALIZER
from kruntimes_core.workspaces.usage import ACTIVE_RUNS, IN_USE, UNUSED

__all__ = [
    "BASE_TIME",
    "NAMESPACES",
    "POD_NAMES",
    "RUNTIMES",
    "WORKSPACE_NAMES",
    "cluster_snapshots",
    "moments",
    "pods",
    "runs",
    "runtimes",
    "workspaces",
]

BASE_TIME = datetime(2026, 1, 1, tzinfo=UTC)
NAMESPACES = ("default", "team-b")
RUNTIMES = ("rt-a", "rt-b")
POD_NAMES = ("pod-a", "pod-b", "pod-c")
WORKSPACE_NAMES = ("ws-a", "ws-b", "ws-c")

_HORIZON = 3 * 3600


def moments(max_seconds: int = _HORIZON) -> st.SearchStrategy[datetime]:
    """UTC instants in whole seconds from ``BASE_TIME`` on."""
    return st.integers(0, max_seconds).map(lambda s: BASE_TIME + timedelta(seconds=s))


def _uids(prefix: str) -> st.SearchStrategy[str]:
    return st.integers(0, 99_999).map(lambda n: f"{prefix}-{n}")


def _mostly_first(options: Sequence[str]) -> st.SearchStrategy[str]:
    """Half the draws pick the first option, so objects meet more often."""
    return st.sampled_from(options[:1]) | st.sampled_from(options)


def runtimes(
    namespaces: Sequence[str] = NAMESPACES, names: Sequence[str] = RUNTIMES
) -> st.SearchStrategy[Runtime]:
    return st.builds(
        lambda ns, name, uid: Runtime(ObjectMeta(name=name, namespace=ns, uid=uid)),
        _mostly_first(namespaces),
        _mostly_first(names),
        _uids("runtime-uid"),
    )


_POD_HEALTH = ("ready", "not-running", "not-ready", "runtimed-down", "unknown", "no-conditions")


@st.composite
def _pod_status(draw: st.DrawFn) -> PodStatus:
    """Ready about half the time; otherwise failing one readiness rule."""
    health = draw(_mostly_first(_POD_HEALTH))
    true, false = ConditionStatus.TRUE, ConditionStatus.FALSE
    phase = draw(st.sampled_from(("Pending", "Failed", ""))) if health == "not-running" else None
    ready = {"not-ready": false, "unknown": ConditionStatus.UNKNOWN}.get(health, true)
    runtimed = false if health == "runtimed-down" else true
    conditions = (
        []
        if health == "no-conditions"
        else [PodCondition("Ready", ready), PodCondition(RUNTIMED_READY, runtimed)]
    )
    return PodStatus(
        phase=phase if phase is not None else POD_RUNNING,
        conditions=tuple(draw(st.permutations(conditions))),
    )


@st.composite
def pods(
    draw: st.DrawFn,
    namespaces: Sequence[str] = NAMESPACES,
    runtime_names: Sequence[str] = RUNTIMES,
    names: Sequence[str] = POD_NAMES,
) -> Pod:
    """Runtime Pods: ready or failing one readiness rule, sometimes being deleted,
    sometimes without a ``runtime`` label."""
    deleting = draw(st.integers(0, 3)) == 0
    runtime = draw(_mostly_first((*runtime_names, "")))
    return Pod(
        ObjectMeta(
            name=draw(st.sampled_from(names)),
            namespace=draw(_mostly_first(namespaces)),
            uid=draw(_uids("pod-uid")),
            labels={RUNTIME_LABEL: runtime} if runtime else {},
            deletion_timestamp=draw(moments()) if deleting else None,
        ),
        draw(_pod_status()),
    )


@st.composite
def _binding(draw: st.DrawFn, namespace: str, candidates: Sequence[Pod]) -> tuple[str, str]:
    """``(boundPod, boundPodUID)``: a drawn pod, a stale uid, or a vanished pod."""
    local = [pod for pod in candidates if pod.metadata.namespace == namespace]
    choice = draw(st.sampled_from(("pod", "stale", "gone")) if local else st.just("gone"))
    if choice == "gone":
        return draw(st.sampled_from(POD_NAMES)), draw(_uids("pod-uid"))
    pod = draw(st.sampled_from(local))
    if choice == "stale":
        return pod.metadata.name, draw(_uids("old-pod-uid"))
    return pod.metadata.name, pod.metadata.uid


@st.composite
def _workspace_status(
    draw: st.DrawFn, name: str, namespace: str, runtime: str, candidates: Sequence[Pod]
) -> WorkspaceStatus:
    phase = draw(st.none() | st.sampled_from(WorkspacePhase))
    if phase in (None, WorkspacePhase.PENDING):
        return WorkspaceStatus(phase=phase)
    bound_pod, bound_uid = draw(_binding(namespace, candidates))
    last_used = draw(st.none() | moments())
    conditions: list[Condition] = []
    in_use = draw(st.sampled_from(("none", "active", "unused")))
    if in_use != "none":
        active = in_use == "active"
        conditions.append(
            Condition(
                type=IN_USE,
                status=ConditionStatus.TRUE if active else ConditionStatus.FALSE,
                reason=ACTIVE_RUNS if active else UNUSED,
                last_transition_time=draw(moments()),
            )
        )
    return WorkspaceStatus(
        phase=phase,
        runtime=runtime,
        bound_pod=bound_pod,
        bound_pod_uid=bound_uid,
        path=workspace_path(name),
        last_used_time=last_used,
        conditions=tuple(conditions),
    )


@st.composite
def workspaces(
    draw: st.DrawFn,
    pods: Sequence[Pod] = (),
    namespaces: Sequence[str] = NAMESPACES,
    runtime_names: Sequence[str] = RUNTIMES,
    names: Sequence[str] = WORKSPACE_NAMES,
) -> PersistentWorkspace:
    """PersistentWorkspaces in any phase; bindings refer to ``pods`` when given."""
    namespace = draw(_mostly_first(namespaces))
    name = draw(st.sampled_from(names))
    runtime = draw(_mostly_first(runtime_names))
    status = draw(_workspace_status(name, namespace, runtime, pods))
    bound = status.phase in (WorkspacePhase.BOUND, WorkspacePhase.RELEASED)
    finalizers = [FINALIZER] if bound or draw(st.booleans()) else []
    if draw(st.booleans()):
        finalizers.append(FOREIGN_FINALIZER)
    deleting = status.phase is WorkspacePhase.RELEASED or draw(st.booleans())
    return PersistentWorkspace(
        metadata=ObjectMeta(
            name=name,
            namespace=namespace,
            uid=draw(_uids("ws-uid")),
            finalizers=tuple(draw(st.permutations(finalizers))),
            deletion_timestamp=draw(moments()) if deleting and finalizers else None,
            generation=draw(st.integers(1, 3)),
            resource_version=str(draw(st.integers(1, 999))),
        ),
        spec=WorkspaceSpec(
            runtime=runtime,
            ttl_seconds_after_unused=draw(st.none() | st.integers(0, 3600)),
            cleanup_policy=draw(st.sampled_from(CleanupPolicy)),
        ),
        status=status,
    )


@st.composite
def runs(
    draw: st.DrawFn,
    pods: Sequence[Pod] = (),
    namespaces: Sequence[str] = NAMESPACES,
    runtime_names: Sequence[str] = RUNTIMES,
    workspace_names: Sequence[str] = WORKSPACE_NAMES,
) -> Run:
    """Runs in any phase, naming a workspace or none, placed on ``pods`` or not."""
    namespace = draw(_mostly_first(namespaces))
    phase = draw(st.sampled_from(RunPhase))
    assigned_pod, assigned_uid = "", ""
    if phase is not RunPhase.PENDING and draw(st.booleans()):
        assigned_pod, assigned_uid = draw(_binding(namespace, pods))
    workspace = draw(st.none() | st.sampled_from(workspace_names))
    uid = draw(_uids("run-uid"))
    return Run(
        metadata=ObjectMeta(
            name=f"run-{uid.rpartition('-')[2]}",
            namespace=namespace,
            uid=uid,
            creation_timestamp=draw(moments()),
        ),
        spec=RunSpec(
            runtime=draw(_mostly_first(runtime_names)),
            workspace=WorkspaceRef(workspace) if workspace else None,
        ),
        status=RunStatus(phase=phase, assigned_pod=assigned_pod, assigned_pod_uid=assigned_uid),
    )


@st.composite
def cluster_snapshots(
    draw: st.DrawFn,
    *,
    unique_names: bool = True,
    max_pods: int = 6,
    max_workspaces: int = 6,
    max_runs: int = 10,
) -> ClusterSnapshot:
    """Whole snapshots; uids are always unique (as Kubernetes guarantees).

    With ``unique_names`` (the default) no two objects of one kind share a
    namespace and name, as in any consistent read of a cluster; without it a
    snapshot may hold an object and its replacement (same name, other uid),
    as a sloppy merge of two reads would.
    """

    def identity(obj: Runtime | Pod | PersistentWorkspace | Run) -> tuple[str, ...]:
        meta = obj.metadata
        return (meta.namespace, meta.name) if unique_names else (meta.uid,)

    runtime_list = draw(st.lists(runtimes(), max_size=4, unique_by=(identity, _uid)))
    pod_list = draw(st.lists(pods(), max_size=max_pods, unique_by=(identity, _uid)))
    workspace_list = draw(
        st.lists(workspaces(pod_list), max_size=max_workspaces, unique_by=(identity, _uid))
    )
    run_list = draw(st.lists(runs(pod_list), max_size=max_runs, unique_by=(identity, _uid)))
    return ClusterSnapshot(
        runtimes=tuple(runtime_list),
        pods=tuple(pod_list),
        workspaces=tuple(workspace_list),
        runs=tuple(run_list),
    )


def _uid(obj: Runtime | Pod | PersistentWorkspace | Run) -> str:
    return obj.metadata.uid
