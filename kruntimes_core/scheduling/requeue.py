"""Which Pending Runs to wake after a change (spec workspaces.md 4, "Requeue").

A Pending Run's placement depends on: its workspace; the pods of its
Runtime and their free slots; the placed Runs its affinity terms match; and
the placed Runs whose required anti-affinity matches it. Because a batch
places Runs in order, a Run the change lets through can in turn take a slot
or join a domain, so the answer is closed under those same couplings: Runs
of the same Runtime share slots, and Runs couple through affinity terms in
their namespace. The result is a superset of the Runs whose decision can
change, never a subset.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from kruntimes_core.core.selectors import matches
from kruntimes_core.resources.affinity import RunAffinityTerm
from kruntimes_core.resources.cluster import ClusterSnapshot
from kruntimes_core.resources.pod import Pod
from kruntimes_core.resources.run import Run
from kruntimes_core.resources.workspace import PersistentWorkspace
from kruntimes_core.scheduling.placement import is_pending

Changed = Pod | PersistentWorkspace | Run
RunKey = tuple[str, str]


def runs_to_requeue(
    snapshot: ClusterSnapshot, before: Changed | None, after: Changed | None
) -> frozenset[RunKey]:
    """``(namespace, name)`` of every Pending Run whose decision may change.

    ``before``/``after`` are the changed object's old and new versions (None
    for a creation or a deletion); ``snapshot`` is the world after the change.
    """
    pending = [run for run in snapshot.runs if is_pending(run)]
    seeds = [run for run in pending if _touched(run, before, after, snapshot)]
    return frozenset(run.metadata.key for run in _closure(seeds, pending))


def _touched(
    run: Run, before: Changed | None, after: Changed | None, snapshot: ClusterSnapshot
) -> bool:
    return any(
        _touches(run, version, snapshot) for version in (before, after) if version is not None
    )


def _touches(run: Run, changed: Changed, snapshot: ClusterSnapshot) -> bool:
    namespace = run.metadata.namespace
    if changed.metadata.namespace != namespace:
        return False
    if isinstance(changed, PersistentWorkspace):
        return run.workspace_name == changed.metadata.name
    if isinstance(changed, Pod):
        return (
            changed.runtime == run.spec.runtime
            or _bound_to(run, changed, snapshot)
            or _coupled_to_runs_on(run, changed, snapshot)
        )
    if changed.metadata.key == run.metadata.key or changed.spec.runtime == run.spec.runtime:
        return True
    return _coupled(run, changed)


def _bound_to(run: Run, pod: Pod, snapshot: ClusterSnapshot) -> bool:
    name = run.workspace_name
    return any(
        ws.metadata.name == name
        and ws.metadata.namespace == run.metadata.namespace
        and ws.status.bound_pod == pod.metadata.name
        for ws in snapshot.workspaces
    )


def _coupled_to_runs_on(run: Run, pod: Pod, snapshot: ClusterSnapshot) -> bool:
    """A pod's labels are the domains of the Runs placed on it, whatever its Runtime."""
    return any(
        other.status.assigned_pod == pod.metadata.name and _coupled(run, other)
        for other in snapshot.runs
        if other.metadata.namespace == pod.metadata.namespace
    )


def _terms(run: Run) -> Iterable[RunAffinityTerm]:
    rules = run.spec.affinity
    yield from rules.run_affinity.required
    yield from rules.run_anti_affinity.required
    for weighted in (*rules.run_affinity.preferred, *rules.run_anti_affinity.preferred):
        yield weighted.run_affinity_term


def _coupled(run: Run, other: Run) -> bool:
    """Whether placing ``other`` can change ``run``'s decision, or the reverse."""
    if run.metadata.namespace != other.metadata.namespace:
        return False
    return any(matches(t.label_selector, other.metadata.labels) for t in _terms(run)) or any(
        matches(t.label_selector, run.metadata.labels) for t in _terms(other)
    )


def _closure(seeds: list[Run], pending: list[Run]) -> list[Run]:
    by_runtime: dict[tuple[str, str], list[Run]] = defaultdict(list)
    for run in pending:
        by_runtime[(run.metadata.namespace, run.spec.runtime)].append(run)
    found = {run.metadata.key: run for run in seeds}
    queue = list(seeds)
    while queue:
        current = queue.pop()
        same_runtime = by_runtime[(current.metadata.namespace, current.spec.runtime)]
        coupled = [r for r in pending if r.metadata.key not in found and _coupled(r, current)]
        for run in (*same_runtime, *coupled):
            if run.metadata.key not in found:
                found[run.metadata.key] = run
                queue.append(run)
    return list(found.values())
