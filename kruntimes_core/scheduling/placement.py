"""Placing a batch of Pending Runs (spec workspaces.md section 4).

Theory of operation. Pending Runs are placed one at a time in a stable
order (creation time, then namespace/name), each seeing the Runs placed
before it in the same batch. For one Run: the ready pods of its Runtime,
narrowed by its workspace (the bound pod, name AND uid), then filtered by
free slots, its required affinity (with Kubernetes' first-Run rule), its
required anti-affinity and the required anti-affinity of placed Runs
(symmetry); the survivors are scored by preferred terms, normalised to
0..100, and the best wins (ties: fewest used slots, then pod name). A Run
that fits nowhere stays Pending with a message; nothing here fails a Run.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime

from attrs import evolve, frozen

from kruntimes_core.core.actions import ObjectRef, PatchStatus
from kruntimes_core.core.decision import Decision
from kruntimes_core.core.selectors import matches
from kruntimes_core.resources.cluster import ClusterSnapshot
from kruntimes_core.resources.pod import Pod
from kruntimes_core.resources.run import Run, RunPhase, RunStatus
from kruntimes_core.resources.runtime import Runtime
from kruntimes_core.resources.workspace import PersistentWorkspace
from kruntimes_core.scheduling.capacity import pod_slots
from kruntimes_core.scheduling.topology import TermCounts, TopologyIndex, domain
from kruntimes_core.scheduling.workspace_filter import workspace_verdict
from kruntimes_core.workspaces.pods import by_name

MAX_SCORE = 100
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

# Why a pod was rejected, in the order the message lists them.
NO_CAPACITY = "lack free run slots"
AFFINITY = "fail required run affinity"
ANTI_AFFINITY = "fail required run anti-affinity"
EXISTING_ANTI_AFFINITY = "are excluded by placed Runs' anti-affinity"


@frozen
class RunPlacement:
    """The decision for one Pending Run; ``pod`` is None while it waits."""

    run: Run
    pod: Pod | None
    decision: Decision[RunStatus]


def pending_order(run: Run) -> tuple[datetime, str, str]:
    meta = run.metadata
    return (meta.creation_timestamp or _EPOCH, meta.namespace, meta.name)


def is_pending(run: Run) -> bool:
    return run.status.phase is RunPhase.PENDING and not run.status.assigned_pod


def decide_placements(snapshot: ClusterSnapshot) -> tuple[RunPlacement, ...]:
    """Place every Pending Run of the snapshot; results in placement order."""
    return tuple(Scheduler(snapshot).place_all())


class Scheduler:
    """One batch: indexes built once, then updated as each Run is placed."""

    def __init__(self, snapshot: ClusterSnapshot) -> None:
        self.runtimes = {rt.metadata.key: rt for rt in snapshot.runtimes}
        self.workspaces = {ws.metadata.key: ws for ws in snapshot.workspaces}
        pods_by_namespace: dict[str, list[Pod]] = defaultdict(list)
        for pod in snapshot.pods:
            pods_by_namespace[pod.metadata.namespace].append(pod)
        self.named = {ns: by_name(pods) for ns, pods in pods_by_namespace.items()}
        self.candidates: dict[tuple[str, str], list[Pod]] = defaultdict(list)
        for ns, named in sorted(self.named.items()):
            for pod in named.values():
                if pod.ready and pod.runtime:
                    self.candidates[(ns, pod.runtime)].append(pod)
        self.used: Counter[tuple[str, str]] = Counter()
        self.slots: dict[tuple[str, str], int] = {}
        placed = []
        for run in snapshot.runs:
            if run.placed:
                self.used[(run.metadata.namespace, run.status.assigned_pod)] += run.slots
                on = self._assigned_pod(run)
                if on is not None:
                    placed.append((run, on))
        self.topology = TopologyIndex(placed)
        self.pending = sorted((r for r in snapshot.runs if is_pending(r)), key=pending_order)

    def _assigned_pod(self, run: Run) -> Pod | None:
        pod = self.named.get(run.metadata.namespace, {}).get(run.status.assigned_pod)
        if pod is None or pod.metadata.uid != run.status.assigned_pod_uid:
            return None
        return pod

    def place_all(self) -> Iterable[RunPlacement]:
        for run in self.pending:
            pod, message = self.choose(run)
            if pod is not None:
                self.used[(run.metadata.namespace, pod.metadata.name)] += run.slots
                self.topology.place(run, pod)
            yield RunPlacement(run, pod, _decision(run, pod, message))

    def choose(self, run: Run) -> tuple[Pod | None, str]:
        """The pod for ``run``, or None and why it waits."""
        namespace = run.metadata.namespace
        if run.spec.cancel_requested:
            return None, "cancellation requested"
        runtime = self.runtimes.get((namespace, run.spec.runtime))
        pods = self.candidates.get((namespace, run.spec.runtime), [])
        workspace = self._workspace(run)
        verdict = workspace_verdict(run, workspace)
        if verdict.blocked:
            return None, verdict.blocked
        if verdict.restricts:
            pods = [p for p in pods if p.metadata.name == verdict.pod]
            if not pods or pods[0].metadata.uid != verdict.uid:
                return None, _bound_pod_unavailable(run, verdict.pod, verdict.uid, self.named)
        if not pods:
            return None, f'runtime "{run.spec.runtime}" has no ready pods'
        feasible, rejected = self._filter(run, pods, runtime)
        if not feasible:
            return None, _no_fit(len(pods), rejected)
        return self._best(run, feasible), ""

    def _workspace(self, run: Run) -> PersistentWorkspace | None:
        return self.workspaces.get((run.metadata.namespace, run.workspace_name))

    def _filter(
        self, run: Run, pods: Sequence[Pod], runtime: Runtime | None
    ) -> tuple[list[Pod], Counter[str]]:
        namespace = run.metadata.namespace
        affinity = run.spec.affinity
        required = [self.topology.counts(namespace, t) for t in affinity.run_affinity.required]
        first_of_group = all(c.total == 0 for c in required) and all(
            matches(c.selector, run.metadata.labels) for c in required
        )
        anti = [self.topology.counts(namespace, t) for t in affinity.run_anti_affinity.required]
        excluding = [
            group
            for group in self.topology.existing_anti_affinity(namespace).values()
            if matches(group.selector, run.metadata.labels)
        ]
        feasible: list[Pod] = []
        rejected: Counter[str] = Counter()
        for pod in pods:
            key = (namespace, pod.metadata.name)
            slots = self.slots.get(key)
            if slots is None:
                slots = self.slots[key] = pod_slots(pod, runtime)
            free = slots - self.used[key]
            if free < run.slots:
                rejected[NO_CAPACITY] += 1
            elif not _affinity_holds(pod, required, first_of_group):
                rejected[AFFINITY] += 1
            elif any(c.at(pod) > 0 for c in anti):
                rejected[ANTI_AFFINITY] += 1
            elif any(group.excludes(pod) for group in excluding):
                rejected[EXISTING_ANTI_AFFINITY] += 1
            else:
                feasible.append(pod)
        return feasible, rejected

    def _best(self, run: Run, feasible: Sequence[Pod]) -> Pod:
        namespace = run.metadata.namespace
        rules = run.spec.affinity
        weighted = [
            (w.weight, self.topology.counts(namespace, w.run_affinity_term))
            for w in rules.run_affinity.preferred
        ] + [
            (-w.weight, self.topology.counts(namespace, w.run_affinity_term))
            for w in rules.run_anti_affinity.preferred
        ]
        raw = {
            pod.metadata.name: sum(weight for weight, c in weighted if c.at(pod) > 0)
            for pod in feasible
        }
        scores = normalise(raw)
        return min(
            feasible,
            key=lambda pod: (
                -scores[pod.metadata.name],
                self.used[(namespace, pod.metadata.name)],
                pod.metadata.name,
            ),
        )


def _affinity_holds(pod: Pod, required: Sequence[TermCounts], first_of_group: bool) -> bool:
    holds = True
    for counts in required:
        if domain(pod, counts.topology_key) is None:
            return False  # every topology label must exist on the pod
        if counts.at(pod) == 0:
            holds = False
    return holds or first_of_group


def normalise(raw: Mapping[str, int]) -> dict[str, int]:
    """Scores to 0..MAX_SCORE across the feasible pods (all 0 when they are equal)."""
    if not raw:
        return {}
    low, high = min(raw.values()), max(raw.values())
    if high == low:
        return dict.fromkeys(raw, 0)
    return {name: (score - low) * MAX_SCORE // (high - low) for name, score in raw.items()}


def _bound_pod_unavailable(
    run: Run, pod: str, uid: str, named: Mapping[str, Mapping[str, Pod]]
) -> str:
    found = named.get(run.metadata.namespace, {}).get(pod)
    what = f'workspace "{run.workspace_name}" is bound to pod "{pod}" (uid {uid})'
    if found is None:
        return f"{what}, which no longer exists"
    if found.metadata.uid != uid:
        return f"{what}, which was replaced by a pod with another uid"
    return f"{what}, which is not ready"


def _no_fit(candidates: int, rejected: Counter[str]) -> str:
    reasons = [
        f"{rejected[reason]} {reason}"
        for reason in (NO_CAPACITY, AFFINITY, ANTI_AFFINITY, EXISTING_ANTI_AFFINITY)
        if rejected[reason]
    ]
    return f"no Runtime Pod fits ({candidates} ready): " + ", ".join(reasons)


def _decision(run: Run, pod: Pod | None, message: str) -> Decision[RunStatus]:
    if pod is None:
        status = evolve(run.status, message=message)
    else:
        status = RunStatus(
            phase=RunPhase.SCHEDULED,
            assigned_pod=pod.metadata.name,
            assigned_pod_uid=pod.metadata.uid,
            outputs=run.status.outputs,
            artifact_refs=run.status.artifact_refs,
        )
    if status == run.status:
        return Decision(status=status, message=message)
    target = ObjectRef.to(run.API_VERSION, run.KIND, run.metadata)
    return Decision(
        status=status,
        actions=(PatchStatus(target, run.metadata.resource_version, status),),
        message=message,
    )
