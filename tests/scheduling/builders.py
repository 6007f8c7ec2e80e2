"""Small builders for placement tests."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta

from kruntimes_core.core.conditions import ConditionStatus
from kruntimes_core.core.meta import ObjectMeta
from kruntimes_core.core.selectors import LabelSelector
from kruntimes_core.resources.affinity import (
    RUNTIME_POD_TOPOLOGY,
    Affinity,
    RunAffinityRules,
    RunAffinityTerm,
    WeightedRunAffinityTerm,
)
from kruntimes_core.resources.cluster import ClusterSnapshot
from kruntimes_core.resources.pod import RUNTIMED_READY, Pod, PodCondition, PodStatus
from kruntimes_core.resources.run import (
    Run,
    RunPhase,
    RunResources,
    RunSpec,
    RunStatus,
    WorkspaceRef,
)
from kruntimes_core.resources.runtime import Runtime, RuntimeCapacity, RuntimeSpec
from kruntimes_core.resources.workspace import PersistentWorkspace
from kruntimes_core.scheduling.placement import RunPlacement, decide_placements

NS = "ci"
T0 = datetime(2026, 11, 30, 12, tzinfo=UTC)
READY = PodStatus(
    "Running",
    (
        PodCondition("Ready", ConditionStatus.TRUE),
        PodCondition(RUNTIMED_READY, ConditionStatus.TRUE),
    ),
)


def pod(name: str, *, slots: int | None = None, ready: bool = True, **labels: str) -> Pod:
    annotations = {} if slots is None else {"kruntimes.io/capacity.runs": str(slots)}
    meta = ObjectMeta(name, NS, f"{name}-uid", {"runtime": "bash", **labels}, annotations)
    return Pod(meta, READY if ready else PodStatus("Pending"))


def runtime(slots: int | None = None) -> Runtime:
    capacity = RuntimeCapacity({} if slots is None else {"runs": slots})
    return Runtime(ObjectMeta("bash", NS, "rt-uid"), RuntimeSpec(capacity=capacity))


def term(topology: str = RUNTIME_POD_TOPOLOGY, **match: str) -> RunAffinityTerm:
    return RunAffinityTerm(topology, LabelSelector(match_labels=match))


def run(
    name: str,
    *,
    labels: Mapping[str, str] | None = None,
    on: Pod | None = None,
    phase: RunPhase | None = None,
    workspace: str = "",
    slots: int = 1,
    affinity: Affinity | None = None,
    order: int = 0,
) -> Run:
    status = RunStatus()
    if on is not None:
        status = RunStatus(phase or RunPhase.RUNNING, on.metadata.name, on.metadata.uid)
    elif phase is not None:
        status = RunStatus(phase)
    meta = ObjectMeta(
        name,
        NS,
        f"{name}-uid",
        dict(labels or {}),
        creation_timestamp=T0 + timedelta(seconds=order),
    )
    spec = RunSpec(
        "bash",
        WorkspaceRef(workspace) if workspace else None,
        resources=RunResources({"runs": slots}) if slots != 1 else RunResources(),
        affinity=affinity or Affinity(),
    )
    return Run(meta, spec, status)


def required(*terms: RunAffinityTerm, anti: bool = False) -> Affinity:
    rules = RunAffinityRules(required=terms)
    return Affinity(run_anti_affinity=rules) if anti else Affinity(run_affinity=rules)


def preferred(*weighted: tuple[int, RunAffinityTerm], anti: bool = False) -> Affinity:
    rules = RunAffinityRules(preferred=tuple(WeightedRunAffinityTerm(w, t) for w, t in weighted))
    return Affinity(run_anti_affinity=rules) if anti else Affinity(run_affinity=rules)


def place(*objects: object, slots: int | None = None) -> dict[str, RunPlacement]:
    pods = tuple(o for o in objects if isinstance(o, Pod))
    runs = tuple(o for o in objects if isinstance(o, Run))
    workspaces = tuple(o for o in objects if isinstance(o, PersistentWorkspace))
    snapshot = ClusterSnapshot((runtime(slots),), pods, workspaces, runs)
    return {p.run.metadata.name: p for p in decide_placements(snapshot)}


def where(placements: Mapping[str, RunPlacement], name: str) -> str | None:
    chosen = placements[name].pod
    return None if chosen is None else chosen.metadata.name
