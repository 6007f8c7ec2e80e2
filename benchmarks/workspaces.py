"""Batch binding + usage decisions (spec workspaces.md 2-3) at scale.

Half the workspaces are new (each is bound: a new status, four conditions,
a finalizer and a status patch), half are Bound with up-to-date status and a
Run each (usage tracking and the TTL; nothing to write).

Reports decisions per second at 1x and 10x sizes, the growth ratio
time(10x) / time(1x) (linear scaling gives ~10), and the ratio to a baseline
measured in the same run on the same input: the bare selection rule alone
(FNV-1a of every uid, modulo the pod count), the least work any binding
implementation must do. Two ways of consuming the batch are timed:

- stream: ``iter_decisions``, each decision applied and dropped, as an
  operator does;
- retained: ``decide_cluster``, all decisions held in one tuple (krt plan).
  The results themselves are live objects the collector keeps scanning, so
  this form grows a little faster than linearly.
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from benchmarks.timing import best_of
from kruntimes_core.core.conditions import Condition, ConditionStatus
from kruntimes_core.core.hashing import fnv1a_32
from kruntimes_core.core.meta import ObjectMeta
from kruntimes_core.resources.cluster import ClusterSnapshot
from kruntimes_core.resources.pod import Pod, PodCondition, PodStatus
from kruntimes_core.resources.run import Run, RunPhase, RunSpec, RunStatus, WorkspaceRef
from kruntimes_core.resources.runtime import Runtime
from kruntimes_core.resources.workspace import (
    FINALIZER,
    PersistentWorkspace,
    WorkspacePhase,
    WorkspaceSpec,
    WorkspaceStatus,
)
from kruntimes_core.workspaces.batch import decide_cluster, iter_decisions

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)
NAMESPACE = "bench"


def build(workspaces: int, pods: int) -> ClusterSnapshot:
    """Half the workspaces new (to bind), half Bound; a Run for each Bound one."""
    ready = PodStatus(
        phase="Running",
        conditions=(
            PodCondition("Ready", ConditionStatus.TRUE),
            PodCondition("kruntimes.io/RuntimedReady", ConditionStatus.TRUE),
        ),
    )
    pod_list = tuple(
        Pod(ObjectMeta(f"rt-{i:05d}", NAMESPACE, f"pod-uid-{i}", {"runtime": "bash"}), ready)
        for i in range(pods)
    )
    since = NOW - timedelta(minutes=30)
    ws_list: list[PersistentWorkspace] = []
    runs: list[Run] = []
    for i in range(workspaces):
        name = f"ws-{i:07d}"
        spec = WorkspaceSpec(runtime="bash", ttl_seconds_after_unused=3600)
        if i % 2 == 0:
            meta = ObjectMeta(name, NAMESPACE, f"ws-uid-{i}")
            ws_list.append(PersistentWorkspace(meta, spec))
            continue
        pod = pod_list[i % pods]
        status = WorkspaceStatus(
            phase=WorkspacePhase.BOUND,
            runtime="bash",
            bound_pod=pod.metadata.name,
            bound_pod_uid=pod.metadata.uid,
            path=f"/workspace/persistent/{name}",
            last_used_time=since,
            conditions=_steady_conditions(pod, since, active=i % 4 == 1),
        )
        meta = ObjectMeta(name, NAMESPACE, f"ws-uid-{i}", finalizers=(FINALIZER,))
        ws_list.append(PersistentWorkspace(meta, spec, status))
        phase = RunPhase.RUNNING if i % 4 == 1 else RunPhase.SUCCEEDED
        runs.append(
            Run(
                ObjectMeta(f"run-{i:07d}", NAMESPACE, f"run-uid-{i}"),
                RunSpec("bash", WorkspaceRef(name)),
                RunStatus(phase, pod.metadata.name, pod.metadata.uid),
            )
        )
    runtime = Runtime(ObjectMeta("bash", NAMESPACE, "runtime-uid"))
    return ClusterSnapshot((runtime,), pod_list, tuple(ws_list), tuple(runs))


def _steady_conditions(pod: Pod, since: datetime, *, active: bool) -> tuple[Condition, ...]:
    """The conditions the controller itself wrote: a reconcile changes nothing."""
    true, false = ConditionStatus.TRUE, ConditionStatus.FALSE
    bound = f"bound to pod {pod.metadata.name!r} (uid {pod.metadata.uid})"
    in_use = (
        Condition("InUse", true, "ActiveRuns", since, "non-terminal Runs reference the workspace")
        if active
        else Condition(
            "InUse", false, "Unused", since, "no non-terminal Run references the workspace"
        )
    )
    return (
        Condition("Accepted", true, "Accepted", since, "spec is valid"),
        Condition("RuntimeReady", true, "BoundPodReady", since, "bound pod is ready"),
        Condition("Bound", true, "Bound", since, bound),
        in_use,
    )


def bare_selection(snapshot: ClusterSnapshot) -> int:
    ready = sorted(pod.metadata.name for pod in snapshot.pods)
    count = len(ready)
    return sum(fnv1a_32(ws.metadata.uid) % count for ws in snapshot.workspaces)


def stream(snapshot: ClusterSnapshot) -> None:
    for _ in iter_decisions(snapshot, NOW):
        pass


def retained(snapshot: ClusterSnapshot) -> None:
    decide_cluster(snapshot, NOW)


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks")
    parser.add_argument("--workspaces", type=int, default=100_000)
    parser.add_argument("--pods", type=int, default=1_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    big, small = args.workspaces, args.workspaces // 10
    timings: dict[tuple[str, int], float] = {}
    for size in (small, big):
        snapshot = build(size, args.pods)
        baseline = best_of(args.repeats, functools.partial(bare_selection, snapshot))
        print(f"workspaces={size} pods={args.pods}: bare selection {baseline:.3f}s")
        for form in (stream, retained):
            took = best_of(args.repeats, functools.partial(form, snapshot))
            timings[(form.__name__, size)] = took
            print(
                f"  {form.__name__:>8}: {took:.3f}s, {size / took:,.0f} decisions/s, "
                f"{took / baseline:.1f}x the baseline"
            )
        del snapshot
    for form in (stream, retained):
        growth = timings[(form.__name__, big)] / timings[(form.__name__, small)]
        print(f"growth {form.__name__}: time({big})/time({small}) = {growth:.2f} (linear: 10)")
    return 0
