"""Properties of the WorkflowRun reconciler over random job graphs (spec workflows.md 4).

Each test draws a job graph (up to 200 jobs, 1-3 steps each) and a table of
step outcomes (a pure function of job and step), then drives one WorkflowRun
to its end in a ``WorkflowWorld``: settle (decide and apply until a decision
has no actions), complete some active Runs, repeat. Observers check the
rules on every decision; the world's records check them afterwards.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from random import Random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kruntimes_core.core.actions import CreateObject
from kruntimes_core.core.decision import Decision
from kruntimes_core.resources.run import Run, RunPhase
from kruntimes_core.resources.workspace import PersistentWorkspace
from kruntimes_core.testing.workflow_strategies import (
    JobGraphShape,
    OutcomeTable,
    build_workflow_run,
    job_graphs,
    outcome_tables,
)
from kruntimes_core.testing.workflow_world import Observer, Picker, WorkflowWorld
from kruntimes_core.workflows.naming import JOB_LABEL, STEP_LABEL
from kruntimes_core.workflows.status import (
    JobPhase,
    JobStatus,
    WorkflowRunPhase,
    WorkflowRunStatus,
)

DRIVES = settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

graphs = job_graphs(max_jobs=200)
rngs = st.randoms(use_true_random=True)


@st.composite
def graphs_and_outcomes(draw: st.DrawFn) -> tuple[JobGraphShape, OutcomeTable]:
    shape = draw(graphs)
    return shape, draw(outcome_tables(shape))


def random_batches(rng: Random) -> Picker:
    """Each round, a random non-empty prefix of a random permutation of the active Runs."""

    def pick(active: Sequence[str]) -> list[str]:
        chosen = list(active)
        rng.shuffle(chosen)
        return chosen[: rng.randint(1, len(chosen))]

    return pick


def drive(
    shape: JobGraphShape,
    table: OutcomeTable,
    *,
    observer: Observer | None = None,
    rng: Random | None = None,
) -> WorkflowWorld:
    world = WorkflowWorld(build_workflow_run(shape))
    world.drive(table, pick=None if rng is None else random_batches(rng), observer=observer)
    return world


def created_runs(decision: Decision[WorkflowRunStatus]) -> list[Run]:
    return [
        action.object
        for action in decision.actions
        if isinstance(action, CreateObject) and isinstance(action.object, Run)
    ]


def succeeded(world: WorkflowWorld, job: str, step: str) -> bool:
    run = world.step_run(job, step)
    return run is not None and run.status.phase is RunPhase.SUCCEEDED


def expected_phases(shape: JobGraphShape, table: OutcomeTable) -> dict[str, JobPhase]:
    """The model: Skipped below a failure, Failed on a failing step, else Succeeded."""
    phases: dict[str, JobPhase] = {}
    for job in shape.order:
        if any(phases[need] is not JobPhase.SUCCEEDED for need in shape.needs[job]):
            phases[job] = JobPhase.SKIPPED
        elif any(table.phase(job, s) is not RunPhase.SUCCEEDED for s in shape.steps[job]):
            phases[job] = JobPhase.FAILED
        else:
            phases[job] = JobPhase.SUCCEEDED
    return phases


def final_phases(world: WorkflowWorld) -> dict[str, JobPhase]:
    return {job: status.phase for job, status in world.status.jobs.items()}


@DRIVES
@given(graphs_and_outcomes(), rngs)
def test_a_job_starts_only_after_all_needs_succeeded(
    case: tuple[JobGraphShape, OutcomeTable], rng: Random
) -> None:
    shape, table = case

    def check(world: WorkflowWorld, decision: Decision[WorkflowRunStatus]) -> None:
        assert decision.status is not None
        for run in created_runs(decision):
            job = run.metadata.labels[JOB_LABEL]
            for need in shape.needs[job]:
                assert all(succeeded(world, need, step) for step in shape.steps[need]), (job, need)
                assert decision.status.jobs[need].phase is JobPhase.SUCCEEDED, (job, need)

    drive(shape, table, observer=check, rng=rng)


@DRIVES
@given(graphs_and_outcomes(), rngs)
def test_a_step_starts_only_after_the_earlier_steps_succeeded_and_its_workspace_exists(
    case: tuple[JobGraphShape, OutcomeTable], rng: Random
) -> None:
    shape, table = case

    def check(world: WorkflowWorld, decision: Decision[WorkflowRunStatus]) -> None:
        # Actions apply in order: a workspace created earlier in the decision exists.
        workspaces = set(world.workspaces)
        for action in decision.actions:
            if not isinstance(action, CreateObject):
                continue
            if isinstance(action.object, PersistentWorkspace):
                workspaces.add(action.target.name)
            if not isinstance(action.object, Run):
                continue
            run = action.object
            job, step = run.metadata.labels[JOB_LABEL], run.metadata.labels[STEP_LABEL]
            earlier = shape.steps[job][: shape.steps[job].index(step)]
            assert all(succeeded(world, job, s) for s in earlier), (job, step)
            assert run.workspace_name in workspaces, (job, step)

    drive(shape, table, observer=check, rng=rng)


@DRIVES
@given(graphs_and_outcomes(), rngs)
def test_skipped_iff_a_transitive_dependency_failed(
    case: tuple[JobGraphShape, OutcomeTable], rng: Random
) -> None:
    shape, table = case
    ancestors = shape.ancestors()

    def holds(jobs: Mapping[str, JobStatus]) -> None:
        for job, status in jobs.items():
            failed_below = any(jobs[a].phase is JobPhase.FAILED for a in ancestors[job])
            assert (status.phase is JobPhase.SKIPPED) == failed_below, job

    def check(_world: WorkflowWorld, decision: Decision[WorkflowRunStatus]) -> None:
        assert decision.status is not None
        holds(decision.status.jobs)

    world = drive(shape, table, observer=check, rng=rng)
    holds(world.status.jobs)


@DRIVES
@given(graphs_and_outcomes())
def test_final_phases_follow_from_the_step_outcomes(
    case: tuple[JobGraphShape, OutcomeTable],
) -> None:
    shape, table = case
    world = drive(shape, table)
    expected = expected_phases(shape, table)
    assert final_phases(world) == expected
    everything_succeeded = all(p is JobPhase.SUCCEEDED for p in expected.values())
    assert world.status.phase is (
        WorkflowRunPhase.SUCCEEDED if everything_succeeded else WorkflowRunPhase.FAILED
    )
    for job in shape.order:
        ran = [s for s in shape.steps[job] if world.step_run(job, s) is not None]
        if expected[job] is JobPhase.SKIPPED:
            assert ran == [], job
            continue
        # Steps run in order and stop at the first failing one.
        failing = [s for s in shape.steps[job] if table.phase(job, s) is not RunPhase.SUCCEEDED]
        last = shape.steps[job].index(failing[0]) + 1 if failing else len(shape.steps[job])
        assert ran == list(shape.steps[job][:last]), job


@DRIVES
@given(graphs_and_outcomes(), rngs)
def test_no_child_is_created_twice(case: tuple[JobGraphShape, OutcomeTable], rng: Random) -> None:
    """Not even when the controller loses the WorkflowRun's status between rounds."""
    shape, table = case
    world = WorkflowWorld(build_workflow_run(shape))
    pick = random_batches(rng)
    for _ in range(10_000):
        world.settle()
        if world.finished:
            break
        if rng.random() < 0.2:
            world.lose_status()
            continue
        for name in pick(world.active_runs()):
            world.complete(name, table(world.runs[name]))
    assert world.finished
    assert len(world.created) == len(set(world.created)), sorted(world.created)
    assert world.rejected == []
    assert final_phases(world) == expected_phases(shape, table)


