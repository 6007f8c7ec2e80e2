"""The WorkflowRun reconciler, driven to the end by a minimal API server."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from attrs import evolve

from kruntimes_core.adapters.kubernetes.convert import from_json
from kruntimes_core.adapters.manifests import read_documents
from kruntimes_core.artifacts.refs import (
    ArtifactRef,
    ArtifactType,
    Driver,
    FilesystemLocation,
    Location,
)
from kruntimes_core.core.actions import CreateObject
from kruntimes_core.core.meta import ObjectMeta
from kruntimes_core.resources.jsonvalue import JSONValue
from kruntimes_core.resources.run import Run, RunPhase
from kruntimes_core.resources.workspace import WorkspacePhase
from kruntimes_core.workflows.naming import JOB_LABEL, STEP_LABEL, WORKFLOWRUN_UID_LABEL
from kruntimes_core.workflows.spec import Workflow, WorkflowRunSpec
from kruntimes_core.workflows.status import (
    JobPhase,
    WorkflowRun,
    WorkflowRunPhase,
    WorkflowRunStatus,
)
from tests.workflows.world import World

ROOT = Path(__file__).resolve().parents[2]


def demo_run() -> WorkflowRun:
    (doc,) = read_documents(ROOT / "examples" / "workflows" / "ci-data-sharing-demo.yaml")
    workflow = from_json(Workflow, doc.value)
    return WorkflowRun(
        ObjectMeta("demo", "ci", "wr-uid", resource_version="1"),
        WorkflowRunSpec(jobs=workflow.spec.jobs),
    )


def run_of(jobs: Mapping[str, JSONValue], name: str = "wr") -> WorkflowRun:
    spec = from_json(WorkflowRunSpec, {"jobs": dict(jobs)})
    return WorkflowRun(ObjectMeta(name, "ci", f"{name}-uid"), spec)


def file_ref(run: Run, name: str) -> ArtifactRef:
    return ArtifactRef(
        name=name,
        driver=Driver.FILESYSTEM,
        type=ArtifactType.FILE,
        location=Location(
            filesystem=FilesystemLocation(f"runs/{run.metadata.uid}/artifacts/{name}")
        ),
    )


def demo_outcome(run: Run) -> tuple[RunPhase, Mapping[str, str], tuple[ArtifactRef, ...]]:
    step = run.metadata.labels[STEP_LABEL]
    if step == "test":
        return RunPhase.SUCCEEDED, {"tests": "passed"}, ()
    if step == "package":
        return RunPhase.SUCCEEDED, {}, (file_ref(run, "dist.tgz"),)
    return RunPhase.SUCCEEDED, {}, ()


def test_the_seed_demo_runs_to_success() -> None:
    world = World(demo_run())
    final = world.drive(demo_outcome)
    assert final.status.phase is WorkflowRunPhase.SUCCEEDED
    build = final.status.jobs["build"]
    assert build.outputs == {"tests": "passed"}
    assert [s.phase.value for s in build.steps] == ["Succeeded"] * 3
    assert set(build.artifacts) == {"dist.tgz"}
    deploy_run = next(r for r in world.runs.values() if r.metadata.labels[JOB_LABEL] == "deploy")
    (artifact_input,) = deploy_run.spec.artifact_inputs
    assert artifact_input.path == "dist.tgz"
    assert artifact_input.ref == build.artifacts["dist.tgz"]
    assert {e.name: e.value for e in deploy_run.spec.env} == {"TESTS": "passed"}


def test_the_first_decision_creates_snapshot_workspaces_and_the_first_run() -> None:
    world = World(demo_run())
    decision = world.decide()
    created = [a.target.kind for a in decision.actions if isinstance(a, CreateObject)]
    assert created == ["ControllerRevision", "PersistentWorkspace", "PersistentWorkspace", "Run"]
    assert decision.status is not None
    assert decision.status.phase is WorkflowRunPhase.RUNNING
    assert decision.status.jobs["deploy"].phase is JobPhase.WAITING
    checkout = decision.status.jobs["build"].steps[0]
    assert checkout.run_name.startswith("demo-")
    world.apply(decision)
    assert world.decide().actions == ()


def test_child_runs_carry_names_labels_and_owner() -> None:
    world = World(demo_run())
    world.settle()
    (run,) = world.runs.values()
    assert run.metadata.name.startswith("demo-")
    assert len(run.metadata.name) == len("demo-") + 10
    assert run.metadata.labels == {
        WORKFLOWRUN_UID_LABEL: "wr-uid",
        JOB_LABEL: "build",
        STEP_LABEL: "checkout",
    }
    owner = run.metadata.controller_owner()
    assert owner is not None
    assert (owner.kind, owner.uid) == ("WorkflowRun", "wr-uid")
    assert run.spec.workspace is not None
    assert run.spec.workspace.name.startswith("demo-ws-")


def test_a_failed_step_fails_its_job_and_skips_dependents_transitively() -> None:
    world = World(
        run_of(
            {
                "a": {"runs-on": "bash", "steps": [{"name": "s", "run": "false"}]},
                "b": {"runs-on": "bash", "needs": ["a"], "steps": [{"name": "s", "run": "x"}]},
                "c": {"runs-on": "bash", "needs": ["b"], "steps": [{"name": "s", "run": "x"}]},
                "d": {"runs-on": "bash", "steps": [{"name": "s", "run": "true"}]},
            }
        )
    )
    final = world.drive(
        lambda run: (
            RunPhase.FAILED if run.metadata.labels[JOB_LABEL] == "a" else RunPhase.SUCCEEDED,
            {},
            (),
        )
    )
    phases = {job: status.phase for job, status in final.status.jobs.items()}
    assert phases == {
        "a": JobPhase.FAILED,
        "b": JobPhase.SKIPPED,
        "c": JobPhase.SKIPPED,
        "d": JobPhase.SUCCEEDED,
    }
    assert final.status.phase is WorkflowRunPhase.FAILED
    assert final.status.jobs["c"].message == 'dependency "b" skipped'


def test_a_missing_output_fails_the_job_with_the_spec_message() -> None:
    world = World(
        run_of(
            {
                "build": {
                    "runs-on": "bash",
                    "outputs": {"tests": "${{ steps.test.outputs.tests }}"},
                    "steps": [{"name": "test", "run": "true"}],
                }
            }
        )
    )
    final = world.drive(lambda run: (RunPhase.SUCCEEDED, {}, ()))
    assert final.status.jobs["build"].message == (
        'resolve outputs for job "build": output "tests": no output "tests" in step "test"'
    )


def test_a_missing_artifact_fails_the_consumer_instead_of_waiting() -> None:
    world = World(
        run_of(
            {
                "a": {"runs-on": "bash", "steps": [{"name": "s", "run": "true"}]},
                "b": {
                    "runs-on": "bash",
                    "needs": ["a"],
                    "steps": [
                        {
                            "name": "s",
                            "run": "x",
                            "artifacts": [{"from": "jobs.a.artifacts.dist.tgz", "path": "d"}],
                        }
                    ],
                },
            }
        )
    )
    final = world.drive(lambda run: (RunPhase.SUCCEEDED, {}, ()))
    assert final.status.jobs["b"].phase is JobPhase.FAILED
    assert 'artifact "dist.tgz" of job "a" does not exist' in final.status.jobs["b"].message


def test_an_invalid_run_is_failed_and_creates_nothing() -> None:
    world = World(
        run_of({"a": {"runs-on": "bash", "needs": ["a"], "steps": [{"name": "s", "run": "x"}]}})
    )
    decision = world.decide()
    assert decision.status is not None
    assert decision.status.phase is WorkflowRunPhase.FAILED
    assert not [a for a in decision.actions if isinstance(a, CreateObject)]
    assert "cannot need itself" in decision.status.message


def test_cancellation_requests_cancel_and_ends_only_when_children_are_terminal() -> None:
    world = World(demo_run())
    world.settle()
    world.wr = evolve(world.wr, spec=evolve(world.wr.spec, cancel_requested=True))
    decision = world.settle()
    assert decision.status is not None
    assert decision.status.phase is WorkflowRunPhase.RUNNING
    (run,) = world.runs.values()
    assert run.spec.cancel_requested
    world.finish(run.metadata.name, RunPhase.CANCELLED)
    world.settle()
    assert world.wr.status.phase is WorkflowRunPhase.CANCELLED
    assert len(world.runs) == 1


def test_a_restarted_controller_adopts_its_children_and_creates_nothing_twice() -> None:
    world = World(demo_run())
    world.settle()
    world.wr = evolve(world.wr, status=WorkflowRunStatus())  # status lost
    decision = world.decide()
    assert not [a for a in decision.actions if isinstance(a, CreateObject)]


def test_a_foreign_object_with_the_child_name_is_never_adopted() -> None:
    world = World(demo_run())
    world.settle()
    (name,) = world.runs
    run = world.runs[name]
    world.runs[name] = evolve(run, metadata=ObjectMeta(name, "ci", "other"))
    world.settle()
    assert world.wr.status.jobs["build"].phase is JobPhase.FAILED
    assert "belongs to another object" in world.wr.status.jobs["build"].message


def test_a_lost_job_workspace_fails_the_job_before_its_next_step() -> None:
    world = World(demo_run())
    world.settle()
    (first,) = world.runs
    build_ws = next(
        name for name, ws in world.workspaces.items() if ws.metadata.labels[JOB_LABEL] == "build"
    )
    lost = world.workspaces[build_ws]
    world.workspaces[build_ws] = evolve(lost, status=evolve(lost.status, phase=WorkspacePhase.LOST))
    world.finish(first, RunPhase.SUCCEEDED)
    world.settle()
    build = world.wr.status.jobs["build"]
    assert build.phase is JobPhase.FAILED
    assert build.message == "job workspace was lost"
    assert world.wr.status.jobs["deploy"].phase is JobPhase.SKIPPED
    assert len(world.runs) == 1


def test_every_ready_job_starts_in_the_same_decision() -> None:
    world = World(
        run_of(
            {f"j{i}": {"runs-on": "bash", "steps": [{"name": "s", "run": "x"}]} for i in range(5)}
        )
    )
    world.settle()
    assert len(world.runs) == 5
    assert world.wr.status.phase is WorkflowRunPhase.RUNNING


def test_the_run_plans_from_its_snapshot_not_from_a_later_edit() -> None:
    world = World(demo_run())
    world.settle()
    assert world.revision is not None
    assert world.revision.metadata.name.startswith("demo-snapshot-")
    assert world.wr.status.snapshot_name == world.revision.metadata.name
    edited_jobs = {"other": world.wr.spec.jobs["build"]}
    world.wr = evolve(world.wr, spec=evolve(world.wr.spec, jobs=edited_jobs))
    final = world.drive(demo_outcome)
    assert set(final.status.jobs) == {"build", "deploy"}
    assert final.status.phase is WorkflowRunPhase.SUCCEEDED


def test_a_snapshot_owned_by_another_object_fails_the_run() -> None:
    world = World(demo_run())
    world.settle()
    assert world.revision is not None
    world.revision = evolve(
        world.revision,
        metadata=evolve(world.revision.metadata, owner_references=()),
    )
    world.wr = evolve(world.wr, status=WorkflowRunStatus())
    decision = world.decide()
    assert decision.status is not None
    assert decision.status.phase is WorkflowRunPhase.FAILED
    assert "belongs to another object" in decision.status.message


def test_terminal_runs_are_left_alone() -> None:
    world = World(demo_run())
    final = world.drive(demo_outcome)
    assert world.decide().actions == ()
    assert world.decide().status == final.status
