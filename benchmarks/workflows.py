"""One WorkflowRun reconcile on large job graphs (spec workflows.md section 4).

Graphs: n jobs, each needing up to three earlier jobs (about 3n edges), one
step each. Measured in the same run on the same graph: the baseline
``graphlib.TopologicalSorter(needs).static_order()``; one reconcile of the
run as accepted (every root job starts: its workspace and its first Run are
created); and the total decision time to drive an n-job run to the end
(every Run succeeds). Reports the ratio to the baseline and the growth
time(10n)/time(n).
"""

from __future__ import annotations

import functools
import graphlib
import json
import random
import subprocess
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime

from attrs import evolve

from benchmarks.timing import best_of
from kruntimes_core.core.actions import CreateObject, PatchStatus
from kruntimes_core.core.meta import ObjectMeta
from kruntimes_core.resources.run import Run, RunPhase
from kruntimes_core.resources.workspace import PersistentWorkspace, WorkspacePhase
from kruntimes_core.workflows.reconcile import WorkflowRunSnapshot, decide_workflow_run
from kruntimes_core.workflows.snapshot import ControllerRevision, new_snapshot
from kruntimes_core.workflows.spec import JobSpec, StepSpec, WorkflowRunSpec
from kruntimes_core.workflows.status import WorkflowRun, WorkflowRunStatus

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)
REPEATS = 7


def needs_map(jobs: int, seed: int = 7) -> dict[str, tuple[str, ...]]:
    rng = random.Random(seed)
    names = [f"job-{i:05d}" for i in range(jobs)]
    return {
        name: tuple(sorted({names[rng.randrange(i)] for _ in range(3)})) if i else ()
        for i, name in enumerate(names)
    }


def workflow_run(needs: dict[str, tuple[str, ...]]) -> WorkflowRun:
    step = (StepSpec(name="s", run="true"),)
    jobs = {job: JobSpec(runs_on="bash", steps=step, needs=deps) for job, deps in needs.items()}
    return WorkflowRun(ObjectMeta("bench", "ci", "bench-uid"), WorkflowRunSpec(jobs=jobs))


def accepted(wr: WorkflowRun) -> WorkflowRunSnapshot:
    """The run right after acceptance: snapshot taken, nothing else yet."""
    return WorkflowRunSnapshot(wr, new_snapshot(wr))


def drive(wr: WorkflowRun) -> tuple[float, int, WorkflowRunSnapshot]:
    """Decision time (only) to run every job to success, the number of decisions,
    and the finished world."""
    revision: ControllerRevision | None = None
    runs: dict[str, Run] = {}
    workspaces: dict[str, PersistentWorkspace] = {}
    spent, decisions = 0.0, 0
    while True:
        snapshot = WorkflowRunSnapshot(
            wr, revision, tuple(runs.values()), tuple(workspaces.values())
        )
        start = time.perf_counter()
        decision = decide_workflow_run(snapshot, NOW)
        spent += time.perf_counter() - start
        decisions += 1
        if not decision.actions:
            if wr.status.phase is not None and wr.status.phase.terminal:
                return spent, decisions, snapshot
            for name, run in runs.items():
                if run.active:
                    runs[name] = evolve(run, status=evolve(run.status, phase=RunPhase.SUCCEEDED))
            continue
        for action in decision.actions:
            if isinstance(action, PatchStatus):
                assert isinstance(action.status, WorkflowRunStatus)
                wr = evolve(wr, status=action.status)
            elif isinstance(action, CreateObject):
                obj = action.object
                if isinstance(obj, ControllerRevision):
                    revision = obj
                elif isinstance(obj, PersistentWorkspace):
                    bound = evolve(obj.status, phase=WorkspacePhase.BOUND)
                    workspaces[obj.metadata.name] = evolve(obj, status=bound)
                elif isinstance(obj, Run):
                    runs[obj.metadata.name] = obj


def static_order(needs: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    return tuple(graphlib.TopologicalSorter(needs).static_order())


def measure(jobs: int) -> dict[str, float]:
    """Timings for one graph size (run in a fresh process by ``main``)."""
    needs = needs_map(jobs)
    wr = workflow_run(needs)
    finished = drive(wr)[2] if jobs <= 2_000 else _finished(wr)
    restarted = evolve(finished, workflow_run=evolve(wr, status=WorkflowRunStatus()))
    return {
        "edges": sum(len(v) for v in needs.values()),
        "graphlib": best_of(REPEATS, functools.partial(static_order, needs)),
        # Just accepted: every inline job's workspace and every root's first Run.
        "accepted": best_of(REPEATS, functools.partial(decide_workflow_run, accepted(wr), NOW)),
        # A restarted controller re-deriving every job from its finished children.
        "finished": best_of(REPEATS, functools.partial(decide_workflow_run, restarted, NOW)),
    }


def main(argv: Sequence[str]) -> int:
    if argv and argv[0] == "--measure":
        print(json.dumps(measure(int(argv[1]))))
        return 0
    sizes = [int(a) for a in argv] or [1_000, 10_000]
    results = {}
    for jobs in sizes:
        # A fresh process per size: no size pays for another's garbage.
        out = subprocess.run(
            [sys.executable, "-m", "benchmarks", "workflows", "--measure", str(jobs)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        results[jobs] = timing = json.loads(out)
        print(
            f"jobs={jobs} edges={int(timing['edges'])}: graphlib {timing['graphlib'] * 1e3:.1f} ms"
        )
        for case in ("accepted", "finished"):
            took = timing[case]
            ratio = took / timing["graphlib"]
            print(f"  one reconcile, {case}: {took * 1e3:.1f} ms = {ratio:.1f}x graphlib")
    small, big = sizes[0], sizes[-1]
    for case in ("accepted", "finished"):
        growth = results[big][case] / results[small][case]
        print(f"growth {case}: time({big})/time({small}) = {growth:.2f}")
    spent, decisions, _ = drive(workflow_run(needs_map(1_000)))
    print(f"drive a 1000-job run to the end: {decisions} decisions, {spent:.2f} s deciding")
    return 0


def _finished(wr: WorkflowRun) -> WorkflowRunSnapshot:
    """Every job's workspace and succeeded Run, built directly (driving 10k is slow)."""
    from kruntimes_core.workflows.children import (  # noqa: PLC0415
        ResolvedStep,
        job_workspace,
        step_run,
    )
    from kruntimes_core.workflows.reconcile import DEFAULT_CONFIG  # noqa: PLC0415

    runs, workspaces = [], []
    for job, spec in wr.spec.jobs.items():
        ws = job_workspace(wr, job, spec.runs_on, DEFAULT_CONFIG)
        workspaces.append(evolve(ws, status=evolve(ws.status, phase=WorkspacePhase.BOUND)))
        resolved = ResolvedStep(job, "s", "bash", "true", (), {}, ())
        run = step_run(wr, resolved)
        runs.append(evolve(run, status=evolve(run.status, phase=RunPhase.SUCCEEDED)))
    return WorkflowRunSnapshot(wr, new_snapshot(wr), tuple(runs), tuple(workspaces))
