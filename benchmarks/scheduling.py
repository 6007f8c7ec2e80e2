"""Batch placement (spec workspaces.md section 4) at scale, and against the oracle.

The cluster (one namespace): Runtimes of 100 Runtime Pods each (a cluster
grows by adding Runtimes, so the pods one Run may use stay 100), each pod in
one of 10 ``zone``s with 20 Run slots; placed Runs already hold half a
Pending Run's worth of slots per pod (5 per pod). Runs carry a ``group``
label from 100 groups, so affinity terms repeat. A third of the Pending Runs
require affinity to another group (alternately the same pod and the same
zone), a third require anti-affinity to their own group on the pod, the
last third prefer their own group's zone (scored); a third of the placed
Runs carry required anti-affinity to their group on the pod (the symmetric
rule). Most Runs fit.

Measured in the same run, each size in a fresh process (no size pays for
another's garbage):

- sizes 1x (1,000 Pending onto 100 pods holding 500) and 10x (10,000 onto
  1,000 pods holding 5,000): Runs placed per second and the growth
  time(10x)/time(1x) (linear: 10; target <= 12);
- at 1x, ``decide_placements`` against the brute-force oracle
  (``kruntimes_core.testing.scheduling_oracle``) on the same snapshot: the
  speed-up (target >= 20x), checking on the way that both agree.
"""

from __future__ import annotations

import argparse
import functools
import json
import random
import subprocess
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from benchmarks.timing import best_of
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
from kruntimes_core.resources.run import Run, RunPhase, RunSpec, RunStatus
from kruntimes_core.resources.runtime import Runtime, RuntimeCapacity, RuntimeSpec
from kruntimes_core.scheduling.placement import decide_placements
from kruntimes_core.testing.scheduling_oracle import oracle_placements

NAMESPACE = "bench"
T0 = datetime(2026, 11, 30, 12, tzinfo=UTC)
PODS_PER_RUNTIME = 100
GROUPS = 100
ZONES = 10
SLOTS = 20
TARGET_GROWTH = 12.0
TARGET_SPEEDUP = 20.0


def _group_selector(group: int) -> LabelSelector:
    return LabelSelector({"group": f"g{group:03d}"})


SELECTORS = [_group_selector(g) for g in range(GROUPS)]


def _term(group: int, topology: str) -> RunAffinityTerm:
    return RunAffinityTerm(topology, SELECTORS[group])


def _anti(group: int) -> Affinity:
    return Affinity(
        run_anti_affinity=RunAffinityRules(required=(_term(group, RUNTIME_POD_TOPOLOGY),))
    )


