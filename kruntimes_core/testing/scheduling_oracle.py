"""A brute-force placement oracle (spec workspaces.md section 4), written plainly.

Reusable by anyone who wants to check a scheduler: :func:`oracle_placements`
reads a :class:`ClusterSnapshot` and says, for every Pending Run, which pod
(name and uid) it goes to, or None while it waits. It shares no code with
``kruntimes_core.scheduling`` beyond the object model and
:func:`~kruntimes_core.core.selectors.matches` (whose own properties are
tested against a transcription of the Kubernetes rules). There are no
indexes and nothing is cached: every rule is a loop over every placed Run,
so a batch costs O(pending x pods x placed x terms). Small clusters only.

The rules, one by one, as the oracle reads them:

- *Pending*: phase ``Pending`` and no ``status.assignedPod``. A Run whose
  cancellation is requested (``spec.cancelRequested``) is never placed.
- *Order*: creation timestamp (absent sorts first), then namespace, then
  name. Each Run sees the Runs placed before it in the same batch.
- *Placed*: non-terminal with ``status.assignedPod`` set. A placed Run uses
  ``spec.resources.requests.runs`` (default 1) slots of the pod of that name
  in its namespace. For topology it is *on* the pod with that name AND uid
  (``status.assignedPodUID``); a Run whose pod is gone or was replaced is in
  no domain and, as Kubernetes ignores pods bound to a node that no longer
  exists, does not count as existing "anywhere" for the first-Run rule.
- *Candidates*: the ready pods of the Run's namespace whose ``runtime`` label
  is the Run's ``spec.runtime``.
- *Workspace filter*: a Run naming a workspace may only use the pod with
  name ``status.boundPod`` AND uid ``status.boundPodUID`` of a workspace of
  its namespace that is ``Bound``, not being deleted (deletion leads to
  ``Released``, spec 3.3-3.6) and whose ``spec.runtime`` is the Run's.
  Anything else (missing, Pending, no phase, Lost, Released, another
  Runtime, no such pod): no candidate.
- *Slots*: pod annotation ``kruntimes.io/capacity.runs`` (decimal digits),
  else the Runtime's ``spec.capacity.resources.runs``, else 2; the pod fits
  when slots - used >= the Run's request.
- *Domains*: topology key ``kruntimes.io/runtime-pod`` is the pod itself (its
  name); any other key is the pod's label of that name; a pod without it is
  in no domain. Only Runs of the same namespace count.
- *Required affinity*: for every term the pod has a domain, and that domain
  holds a placed Run the term's selector matches. First-Run rule: when no
  placed Run matches any of the Run's required terms anywhere and the Run's
  own labels match all of them, every pod with all the topology labels
  satisfies the affinity.
- *Required anti-affinity*: for every term, if the pod has a domain, no
  placed Run there matches. Symmetry: a placed Run whose required
  anti-affinity term matches the incoming Run excludes the pod when the pod
  shares the placed Run's domain under that term's key.
- *Score*: +weight per preferred affinity term whose domain holds a match,
  -weight per such preferred anti-affinity term; normalised across the
  feasible pods as ``(s - min) * 100 // (max - min)``, all 0 when equal.
- *Choice*: highest score, then fewest used slots, then pod name.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from attrs import frozen

from kruntimes_core.core.selectors import matches
from kruntimes_core.resources.affinity import RUNTIME_POD_TOPOLOGY, RunAffinityTerm
from kruntimes_core.resources.cluster import ClusterSnapshot
from kruntimes_core.resources.pod import Pod
from kruntimes_core.resources.run import Run, RunPhase
from kruntimes_core.resources.workspace import PersistentWorkspace, WorkspacePhase

__all__ = ["CAPACITY_ANNOTATION", "PodRef", "RunKey", "oracle_placements"]

CAPACITY_ANNOTATION = "kruntimes.io/capacity.runs"
DEFAULT_SLOTS = 2
MAX_SCORE = 100

RunKey = tuple[str, str]
"""``(namespace, name)`` of a Run."""
PodRef = tuple[str, str]
"""``(name, uid)`` of the chosen pod."""

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@frozen
class _Placed:
    """A placed Run: the pod name it holds slots on, and the pod it is on (if any)."""

    run: Run
    pod_name: str
    pod: Pod | None


def oracle_placements(snapshot: ClusterSnapshot) -> dict[RunKey, PodRef | None]:
    """For every Pending Run of ``snapshot``, the pod it is placed on, or None."""
    placed = [
        _Placed(run, run.status.assigned_pod, _pod_of(snapshot, run))
        for run in snapshot.runs
        if _is_placed(run)
    ]
    pending = sorted((run for run in snapshot.runs if _is_pending(run)), key=_order)
    chosen: dict[RunKey, PodRef | None] = {}
    for run in pending:
        pod = _choose(snapshot, run, placed)
        if pod is None:
            chosen[run.metadata.key] = None
        else:
            chosen[run.metadata.key] = (pod.metadata.name, pod.metadata.uid)
            placed.append(_Placed(run, pod.metadata.name, pod))
    return chosen


def _is_placed(run: Run) -> bool:
    return not run.status.phase.terminal and run.status.assigned_pod != ""


def _is_pending(run: Run) -> bool:
    return run.status.phase is RunPhase.PENDING and run.status.assigned_pod == ""


def _order(run: Run) -> tuple[datetime, str, str]:
    created = run.metadata.creation_timestamp
    return (created if created is not None else _EPOCH, run.metadata.namespace, run.metadata.name)


def _pod_of(snapshot: ClusterSnapshot, run: Run) -> Pod | None:
    for pod in snapshot.pods:
        if (
            pod.metadata.namespace == run.metadata.namespace
            and pod.metadata.name == run.status.assigned_pod
            and pod.metadata.uid == run.status.assigned_pod_uid
        ):
            return pod
    return None


def _run_slots(run: Run) -> int:
    return run.spec.resources.requests.get("runs", 1)


def _choose(snapshot: ClusterSnapshot, run: Run, placed: Sequence[_Placed]) -> Pod | None:
    if run.spec.cancel_requested:
        return None
    namespace = run.metadata.namespace
    candidates = [
        pod
        for pod in snapshot.pods
        if pod.metadata.namespace == namespace
        and pod.metadata.labels.get("runtime") == run.spec.runtime
        and pod.ready
    ]
    if run.workspace_name:
        workspace = _workspace(snapshot, namespace, run.workspace_name)
        if (
            workspace is None
            or workspace.spec.runtime != run.spec.runtime
            or workspace.status.phase is not WorkspacePhase.BOUND
            or workspace.metadata.deletion_timestamp is not None
        ):
            return None
        candidates = [
            pod
            for pod in candidates
            if pod.metadata.name == workspace.status.bound_pod
            and pod.metadata.uid == workspace.status.bound_pod_uid
        ]
    neighbours = [p for p in placed if p.run.metadata.namespace == namespace]
    feasible = [
        pod
        for pod in candidates
        if _has_room(snapshot, run, pod, neighbours)
        and _affinity_holds(run, pod, neighbours)
        and _anti_affinity_holds(run, pod, neighbours)
        and not _excluded_by_placed(run, pod, neighbours)
    ]
    if not feasible:
        return None
    raw = {pod.metadata.name: _raw_score(run, pod, neighbours) for pod in feasible}
    low, high = min(raw.values()), max(raw.values())
    scores = {
        name: 0 if high == low else (score - low) * MAX_SCORE // (high - low)
        for name, score in raw.items()
    }
    return min(
        feasible,
        key=lambda pod: (
            -scores[pod.metadata.name],
            _used(pod, neighbours),
            pod.metadata.name,
        ),
    )


def _workspace(snapshot: ClusterSnapshot, namespace: str, name: str) -> PersistentWorkspace | None:
    for workspace in snapshot.workspaces:
        if workspace.metadata.namespace == namespace and workspace.metadata.name == name:
            return workspace
    return None


def _slots(snapshot: ClusterSnapshot, pod: Pod) -> int:
    advertised = pod.metadata.annotations.get(CAPACITY_ANNOTATION)
    if advertised is not None and advertised.isascii() and advertised.isdigit():
        return int(advertised)
    for runtime in snapshot.runtimes:
        if (
            runtime.metadata.namespace == pod.metadata.namespace
            and runtime.metadata.name == pod.metadata.labels.get("runtime")
        ):
            return runtime.spec.capacity.resources.get("runs", DEFAULT_SLOTS)
    return DEFAULT_SLOTS


def _used(pod: Pod, neighbours: Sequence[_Placed]) -> int:
    return sum(_run_slots(p.run) for p in neighbours if p.pod_name == pod.metadata.name)


def _has_room(snapshot: ClusterSnapshot, run: Run, pod: Pod, neighbours: Sequence[_Placed]) -> bool:
    return _slots(snapshot, pod) - _used(pod, neighbours) >= _run_slots(run)


def _domain(pod: Pod, topology_key: str) -> str | None:
    if topology_key == RUNTIME_POD_TOPOLOGY:
        return pod.metadata.name
    return pod.metadata.labels.get(topology_key)


def _domain_holds_match(term: RunAffinityTerm, domain: str, neighbours: Sequence[_Placed]) -> bool:
    for placed in neighbours:
        if (
            placed.pod is not None
            and _domain(placed.pod, term.topology_key) == domain
            and matches(term.label_selector, placed.run.metadata.labels)
        ):
            return True
    return False


def _affinity_holds(run: Run, pod: Pod, neighbours: Sequence[_Placed]) -> bool:
    terms = run.spec.affinity.run_affinity.required
    every_term_met = True
    for term in terms:
        domain = _domain(pod, term.topology_key)
        if domain is None:
            return False
        if not _domain_holds_match(term, domain, neighbours):
            every_term_met = False
    return every_term_met or _starts_a_group(run, terms, neighbours)


def _starts_a_group(
    run: Run, terms: Sequence[RunAffinityTerm], neighbours: Sequence[_Placed]
) -> bool:
    for term in terms:
        for placed in neighbours:
            if placed.pod is not None and matches(term.label_selector, placed.run.metadata.labels):
                return False
    return all(matches(term.label_selector, run.metadata.labels) for term in terms)


def _anti_affinity_holds(run: Run, pod: Pod, neighbours: Sequence[_Placed]) -> bool:
    for term in run.spec.affinity.run_anti_affinity.required:
        domain = _domain(pod, term.topology_key)
        if domain is not None and _domain_holds_match(term, domain, neighbours):
            return False
    return True


def _excluded_by_placed(run: Run, pod: Pod, neighbours: Sequence[_Placed]) -> bool:
    for placed in neighbours:
        if placed.pod is None:
            continue
        for term in placed.run.spec.affinity.run_anti_affinity.required:
            if not matches(term.label_selector, run.metadata.labels):
                continue
            domain = _domain(pod, term.topology_key)
            if domain is not None and domain == _domain(placed.pod, term.topology_key):
                return True
    return False


def _raw_score(run: Run, pod: Pod, neighbours: Sequence[_Placed]) -> int:
    rules = run.spec.affinity
    score = 0
    for weighted in rules.run_affinity.preferred:
        if _satisfied(weighted.run_affinity_term, pod, neighbours):
            score += weighted.weight
    for weighted in rules.run_anti_affinity.preferred:
        if _satisfied(weighted.run_affinity_term, pod, neighbours):
            score -= weighted.weight
    return score


def _satisfied(term: RunAffinityTerm, pod: Pod, neighbours: Sequence[_Placed]) -> bool:
    domain = _domain(pod, term.topology_key)
    return domain is not None and _domain_holds_match(term, domain, neighbours)
