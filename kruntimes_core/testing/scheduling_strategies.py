"""Hypothesis strategies for clusters that exercise placement (spec workspaces.md 4).

:func:`scheduling_snapshots` draws small clusters where the placement rules
meet on purpose: one or two namespaces and Runtimes, up to a dozen pods
(ready or failing one readiness rule, with or without a capacity annotation
and a ``zone`` label from a three-letter alphabet), placed Runs (live,
terminal, on a replaced or vanished pod, some carrying required
anti-affinity), workspaces in every phase, and Pending Runs with labels and
affinity terms drawn from alphabets small enough that selectors match often
(sometimes a missing or an empty selector). Creation timestamps are drawn
from a short window, so some are equal and the name breaks the tie.

:func:`cluster_changes` draws one change to such a cluster (a pod, a
workspace or a Run created, updated or deleted) as the ``before``/``after``
pair a requeue function receives, with the snapshot after the change.

Every object is valid, uids are unique across the snapshot and no two
objects of one kind share a namespace and name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import TypeVar

from attrs import evolve, frozen
from hypothesis import strategies as st

from kruntimes_core.core.conditions import ConditionStatus
from kruntimes_core.core.meta import ObjectMeta
from kruntimes_core.core.selectors import (
    LabelSelector,
    LabelSelectorRequirement,
    SelectorOperator,
    matches,
)
from kruntimes_core.resources.affinity import (
    RUNTIME_POD_TOPOLOGY,
    Affinity,
    RunAffinityRules,
    RunAffinityTerm,
    WeightedRunAffinityTerm,
)
from kruntimes_core.resources.cluster import ClusterSnapshot
from kruntimes_core.resources.pod import (
    POD_RUNNING,
    RUNTIME_LABEL,
    RUNTIMED_READY,
    Pod,
    PodCondition,
    PodStatus,
)
from kruntimes_core.resources.run import (
    Run,
    RunPhase,
    RunResources,
    RunSpec,
    RunStatus,
    WorkspaceRef,
)
from kruntimes_core.resources.runtime import Runtime, RuntimeCapacity, RuntimeSpec
from kruntimes_core.resources.workspace import (
    PersistentWorkspace,
    WorkspacePhase,
    WorkspaceSpec,
    WorkspaceStatus,
    workspace_path,
)

__all__ = [
    "BASE_TIME",
    "CAPACITY_ANNOTATION",
    "LABEL_KEYS",
    "LABEL_VALUES",
    "NAMESPACES",
    "RUNTIMES",
    "TOPOLOGY_KEYS",
    "WORKSPACE_NAMES",
    "ZONES",
    "ZONE_KEY",
    "Changed",
    "ClusterChange",
    "affinities",
    "cluster_changes",
    "describe_cluster",
    "describe_object",
    "label_selectors",
    "run_labels",
    "scheduling_snapshots",
]

BASE_TIME = datetime(2026, 1, 1, tzinfo=UTC)
NAMESPACES = ("default", "team-b")
RUNTIMES = ("rt-a", "rt-b")
ZONE_KEY = "zone"
ZONES = ("z1", "z2", "z3")
TOPOLOGY_KEYS = (RUNTIME_POD_TOPOLOGY, ZONE_KEY)
LABEL_KEYS = ("app", "tier")
LABEL_VALUES = ("a", "b")
WORKSPACE_NAMES = ("ws-a", "ws-b", "ws-c")
CAPACITY_ANNOTATION = "kruntimes.io/capacity.runs"

_POD_NAMES = tuple(f"pod-{c}" for c in "abcdefghijklmnop")
_RUN_NAMES = tuple(f"run-{c}" for c in "abcdefghijklmnopqrstuvwxyz")
_WINDOW = 12  # seconds: creation timestamps collide now and then
_ACTIVE_PHASES = (RunPhase.SCHEDULED, RunPhase.RUNNING, RunPhase.READY, RunPhase.PENDING)
_TERMINAL_PHASES = (RunPhase.SUCCEEDED, RunPhase.FAILED, RunPhase.TIMEOUT, RunPhase.CANCELLED)

Changed = Pod | PersistentWorkspace | Run
T = TypeVar("T")


@frozen
class ClusterChange:
    """One object changed: ``before``/``after`` (None for a creation/deletion)."""

    before: Changed | None
    after: Changed | None
    snapshot: ClusterSnapshot
    """The cluster after the change."""
    kind: str
    """What happened, for Hypothesis' statistics (``pod: ready``, ...)."""


