"""Properties of batch placement (spec workspaces.md section 4).

Clusters come from ``scheduling_snapshots``: small alphabets of labels,
zones and selectors, so that capacity, the workspace filter, required and
preferred affinity and anti-affinity (with the first-Run rule and symmetry)
decide real outcomes. Four properties:

(a) ``decide_placements`` picks the same pod for every Pending Run as the
    brute-force oracle (``kruntimes_core.testing.scheduling_oracle``);
(b) the world after the batch breaks no required rule and no capacity,
    checked on that world directly, Run by Run in placement order;
(c) the result does not depend on the order of any input tuple;
(d) after a change (a few per cluster, each on its own), every Pending Run
    whose decision (pod or message) changed is among the Runs
    ``runs_to_requeue`` wakes.

Failures print the cluster one line per object (``describe_cluster``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from attrs import evolve
from hypothesis import event, given, note, settings
from hypothesis import strategies as st

from kruntimes_core.core.selectors import LabelSelector, matches
from kruntimes_core.resources.affinity import (
    RUNTIME_POD_TOPOLOGY,
    Affinity,
    RunAffinityRules,
    RunAffinityTerm,
)
from kruntimes_core.resources.cluster import ClusterSnapshot
from kruntimes_core.resources.pod import Pod
from kruntimes_core.resources.run import Run, RunPhase
from kruntimes_core.resources.workspace import PersistentWorkspace, WorkspacePhase
from kruntimes_core.scheduling.placement import RunPlacement, decide_placements
from kruntimes_core.scheduling.requeue import runs_to_requeue
from kruntimes_core.testing.scheduling_oracle import PodRef, RunKey, oracle_placements
from kruntimes_core.testing.scheduling_strategies import (
    CAPACITY_ANNOTATION,
    Changed,
    cluster_changes,
    describe_cluster,
    describe_object,
    scheduling_snapshots,
)

CHECKS = settings(max_examples=400, deadline=None)
snapshots = scheduling_snapshots()


def pod_ref(pod: Pod | None) -> PodRef | None:
    return None if pod is None else (pod.metadata.name, pod.metadata.uid)


def chosen(placements: Iterable[RunPlacement]) -> dict[RunKey, PodRef | None]:
    return {p.run.metadata.key: pod_ref(p.pod) for p in placements}


def record_events(placements: Sequence[RunPlacement]) -> None:
    placed = sum(p.pod is not None for p in placements)
    event(f"pending Runs placed: {min(placed, 3)}{'+' if placed >= 3 else ''}")
    event(f"pending Runs waiting: {min(len(placements) - placed, 3)}")
    for p in placements:
        rules = p.run.spec.affinity
        if p.pod is not None and (rules.run_affinity.required or rules.run_anti_affinity.required):
            event("a Run with required terms was placed")
        if p.pod is not None and p.run.workspace_name:
            event("a Run with a workspace was placed")
        for reason in ("affinity", "anti-affinity", "excluded", "slots", "workspace"):
            if reason in p.decision.message:
                event(f"waits: {reason}")


# -- (a) the oracle ---------------------------------------------------------------------


@CHECKS
@given(snapshots)
def test_placements_agree_with_the_oracle(snapshot: ClusterSnapshot) -> None:
    note(describe_cluster(snapshot))
    placements = decide_placements(snapshot)
    record_events(placements)
    expected = oracle_placements(snapshot)
    got = chosen(placements)
    assert got == expected
    assert list(got) == list(expected)  # the same placement order


# -- (b) the world after the batch ------------------------------------------------------


def domain(pod: Pod, key: str) -> str | None:
    return pod.metadata.name if key == RUNTIME_POD_TOPOLOGY else pod.metadata.labels.get(key)


def pod_slots(snapshot: ClusterSnapshot, pod: Pod) -> int:
    value = pod.metadata.annotations.get(CAPACITY_ANNOTATION, "")
    if value.isascii() and value.isdigit():
        return int(value)
    runtime = next(
        (
            rt
            for rt in snapshot.runtimes
            if rt.metadata.key == (pod.metadata.namespace, pod.runtime)
        ),
        None,
    )
    return 2 if runtime is None else runtime.spec.capacity.resources.get("runs", 2)


def on_pod(snapshot: ClusterSnapshot, run: Run) -> Pod | None:
    """The pod a placed Run is on: its ``assignedPod`` by name AND uid."""
    return next(
        (
            pod
            for pod in snapshot.pods
            if pod.metadata.key == (run.metadata.namespace, run.status.assigned_pod)
            and pod.metadata.uid == run.status.assigned_pod_uid
        ),
        None,
    )


def same_domain(a: Pod | None, b: Pod | None, key: str) -> bool:
    if a is None or b is None:
        return False
    where = domain(a, key)
    return where is not None and where == domain(b, key)


def holds_slots(run: Run) -> bool:
    return bool(run.status.assigned_pod) and not run.status.phase.terminal


def check_run(world: ClusterSnapshot, earlier: Sequence[Run], run: Run, pod: Pod) -> Iterable[str]:
    """What ``run``, just placed on ``pod``, breaks; ``earlier`` = Runs on pods before it."""
    ns = run.metadata.namespace
    if pod not in world.pods or pod.metadata.namespace != ns:
        yield "not a pod of the Run's namespace"
    if not pod.ready or pod.runtime != run.spec.runtime:
        yield "not a ready pod of the Run's Runtime"
    if run.workspace_name:
        workspace = next(
            (ws for ws in world.workspaces if ws.metadata.key == (ns, run.workspace_name)), None
        )
        if (
            workspace is None
            or workspace.status.phase is not WorkspacePhase.BOUND
            or workspace.metadata.deleting
            or workspace.spec.runtime != run.spec.runtime
            or (workspace.status.bound_pod, workspace.status.bound_pod_uid)
            != (pod.metadata.name, pod.metadata.uid)
        ):
            yield "not the workspace's bound pod"
    used = sum(
        other.slots
        for other in world.runs
        if holds_slots(other)
        and other.metadata.namespace == ns
        and other.status.assigned_pod == pod.metadata.name
    )
    if used > pod_slots(world, pod):
        yield f"pod over capacity: {used} > {pod_slots(world, pod)}"
    neighbours = [
        other
        for other in world.runs
        if holds_slots(other) and other.metadata.namespace == ns and other is not run
    ]
    for term in run.spec.affinity.run_anti_affinity.required:
        for other in neighbours:
            if matches(term.label_selector, other.metadata.labels) and same_domain(
                pod, on_pod(world, other), term.topology_key
            ):
                yield f"anti-affinity {term} broken by {other.metadata.name}"
    for other in neighbours:
        for term in other.spec.affinity.run_anti_affinity.required:
            if matches(term.label_selector, run.metadata.labels) and same_domain(
                pod, on_pod(world, other), term.topology_key
            ):
                yield f"{other.metadata.name}'s anti-affinity {term} broken"
    terms = run.spec.affinity.run_affinity.required
    before = [other for other in earlier if other.metadata.namespace == ns]
    if any(domain(pod, term.topology_key) is None for term in terms):
        yield "pod lacks a topology label of a required affinity term"
    unmet = [
        term
        for term in terms
        if not any(
            matches(term.label_selector, other.metadata.labels)
            and same_domain(pod, on_pod(world, other), term.topology_key)
            for other in before
        )
    ]
    if unmet:
        first_of_group = all(
            matches(term.label_selector, run.metadata.labels) for term in terms
        ) and not any(
            matches(term.label_selector, other.metadata.labels) and on_pod(world, other)
            for term in terms
            for other in before
        )
        if not first_of_group:
            yield f"required affinity {unmet[0]} unmet"


@CHECKS
@given(snapshots)
def test_placements_break_no_required_rule_or_capacity(snapshot: ClusterSnapshot) -> None:
    note(describe_cluster(snapshot))
    placements = decide_placements(snapshot)
    record_events(placements)
    scheduled = {
        p.run.metadata.key: evolve(p.run, status=p.decision.status or p.run.status)
        for p in placements
        if p.pod is not None
    }
    world = evolve(
        snapshot, runs=tuple(scheduled.get(run.metadata.key, run) for run in snapshot.runs)
    )
    earlier = [run for run in snapshot.runs if holds_slots(run)]
    for p in placements:
        if p.pod is None:
            continue
        run = scheduled[p.run.metadata.key]
        assert run.status.phase is RunPhase.SCHEDULED
        assert (run.status.assigned_pod, run.status.assigned_pod_uid) == pod_ref(p.pod)
        assert list(check_run(world, earlier, run, p.pod)) == [], run.metadata.name
        earlier.append(run)


# -- (c) input order --------------------------------------------------------------------


def _reorder_selector(selector: LabelSelector | None, data: st.DataObject) -> LabelSelector | None:
    if selector is None:
        return None
    expressions = tuple(data.draw(st.permutations(selector.match_expressions)))
    return evolve(selector, match_expressions=expressions)


def _reorder_term(term: RunAffinityTerm, data: st.DataObject) -> RunAffinityTerm:
    return evolve(term, label_selector=_reorder_selector(term.label_selector, data))


def _reorder_rules(rules: RunAffinityRules, data: st.DataObject) -> RunAffinityRules:
    required = [_reorder_term(term, data) for term in rules.required]
    preferred = [
        evolve(w, run_affinity_term=_reorder_term(w.run_affinity_term, data))
        for w in rules.preferred
    ]
    return RunAffinityRules(
        tuple(data.draw(st.permutations(required))),
        tuple(data.draw(st.permutations(preferred))),
    )


def reordered_run(run: Run, data: st.DataObject) -> Run:
    rules = run.spec.affinity
    affinity = Affinity(
        _reorder_rules(rules.run_affinity, data), _reorder_rules(rules.run_anti_affinity, data)
    )
    return evolve(run, spec=evolve(run.spec, affinity=affinity))


@CHECKS
@given(st.data(), snapshots)
def test_input_order_does_not_matter(data: st.DataObject, snapshot: ClusterSnapshot) -> None:
    note(describe_cluster(snapshot))
    expected = decide_placements(snapshot)
    shuffled = ClusterSnapshot(
        runtimes=tuple(data.draw(st.permutations(snapshot.runtimes))),
        pods=tuple(data.draw(st.permutations(snapshot.pods))),
        workspaces=tuple(data.draw(st.permutations(snapshot.workspaces))),
        runs=tuple(data.draw(st.permutations(snapshot.runs))),
    )
    assert decide_placements(shuffled) == expected
    # The tuples inside the Runs too: affinity terms and pod conditions.
    deeper = evolve(
        shuffled,
        runs=tuple(reordered_run(run, data) for run in shuffled.runs),
        pods=tuple(
            evolve(
                pod,
                status=evolve(
                    pod.status, conditions=tuple(data.draw(st.permutations(pod.status.conditions)))
                ),
            )
            for pod in shuffled.pods
        ),
    )

    def outcome(placements: Sequence[RunPlacement]) -> list[tuple[RunKey, PodRef | None, str]]:
        return [(p.run.metadata.key, pod_ref(p.pod), p.decision.message) for p in placements]

    assert outcome(decide_placements(deeper)) == outcome(expected)


# -- (d) requeue ------------------------------------------------------------------------


def decisions(snapshot: ClusterSnapshot) -> dict[RunKey, tuple[PodRef | None, str]]:
    return {
        p.run.metadata.key: (pod_ref(p.pod), p.decision.message)
        for p in decide_placements(snapshot)
    }


def indirect(run: Run, changed: Changed | None) -> bool:
    """Whether ``changed`` concerns ``run`` only through other Runs (affinity, order).

    Not the Run itself, not the workspace it names, not a pod or a Run of its
    Runtime: the couplings a requeue function most easily misses, so the search
    is steered towards them.
    """
    if changed is None or changed.metadata.namespace != run.metadata.namespace:
        return False
    if isinstance(changed, PersistentWorkspace):
        return changed.metadata.name != run.workspace_name
    if isinstance(changed, Pod):
        return changed.runtime != run.spec.runtime
    return changed.metadata.key != run.metadata.key and changed.spec.runtime != run.spec.runtime


CHANGES_PER_CLUSTER = 4


@settings(max_examples=500, deadline=None)
@given(st.data(), snapshots)
def test_requeue_wakes_every_run_whose_decision_changed(
    data: st.DataObject, snapshot: ClusterSnapshot
) -> None:
    note(describe_cluster(snapshot))
    before = decisions(snapshot)
    for _ in range(CHANGES_PER_CLUSTER):  # each one alone, on the same cluster
        change = data.draw(cluster_changes(snapshot))
        after = decisions(change.snapshot)
        changed = {key for key in before.keys() & after.keys() if before[key] != after[key]}
        runs = {run.metadata.key: run for run in change.snapshot.runs}
        through_others = [
            key
            for key in changed
            if indirect(runs[key], change.before) and indirect(runs[key], change.after)
        ]
        event(change.kind)
        event(f"decisions changed: {min(len(changed), 2)}, indirectly: {len(through_others) > 0}")
        woken = runs_to_requeue(change.snapshot, change.before, change.after)
        missed = {key: (before[key], after[key]) for key in changed - woken}
        if missed:
            note(f"{change.kind}:\n  before: {describe_object(change.before)}")
            note(f"  after:  {describe_object(change.after)}")
        assert not missed, missed