@DRIVES
@given(graphs_and_outcomes(), rngs)
def test_terminal_job_phases_never_change(
    case: tuple[JobGraphShape, OutcomeTable], rng: Random
) -> None:
    shape, table = case
    world = drive(shape, table, rng=rng)
    for job, history in world.job_phases.items():
        terminal = [i for i, phase in enumerate(history) if phase.terminal]
        if terminal:
            assert set(history[terminal[0] :]) == {history[terminal[0]]}, (job, history)
    runs = world.run_phases
    terminal = [i for i, phase in enumerate(runs) if phase is not None and phase.terminal]
    assert terminal == list(range(terminal[0], len(runs))), runs
    assert set(runs[terminal[0] :]) == {runs[terminal[0]]}


@DRIVES
@given(graphs_and_outcomes(), rngs, st.data())
def test_final_phases_ignore_completion_order_and_key_order(
    case: tuple[JobGraphShape, OutcomeTable], rng: Random, data: st.DataObject
) -> None:
    shape, table = case
    reference = WorkflowWorld(build_workflow_run(shape))
    reference.drive(table)
    order = data.draw(st.permutations(shape.order) | st.just(shape.order[::-1]))
    shuffled = WorkflowWorld(build_workflow_run(shape, job_order=order, reverse=True))
    shuffled.drive(table, pick=random_batches(rng))

    def summary(world: WorkflowWorld) -> dict[str, tuple[JobPhase, tuple[str, ...]]]:
        return {
            job: (status.phase, tuple(step.phase.value for step in status.steps))
            for job, status in world.status.jobs.items()
        }

    assert summary(shuffled) == summary(reference)
    assert shuffled.status.phase is reference.status.phase
    assert {j: s.outputs for j, s in shuffled.status.jobs.items()} == {
        j: s.outputs for j, s in reference.status.jobs.items()
    }


def described(decision: Decision[WorkflowRunStatus]) -> list[str]:
    return [f"{type(a).__name__} {a.target.kind} {a.target.name}" for a in decision.actions]


@DRIVES
@given(graphs_and_outcomes(), rngs)
def test_deciding_again_after_applying_yields_no_actions(
    case: tuple[JobGraphShape, OutcomeTable], rng: Random
) -> None:
    """Spec README rule 3: applying a decision's actions and deciding again is a fixpoint."""
    shape, table = case

    def converges(world: WorkflowWorld, decision: Decision[WorkflowRunStatus]) -> None:
        assert world.decide() == decision, "the same snapshot gave another decision"
        if decision.actions:
            after = world.copy()
            assert after.apply(decision) == ()
            again = after.decide()
            assert again.actions == (), (described(decision), described(again))

    world = drive(shape, table, observer=converges, rng=rng)
    assert world.decide().actions == ()