def _pick(draw: st.DrawFn, options: Sequence[T]) -> T:
    """One of ``options`` (a cached integer strategy: no new strategy per draw)."""
    return options[draw(st.integers(0, len(options) - 1))]


def _chance(draw: st.DrawFn, one_in: int) -> bool:
    """True about once in ``one_in`` draws (shrinks to False)."""
    return draw(st.integers(0, one_in - 1)) == one_in - 1


# -- labels, selectors, affinity ---------------------------------------------------------

run_labels: st.SearchStrategy[dict[str, str]] = st.dictionaries(
    st.sampled_from(LABEL_KEYS), st.sampled_from(LABEL_VALUES)
)
"""Run labels: at most two keys with two values each; collisions are the point."""


def _requirement(
    key: str, operator: SelectorOperator, values: Sequence[str]
) -> LabelSelectorRequirement:
    keep = operator in (SelectorOperator.IN, SelectorOperator.NOT_IN)
    return LabelSelectorRequirement(key, operator, tuple(values) if keep else ())


_requirements = st.builds(
    _requirement,
    st.sampled_from(LABEL_KEYS),
    st.sampled_from(SelectorOperator),
    st.lists(st.sampled_from(LABEL_VALUES), min_size=1, max_size=2),
)
_pairs = st.builds(
    lambda k, v: LabelSelector({k: v}), st.sampled_from(LABEL_KEYS), st.sampled_from(LABEL_VALUES)
)
_general = st.builds(
    LabelSelector,
    st.dictionaries(st.sampled_from(LABEL_KEYS), st.sampled_from(LABEL_VALUES), max_size=1),
    st.lists(_requirements, max_size=2).map(tuple),
)

label_selectors: st.SearchStrategy[LabelSelector | None] = st.one_of(
    _pairs, _pairs, _general, st.just(LabelSelector()), st.none()
)
"""Mostly one ``matchLabels`` pair; else expressions, empty (matches all) or None (none)."""

_terms = st.builds(RunAffinityTerm, st.sampled_from(TOPOLOGY_KEYS), label_selectors)
_weights = st.sampled_from((1, 7, 50, 100)) | st.integers(1, 100)
_weighted = st.builds(WeightedRunAffinityTerm, _weights, _terms)
_rules = st.builds(
    RunAffinityRules,
    st.lists(_terms, max_size=2).map(tuple),
    st.lists(_weighted, max_size=2).map(tuple),
)

affinities: st.SearchStrategy[Affinity] = st.just(Affinity()) | st.builds(Affinity, _rules, _rules)
"""No affinity about half the time; else up to two terms of each of the four kinds."""

_placed_affinities = st.one_of(
    st.just(Affinity()),
    st.builds(
        lambda terms: Affinity(run_anti_affinity=RunAffinityRules(required=tuple(terms))),
        st.lists(_terms, min_size=1, max_size=2),
    ),
    affinities,
)
"""Placed Runs: what matters is the required anti-affinity they carry (symmetry)."""


# -- pods ------------------------------------------------------------------------------

_HEALTH = ("ready", "not-running", "not-ready", "runtimed-down", "deleting")
_CAPACITIES = (None, "0", "1", "2", "3", "4", "many", "-1")


def _pod_status(health: str) -> PodStatus:
    true, false = ConditionStatus.TRUE, ConditionStatus.FALSE
    return PodStatus(
        phase="Pending" if health == "not-running" else POD_RUNNING,
        conditions=(
            PodCondition("Ready", false if health == "not-ready" else true),
            PodCondition(RUNTIMED_READY, false if health == "runtimed-down" else true),
        ),
    )