def build(pending: int, pods: int, placed: int, seed: int = 7) -> ClusterSnapshot:
    """``pending`` Pending Runs, ``pods`` Runtime Pods (100 per Runtime), ``placed`` Runs."""
    rng = random.Random(seed)
    ready = PodStatus(
        "Running",
        (
            PodCondition("Ready", ConditionStatus.TRUE),
            PodCondition(RUNTIMED_READY, ConditionStatus.TRUE),
        ),
    )
    runtimes = [f"rt-{r:03d}" for r in range(max(1, pods // PODS_PER_RUNTIME))]
    runtime_objects = tuple(
        Runtime(
            ObjectMeta(name, NAMESPACE, f"{name}-uid"),
            RuntimeSpec(capacity=RuntimeCapacity({"runs": SLOTS})),
        )
        for name in runtimes
    )
    pod_list = tuple(
        Pod(
            ObjectMeta(
                f"{runtimes[i % len(runtimes)]}-pod-{i:05d}",
                NAMESPACE,
                f"pod-uid-{i}",
                {"runtime": runtimes[i % len(runtimes)], "zone": f"zone-{i % ZONES}"},
            ),
            ready,
        )
        for i in range(pods)
    )
    by_runtime: dict[str, list[Pod]] = {name: [] for name in runtimes}
    for pod in pod_list:
        by_runtime[pod.runtime].append(pod)
    runs: list[Run] = []
    for j in range(placed):
        runtime = runtimes[j % len(runtimes)]
        pod = rng.choice(by_runtime[runtime])
        group = rng.randrange(GROUPS)
        runs.append(
            Run(
                ObjectMeta(
                    f"placed-{j:06d}",
                    NAMESPACE,
                    f"placed-uid-{j}",
                    {"group": f"g{group:03d}", "app": "bench"},
                    creation_timestamp=T0 - timedelta(hours=1),
                ),
                RunSpec(runtime, affinity=_anti(group) if j % 3 == 1 else Affinity()),
                RunStatus(RunPhase.RUNNING, pod.metadata.name, pod.metadata.uid),
            )
        )
    for i in range(pending):
        group = rng.randrange(GROUPS)
        other = (group + 1 + rng.randrange(GROUPS - 1)) % GROUPS
        if i % 3 == 0:
            topology = RUNTIME_POD_TOPOLOGY if i % 2 == 0 else "zone"
            affinity = Affinity(run_affinity=RunAffinityRules(required=(_term(other, topology),)))
        elif i % 3 == 1:
            affinity = _anti(group)
        else:
            weighted = WeightedRunAffinityTerm(50, _term(group, "zone"))
            affinity = Affinity(run_affinity=RunAffinityRules(preferred=(weighted,)))
        runs.append(
            Run(
                ObjectMeta(
                    f"pending-{i:06d}",
                    NAMESPACE,
                    f"pending-uid-{i}",
                    {"group": f"g{group:03d}", "app": "bench"},
                    creation_timestamp=T0 + timedelta(seconds=i),
                ),
                RunSpec(runtimes[i % len(runtimes)], affinity=affinity),
            )
        )
    rng.shuffle(runs)
    return ClusterSnapshot(runtime_objects, pod_list, (), tuple(runs))


def measure(pending: int, repeats: int, oracle: bool) -> dict[str, float]:
    """Timings for one size (run in a fresh process by ``main``)."""
    pods, placed = pending // 10, pending // 2
    snapshot = build(pending, pods, placed)
    placements = decide_placements(snapshot)
    result = {
        "pending": pending,
        "pods": pods,
        "placed": placed,
        "fitted": sum(p.pod is not None for p in placements),
        "scheduler": best_of(repeats, functools.partial(decide_placements, snapshot)),
    }
    if oracle:
        start = time.perf_counter()
        expected = oracle_placements(snapshot)
        result["oracle"] = time.perf_counter() - start
        got = {
            p.run.metadata.key: None if p.pod is None else (p.pod.metadata.name, p.pod.metadata.uid)
            for p in placements
        }
        result["agree"] = float(got == expected)
    return result


def _in_fresh_process(pending: int, repeats: int, oracle: bool) -> dict[str, float]:
    argv = [sys.executable, "-m", "benchmarks", "scheduling", "--measure", str(pending)]
    argv += ["--repeats", str(repeats)] + (["--oracle"] if oracle else [])
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    timing: dict[str, float] = json.loads(out)
    return timing


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks scheduling")
    parser.add_argument("--pending", type=int, default=10_000, help="Pending Runs at 10x")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-oracle", action="store_true", help="skip the oracle comparison")
    parser.add_argument("--measure", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--oracle", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure is not None:
        print(json.dumps(measure(args.measure, args.repeats, args.oracle)))
        return 0
    small, big = args.pending // 10, args.pending
    results = {}
    for size in (small, big):
        oracle = size == small and not args.no_oracle
        results[size] = timing = _in_fresh_process(size, args.repeats, oracle)
        took = timing["scheduler"]
        print(
            f"pending={size} pods={int(timing['pods'])} placed={int(timing['placed'])}: "
            f"{took:.3f}s, {size / took:,.0f} Runs placed/s "
            f"({int(timing['fitted'])} of {size} fit)"
        )
    growth = results[big]["scheduler"] / results[small]["scheduler"]
    verdict = "ok" if growth <= TARGET_GROWTH else "ABOVE TARGET"
    print(f"growth: time({big})/time({small}) = {growth:.2f} (linear: 10, target <= 12: {verdict})")
    if not args.no_oracle:
        timing = results[small]
        speedup = timing["oracle"] / timing["scheduler"]
        verdict = "ok" if speedup >= TARGET_SPEEDUP else "BELOW TARGET"
        agree = "agree" if timing["agree"] else "DISAGREE"
        print(
            f"oracle at {small} pending: {timing['oracle']:.2f}s (one run) = "
            f"{speedup:.0f}x the scheduler (target >= 20x: {verdict}); results {agree}"
        )
    return 0