def _pod_labels(runtime: str, zone: str | None) -> dict[str, str]:
    labels = {RUNTIME_LABEL: runtime} if runtime else {}
    if zone is not None:
        labels[ZONE_KEY] = zone
    return labels


def _zone(draw: st.DrawFn) -> str | None:
    """The first zone half the time, so that pods often share one; sometimes none."""
    return ZONES[0] if draw(st.booleans()) else _pick(draw, (*ZONES, None))


def _capacity(draw: st.DrawFn) -> dict[str, str]:
    """A capacity annotation (absent half the time; sometimes not a number)."""
    value = None if draw(st.booleans()) else _pick(draw, _CAPACITIES)
    return {} if value is None else {CAPACITY_ANNOTATION: value}


def _pod(draw: st.DrawFn, namespace: str, name: str, uid: str, runtimes: Sequence[str]) -> Pod:
    health = "ready" if draw(st.booleans()) else _pick(draw, _HEALTH)
    runtime = _pick(draw, runtimes) if draw(st.booleans()) else _pick(draw, (*runtimes, ""))
    return Pod(
        ObjectMeta(
            name=name,
            namespace=namespace,
            uid=uid,
            labels=_pod_labels(runtime, _zone(draw)),
            annotations=_capacity(draw),
            deletion_timestamp=BASE_TIME if health == "deleting" else None,
        ),
        _pod_status(health),
    )


# -- workspaces -------------------------------------------------------------------------

_WS_PHASES = (None, *WorkspacePhase, WorkspacePhase.BOUND, WorkspacePhase.BOUND)


def _gone_pod(draw: st.DrawFn, local: Sequence[Pod]) -> str:
    """A pod name no pod of the namespace has (any more)."""
    names = {pod.metadata.name for pod in local}
    return _pick(draw, [name for name in _POD_NAMES if name not in names])


def _workspace_status(
    draw: st.DrawFn, name: str, namespace: str, runtime: str, pods: Sequence[Pod]
) -> WorkspaceStatus:
    phase = _pick(draw, _WS_PHASES)
    if phase in (None, WorkspacePhase.PENDING):
        return WorkspaceStatus(phase=phase)
    local = [pod for pod in pods if pod.metadata.namespace == namespace]
    binding = _pick(draw, ("live", "live", "live", "stale", "gone")) if local else "gone"
    if binding == "gone":
        bound_pod, bound_uid = _gone_pod(draw, local), "gone-uid"
    else:
        pod = _pick(draw, local)
        bound_pod = pod.metadata.name
        bound_uid = pod.metadata.uid if binding == "live" else f"old-{pod.metadata.uid}"
    return WorkspaceStatus(
        phase=phase,
        runtime=runtime,
        bound_pod=bound_pod,
        bound_pod_uid=bound_uid,
        path=workspace_path(name),
    )


def _workspace(
    draw: st.DrawFn,
    namespace: str,
    name: str,
    uid: str,
    runtimes: Sequence[str],
    pods: Sequence[Pod],
) -> PersistentWorkspace:
    runtime = _pick(draw, runtimes) if draw(st.booleans()) else _pick(draw, RUNTIMES)
    status = _workspace_status(draw, name, namespace, runtime, pods)
    return PersistentWorkspace(
        metadata=ObjectMeta(
            name=name,
            namespace=namespace,
            uid=uid,
            deletion_timestamp=BASE_TIME if _chance(draw, 5) else None,
        ),
        spec=WorkspaceSpec(runtime=runtime),
        status=status,
    )


# -- runs -------------------------------------------------------------------------------


def _meta(draw: st.DrawFn, namespace: str, name: str, uid: str) -> ObjectMeta:
    return ObjectMeta(
        name=name,
        namespace=namespace,
        uid=uid,
        labels=draw(run_labels),
        creation_timestamp=BASE_TIME + timedelta(seconds=draw(st.integers(0, _WINDOW))),
    )


def _requests(draw: st.DrawFn) -> RunResources:
    return RunResources({"runs": 2}) if _chance(draw, 4) else RunResources()


def _pending_run(
    draw: st.DrawFn,
    namespace: str,
    name: str,
    uid: str,
    runtimes: Sequence[str],
    placed: Sequence[Run] = (),
) -> Run:
    workspace = _pick(draw, WORKSPACE_NAMES) if _chance(draw, 4) else None
    affinity = draw(affinities)
    local = [run for run in placed if run.metadata.namespace == namespace]
    if local and _chance(draw, 3):
        affinity = _aimed_at(draw, affinity, _pick(draw, local))
    return Run(
        metadata=_meta(draw, namespace, name, uid),
        spec=RunSpec(
            runtime=_pick(draw, runtimes),
            workspace=WorkspaceRef(workspace) if workspace else None,
            resources=_requests(draw),
            affinity=affinity,
        ),
    )


def _aimed_at(draw: st.DrawFn, affinity: Affinity, target: Run) -> Affinity:
    """``affinity`` plus one required term whose selector is ``target``'s labels.

    Drawn selectors match a given Run only now and then; a term aimed at a
    placed Run (often on a pod of another Runtime, in a shared zone) makes
    the Run's decision hang on that Run's domain.
    """
    term = RunAffinityTerm(_pick(draw, TOPOLOGY_KEYS), LabelSelector(target.metadata.labels))
    if draw(st.booleans()):
        rules = affinity.run_affinity
        return evolve(affinity, run_affinity=evolve(rules, required=(*rules.required, term)))
    rules = affinity.run_anti_affinity
    return evolve(affinity, run_anti_affinity=evolve(rules, required=(*rules.required, term)))


def _assignment(draw: st.DrawFn, namespace: str, pods: Sequence[Pod]) -> tuple[str, str, str]:
    """``(assignedPod, assignedPodUID, runtime)``: a live pod, a replaced one, a gone one.

    The Runtime is the pod's, except now and then: a pod's labels may change
    after a Run was placed on it.
    """
    local = [pod for pod in pods if pod.metadata.namespace == namespace]
    how = _pick(draw, ("live", "live", "live", "live", "stale", "gone")) if local else "gone"
    if how == "gone":
        return _gone_pod(draw, local), "gone-uid", _pick(draw, RUNTIMES)
    pod = _pick(draw, local)
    uid = pod.metadata.uid if how == "live" else f"old-{pod.metadata.uid}"
    # Now and then the pod no longer carries the Run's Runtime (it was relabelled).
    relabelled = not pod.runtime or _chance(draw, 8)
    return pod.metadata.name, uid, _pick(draw, RUNTIMES) if relabelled else pod.runtime


def _placed_run(draw: st.DrawFn, namespace: str, name: str, uid: str, pods: Sequence[Pod]) -> Run:
    pod_name, pod_uid, runtime = _assignment(draw, namespace, pods)
    phase = _pick(draw, _TERMINAL_PHASES) if _chance(draw, 4) else _pick(draw, _ACTIVE_PHASES)
    return Run(
        metadata=_meta(draw, namespace, name, uid),
        spec=RunSpec(runtime=runtime, resources=_requests(draw), affinity=draw(_placed_affinities)),
        status=RunStatus(phase=phase, assigned_pod=pod_name, assigned_pod_uid=pod_uid),
    )


# -- whole snapshots --------------------------------------------------------------------


class _Names:
    """Fresh names per (kind, namespace) from a pool, and uids unique overall."""

    def __init__(self, draw: st.DrawFn, snapshot: ClusterSnapshot | None = None) -> None:
        self.draw = draw
        taken: list[Changed] = []
        if snapshot is not None:
            taken = [*snapshot.pods, *snapshot.workspaces, *snapshot.runs]
        self.taken = {(type(obj).__name__, *obj.metadata.key) for obj in taken}
        self.uids = {obj.metadata.uid for obj in taken}

    def name(self, kind: str, namespace: str, pool: Sequence[str]) -> str | None:
        free = [n for n in pool if (kind, namespace, n) not in self.taken]
        if not free:
            return None
        chosen = _pick(self.draw, free)
        self.taken.add((kind, namespace, chosen))
        return chosen

    def uid(self, prefix: str) -> str:
        number = len(self.uids)
        while f"{prefix}-{number}" in self.uids:
            number += 1
        self.uids.add(f"{prefix}-{number}")
        return f"{prefix}-{number}"


def _runtime(namespace: str, name: str, slots: int | None) -> Runtime:
    resources = {} if slots is None else {"runs": slots}
    return Runtime(
        ObjectMeta(name=name, namespace=namespace, uid=f"runtime-{namespace}-{name}"),
        RuntimeSpec(capacity=RuntimeCapacity(resources)),
    )


def _subset(draw: st.DrawFn, options: tuple[str, ...]) -> list[str]:
    """One or all of ``options`` (two of them here), the first most often."""
    return list(options) if draw(st.booleans()) else [_pick(draw, options[:1] * 2 + options[1:])]


@st.composite
def scheduling_snapshots(
    draw: st.DrawFn,
    *,
    max_pods: int = 12,
    max_placed: int = 8,
    max_pending: int = 8,
    max_workspaces: int = 4,
) -> ClusterSnapshot:
    """Small clusters where capacity, the workspace filter and affinity all bite."""
    namespaces = _subset(draw, NAMESPACES)
    runtimes = _subset(draw, RUNTIMES)
    names = _Names(draw)
    runtime_objects = [
        _runtime(ns, name, _pick(draw, (None, None, 0, 1, 2, 3)))
        for ns in namespaces
        for name in runtimes
        if not _chance(draw, 5)  # a Runtime object is sometimes missing
    ]

    def some(kind: str, pool: Sequence[str], low: int, high: int) -> list[tuple[str, str]]:
        found = []
        for _ in range(draw(st.integers(low, high))):
            namespace = _pick(draw, namespaces)
            name = names.name(kind, namespace, pool)
            if name is not None:
                found.append((namespace, name))
        return found

    pods = [
        _pod(draw, ns, name, names.uid("pod-uid"), runtimes)
        for ns, name in some("Pod", _POD_NAMES, 1, max_pods)
    ]
    workspaces = [
        _workspace(draw, ns, name, names.uid("ws-uid"), runtimes, pods)
        for ns, name in some("PersistentWorkspace", WORKSPACE_NAMES, 0, max_workspaces)
    ]
    placed = [
        _placed_run(draw, ns, name, names.uid("run-uid"), pods)
        for ns, name in some("Run", _RUN_NAMES, 0, max_placed)
    ]
    # Sometimes only one Runtime has Pending Runs: the others' pods then host
    # Runs that Pending Runs see only through affinity.
    pending_runtimes = _subset(draw, tuple(runtimes))
    pending = [
        _pending_run(draw, ns, name, names.uid("run-uid"), pending_runtimes, placed)
        for ns, name in some("Run", _RUN_NAMES, 1, max_pending)
    ]
    runs = placed + pending
    order = draw(st.permutations(range(len(runs))))
    return ClusterSnapshot(
        runtimes=tuple(runtime_objects),
        pods=tuple(pods),
        workspaces=tuple(workspaces),
        runs=tuple(runs[i] for i in order),
    )


# -- one change -------------------------------------------------------------------------


def _replace(items: Sequence[T], old: T, new: T | None) -> tuple[T, ...]:
    """``items`` with ``old`` replaced by ``new`` in place (dropped when None)."""
    kept = (item for item in items if item is not old or new is not None)
    return tuple(new if item is old and new is not None else item for item in kept)


def _namespaces(snapshot: ClusterSnapshot) -> list[str]:
    found = {
        obj.metadata.namespace
        for group in (snapshot.runtimes, snapshot.pods, snapshot.workspaces, snapshot.runs)
        for obj in group
    }
    return sorted(found) or [NAMESPACES[0]]


def _runtime_names(snapshot: ClusterSnapshot) -> list[str]:
    found = {rt.metadata.name for rt in snapshot.runtimes}
    found |= {run.spec.runtime for run in snapshot.runs}
    return sorted(found) or [RUNTIMES[0]]


_HOST_CHANGES = ("zone", "zone", "deleted", "replaced", "runtime")
_POD_CHANGES = (
    "created",
    "ready",
    "zone",
    "runtime",
    "capacity",
    "deleting",
    "deleted",
    "replaced",
)


def _hosts_a_run(pod: Pod, runs: Sequence[Run]) -> bool:
    return any(
        run.metadata.namespace == pod.metadata.namespace
        and run.status.assigned_pod == pod.metadata.name
        and not run.status.phase.terminal
        for run in runs
    )


def _watched(pod: Pod, runs: Sequence[Run]) -> bool:
    """Whether a Pending Run of another Runtime has a term matching a Run on ``pod``.

    Such a Run's decision hangs on ``pod``'s labels and existence although the
    pod is no candidate of it.
    """
    ns = pod.metadata.namespace
    hosted = [
        run
        for run in runs
        if run.metadata.namespace == ns
        and run.status.assigned_pod == pod.metadata.name
        and run.status.assigned_pod_uid == pod.metadata.uid
        and not run.status.phase.terminal
    ]
    for run in runs:
        if (
            run.metadata.namespace != ns
            or run.status.phase is not RunPhase.PENDING
            or run.status.assigned_pod
            or run.spec.runtime == pod.runtime
        ):
            continue
        rules = run.spec.affinity
        terms = [
            *rules.run_affinity.required,
            *rules.run_anti_affinity.required,
            *(w.run_affinity_term for w in rules.run_affinity.preferred),
            *(w.run_affinity_term for w in rules.run_anti_affinity.preferred),
        ]
        for other in hosted:
            theirs = other.spec.affinity.run_anti_affinity.required
            if any(matches(t.label_selector, other.metadata.labels) for t in terms) or any(
                matches(t.label_selector, run.metadata.labels) for t in theirs
            ):
                return True
    return False


def _pod_change(draw: st.DrawFn, snapshot: ClusterSnapshot) -> ClusterChange:
    names = _Names(draw, snapshot)
    # Half the time a pod some active Run is on, changed in a way that moves the
    # Runs' topology domains: every Pending Run of the namespace may see them,
    # whatever its Runtime (pods watched from another Runtime first).
    hosts = [pod for pod in snapshot.pods if _hosts_a_run(pod, snapshot.runs)]
    hosts = [pod for pod in hosts if _watched(pod, snapshot.runs)] or hosts
    old: Pod | None
    if len(hosts) > 0 and draw(st.booleans()):
        what, old = _pick(draw, _HOST_CHANGES), _pick(draw, hosts)
    else:
        what = _pick(draw, _POD_CHANGES) if snapshot.pods else "created"
        old = _pick(draw, snapshot.pods) if what != "created" else None
    if old is None:
        namespace = _pick(draw, _namespaces(snapshot))
        name = names.name("Pod", namespace, _POD_NAMES)
        assert name is not None  # the pool is larger than any snapshot's pods
        pod = _pod(draw, namespace, name, names.uid("pod-uid"), _runtime_names(snapshot))
        pods = (*snapshot.pods, pod)
        return ClusterChange(None, pod, evolve(snapshot, pods=pods), "pod: created")
    meta = old.metadata
    new: Pod | None
    if what == "ready":
        new = evolve(old, status=_pod_status(_pick(draw, _HEALTH[:4])))
    elif what == "zone":
        new = evolve(old, metadata=evolve(meta, labels=_pod_labels(old.runtime, _zone(draw))))
    elif what == "runtime":
        runtime = _pick(draw, (*_runtime_names(snapshot), ""))
        labels = _pod_labels(runtime, meta.labels.get(ZONE_KEY))
        new = evolve(old, metadata=evolve(meta, labels=labels))
    elif what == "capacity":
        new = evolve(old, metadata=evolve(meta, annotations=_capacity(draw)))
    elif what == "deleting":
        new = evolve(old, metadata=evolve(meta, deletion_timestamp=BASE_TIME))
    elif what == "replaced":
        new = evolve(old, metadata=evolve(meta, uid=names.uid("pod-uid")))
    else:
        new = None
    pods = _replace(snapshot.pods, old, new)
    return ClusterChange(old, new, evolve(snapshot, pods=pods), f"pod: {what}")


def _workspace_change(draw: st.DrawFn, snapshot: ClusterSnapshot) -> ClusterChange:
    names = _Names(draw, snapshot)
    what = _pick(draw, ("created", "status", "status", "deleting", "deleted"))
    if not snapshot.workspaces or what == "created":
        namespace = _pick(draw, _namespaces(snapshot))
        name = names.name("PersistentWorkspace", namespace, WORKSPACE_NAMES)
        if name is not None:
            runtimes = _runtime_names(snapshot)
            uid = names.uid("ws-uid")
            workspace = _workspace(draw, namespace, name, uid, runtimes, snapshot.pods)
            workspaces = (*snapshot.workspaces, workspace)
            change = evolve(snapshot, workspaces=workspaces)
            return ClusterChange(None, workspace, change, "workspace: created")
        what = "status"
    old = _pick(draw, snapshot.workspaces)
    meta = old.metadata
    new: PersistentWorkspace | None
    if what == "status":
        status = _workspace_status(draw, meta.name, meta.namespace, old.spec.runtime, snapshot.pods)
        new = evolve(old, status=status)
    elif what == "deleting":
        new = evolve(old, metadata=evolve(meta, deletion_timestamp=BASE_TIME))
    else:
        new = None
    workspaces = _replace(snapshot.workspaces, old, new)
    return ClusterChange(old, new, evolve(snapshot, workspaces=workspaces), f"workspace: {what}")


def _run_change(draw: st.DrawFn, snapshot: ClusterSnapshot) -> ClusterChange:
    names = _Names(draw, snapshot)
    what = _pick(draw, ("created", "finished", "placed", "labels", "deleted"))
    if what == "created" or not snapshot.runs:
        namespace = _pick(draw, _namespaces(snapshot))
        name = names.name("Run", namespace, _RUN_NAMES)
        assert name is not None  # the pool is larger than any snapshot's Runs
        uid = names.uid("run-uid")
        if draw(st.booleans()):
            runtimes = _runtime_names(snapshot)
            run = _pending_run(draw, namespace, name, uid, runtimes, snapshot.runs)
        else:
            run = _placed_run(draw, namespace, name, uid, snapshot.pods)
        return ClusterChange(
            None, run, evolve(snapshot, runs=(*snapshot.runs, run)), "run: created"
        )
    # Finishing or deleting a Run that holds a slot frees it: prefer those.
    holding = [run for run in snapshot.runs if run.status.assigned_pod and run.active]
    frees = what in ("finished", "deleted") and len(holding) > 0 and draw(st.booleans())
    old = _pick(draw, holding if frees else snapshot.runs)
    new: Run | None
    if what == "finished":
        new = evolve(old, status=evolve(old.status, phase=_pick(draw, _TERMINAL_PHASES)))
    elif what == "placed":
        same_runtime = [pod for pod in snapshot.pods if pod.runtime == old.spec.runtime]
        pod_name, pod_uid, _ = _assignment(draw, old.metadata.namespace, same_runtime)
        new = evolve(old, status=RunStatus(RunPhase.SCHEDULED, pod_name, pod_uid))
    elif what == "labels":
        new = evolve(old, metadata=evolve(old.metadata, labels=draw(run_labels)))
    else:
        new = None
    runs = _replace(snapshot.runs, old, new)
    return ClusterChange(old, new, evolve(snapshot, runs=runs), f"run: {what}")


@st.composite
def cluster_changes(draw: st.DrawFn, snapshot: ClusterSnapshot) -> ClusterChange:
    """One change to ``snapshot``: to a pod, a workspace or a Run."""
    makers: tuple[Callable[[st.DrawFn, ClusterSnapshot], ClusterChange], ...] = (
        _pod_change,
        _workspace_change,
        _run_change,
    )
    return _pick(draw, makers)(draw, snapshot)


# -- reading a counterexample -----------------------------------------------------------


def _selector_text(selector: LabelSelector | None) -> str:
    if selector is None:
        return "None"
    parts = [f"{k}={v}" for k, v in selector.match_labels.items()]
    parts += [
        f"{r.key} {r.operator.value} {','.join(r.values)}".rstrip()
        for r in selector.match_expressions
    ]
    return "{" + ", ".join(parts) + "}"


def _term_text(term: RunAffinityTerm) -> str:
    key = "pod" if term.topology_key == RUNTIME_POD_TOPOLOGY else term.topology_key
    return f"{key}:{_selector_text(term.label_selector)}"


def _rules_text(name: str, rules: RunAffinityRules) -> str:
    parts = [f"req {_term_text(t)}" for t in rules.required]
    parts += [f"pref {w.weight} {_term_text(w.run_affinity_term)}" for w in rules.preferred]
    return f" {name}[{'; '.join(parts)}]" if parts else ""


def _labels_text(labels: Mapping[str, str]) -> str:
    return "{" + ",".join(f"{k}={v}" for k, v in sorted(labels.items())) + "}"


def describe_object(obj: Changed | Runtime | None) -> str:
    """One line per object, with only the fields placement reads."""
    if obj is None:
        return "-"
    where = f"{obj.metadata.namespace}/{obj.metadata.name}"
    deleting = " deleting" if obj.metadata.deletion_timestamp is not None else ""
    if isinstance(obj, Runtime):
        return f"runtime {where} runs={obj.spec.capacity.resources.get('runs', '-')}"
    if isinstance(obj, Pod):
        labels = dict(obj.metadata.labels)
        runtime, zone = labels.pop(RUNTIME_LABEL, "-"), labels.pop(ZONE_KEY, "-")
        state = "ready" if obj.ready else f"not-ready({obj.status.phase})"
        capacity = obj.metadata.annotations.get(CAPACITY_ANNOTATION, "-")
        return (
            f"pod {where} uid={obj.metadata.uid} runtime={runtime} zone={zone} {state}"
            f" capacity={capacity}{deleting}"
        )
    if isinstance(obj, PersistentWorkspace):
        ws = obj.status
        bound = f" -> {ws.bound_pod}/{ws.bound_pod_uid}" if ws.bound_pod else ""
        phase = ws.phase.value if ws.phase is not None else "no-phase"
        return f"workspace {where} runtime={obj.spec.runtime} {phase}{bound}{deleting}"
    status = obj.status
    on = f" on {status.assigned_pod}/{status.assigned_pod_uid}" if status.assigned_pod else ""
    created = obj.metadata.creation_timestamp
    age = "" if created is None else f" t+{int((created - BASE_TIME).total_seconds())}"
    workspace = f" ws={obj.workspace_name}" if obj.workspace_name else ""
    slots = f" runs={obj.slots}" if obj.slots != 1 else ""
    rules = obj.spec.affinity
    return (
        f"run {where} runtime={obj.spec.runtime} {status.phase.value}{on}{age}"
        f" labels={_labels_text(obj.metadata.labels)}{slots}{workspace}"
        f"{_rules_text('aff', rules.run_affinity)}{_rules_text('anti', rules.run_anti_affinity)}"
    )


def describe_cluster(snapshot: ClusterSnapshot) -> str:
    """The snapshot, one short line per object (for ``hypothesis.note``)."""
    objects: list[Changed | Runtime] = [
        *snapshot.runtimes,
        *snapshot.pods,
        *snapshot.workspaces,
        *snapshot.runs,
    ]
    return "\n".join(describe_object(obj) for obj in objects)
