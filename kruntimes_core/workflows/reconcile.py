"""The WorkflowRun reconciler's decision (spec workflows.md sections 4-5).

Theory of operation. Each reconcile rebuilds the whole status from the
accepted spec (the snapshot), the direct child Runs and the job workspaces:

1. accept: a run that fails validation is Failed (Accepted=False) and
   creates nothing; an accepted run plans from its snapshot;
2. walk the jobs once in topological order (O(jobs + edges)): a job with a
   Failed or Skipped need is Skipped; a job whose needs all Succeeded runs
   its steps in order (step status comes from the child Run of that step);
   a job with unfinished needs waits;
3. a runnable job gets its workspace first, then the Run of its next step,
   every runnable job in the same decision; cancellation creates nothing
   and asks active children to cancel;
4. the run's phase follows from the jobs; status is patched only when it
   changed. Terminal job and run phases never change.

Call jobs (``uses``) are the seam for reusable Workflows (section 6); until
that lands they fail with a message saying so.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from attrs import evolve, frozen

from kruntimes_core.artifacts.refs import ArtifactRef
from kruntimes_core.core.actions import Action, CreateObject, ObjectRef, PatchStatus, RequestCancel
from kruntimes_core.core.conditions import ConditionStatus, set_condition
from kruntimes_core.core.decision import Decision
from kruntimes_core.core.errors import InvalidInputError, ValidationError
from kruntimes_core.resources.run import Run, RunPhase
from kruntimes_core.resources.workspace import PersistentWorkspace, WorkspacePhase
from kruntimes_core.workflows.children import ControllerConfig, job_workspace, step_run
from kruntimes_core.workflows.graph import JobGraph
from kruntimes_core.workflows.naming import job_workspace_name, step_run_name
from kruntimes_core.workflows.resolve import resolve_job_outputs, resolve_step
from kruntimes_core.workflows.snapshot import ControllerRevision, new_snapshot, owned_by
from kruntimes_core.workflows.spec import JobSpec
from kruntimes_core.workflows.status import (
    JobPhase,
    JobStatus,
    StepPhase,
    StepStatus,
    WorkflowRun,
    WorkflowRunPhase,
    WorkflowRunStatus,
)
from kruntimes_core.workflows.validation import validate_jobs

ACCEPTED = "Accepted"
DEFAULT_CONFIG = ControllerConfig()
CALLS_NOT_AVAILABLE = "reusable Workflow calls (uses) are not available in this version"


@frozen
class WorkflowRunSnapshot:
    """What one WorkflowRun decision may read: the run and its direct children."""

    workflow_run: WorkflowRun
    revision: ControllerRevision | None = None
    runs: tuple[Run, ...] = ()
    workspaces: tuple[PersistentWorkspace, ...] = ()


def decide_workflow_run(
    snapshot: WorkflowRunSnapshot, now: datetime, config: ControllerConfig = DEFAULT_CONFIG
) -> Decision[WorkflowRunStatus]:
    """Decide one WorkflowRun. Never raises for a state of the world."""
    wr = snapshot.workflow_run
    if wr.status.phase is not None and wr.status.phase.terminal:
        return Decision(status=wr.status)
    actions: list[Action] = []
    revision = snapshot.revision
    if revision is not None and not owned_by(revision.metadata, wr.metadata.uid):
        return _fail(wr, now, f'snapshot "{revision.metadata.name}" belongs to another object')
    spec = wr.spec if revision is None else revision.data.spec
    try:
        graph = validate_jobs(spec.jobs)
    except ValidationError as error:
        return _fail(wr, now, str(error))
    if revision is None:
        created = new_snapshot(wr)
        actions.append(_create(created, created.metadata.name))
    walk = _Walk(wr, spec.jobs, graph, snapshot, config)
    jobs = walk.run()
    actions.extend(walk.actions)
    phase = _run_phase(jobs, walk.children_active, cancel=wr.spec.cancel_requested)
    conditions = set_condition(
        wr.status.conditions,
        ACCEPTED,
        ConditionStatus.TRUE,
        "Accepted",
        "spec is valid",
        now=now,
        observed_generation=wr.metadata.generation,
    )
    status = WorkflowRunStatus(
        phase=phase,
        snapshot_name=new_snapshot(wr).metadata.name,
        jobs=jobs,
        conditions=conditions,
        message=_run_message(jobs, phase),
    )
    return _finish(wr, status, actions)


def _fail(wr: WorkflowRun, now: datetime, message: str) -> Decision[WorkflowRunStatus]:
    conditions = set_condition(
        wr.status.conditions,
        ACCEPTED,
        ConditionStatus.FALSE,
        "Invalid",
        message,
        now=now,
        observed_generation=wr.metadata.generation,
    )
    status = evolve(
        wr.status, phase=WorkflowRunPhase.FAILED, conditions=conditions, message=message
    )
    return _finish(wr, status, [])


def _finish(
    wr: WorkflowRun, status: WorkflowRunStatus, actions: list[Action]
) -> Decision[WorkflowRunStatus]:
    if status != wr.status:
        target = ObjectRef.to(wr.API_VERSION, wr.KIND, wr.metadata)
        actions.append(PatchStatus(target, wr.metadata.resource_version, status))
    return Decision(status=status, actions=tuple(actions))


def _create(obj: ControllerRevision | Run | PersistentWorkspace, name: str) -> CreateObject[object]:
    meta = obj.metadata
    return CreateObject(ObjectRef(obj.API_VERSION, obj.KIND, meta.namespace, name, ""), obj)


class _Walk:
    """One pass over the jobs in topological order; collects actions as it goes."""

    def __init__(
        self,
        wr: WorkflowRun,
        specs: Mapping[str, JobSpec],
        graph: JobGraph,
        snapshot: WorkflowRunSnapshot,
        config: ControllerConfig,
    ) -> None:
        self.wr = wr
        self.specs = specs
        self.graph = graph
        self.config = config
        self.cancel = wr.spec.cancel_requested
        self.runs = {run.metadata.name: run for run in snapshot.runs}
        self.workspaces = {ws.metadata.name: ws for ws in snapshot.workspaces}
        self.actions: list[Action] = []
        self.children_active = False
        self.jobs: dict[str, JobStatus] = {}

    def run(self) -> dict[str, JobStatus]:
        for job in self.graph.order:
            previous = self.wr.status.jobs.get(job)
            fresh = self._job(job)
            kept = previous is not None and previous.phase.terminal
            self.jobs[job] = previous if kept and previous is not None else fresh
        return {job: self.jobs[job] for job in sorted(self.jobs)}

    def _job(self, job: str) -> JobStatus:
        spec = self.specs[job]
        needs = self.graph.needs(job)
        initial = JobStatus(
            phase=JobPhase.WAITING if needs else JobPhase.PENDING,
            pre=needs,
            steps=tuple(StepStatus(step.name) for step in spec.steps),
        )
        for need in needs:
            phase = self.jobs[need].phase
            if phase in (JobPhase.FAILED, JobPhase.SKIPPED):
                return evolve(
                    initial,
                    phase=JobPhase.SKIPPED,
                    message=f'dependency "{need}" {phase.value.lower()}',
                )
        if any(self.jobs[need].phase is not JobPhase.SUCCEEDED for need in needs):
            return initial
        if spec.is_call:
            return evolve(initial, phase=JobPhase.FAILED, message=CALLS_NOT_AVAILABLE)
        return self._inline(job, spec, initial)

    def _inline(self, job: str, spec: JobSpec, status: JobStatus) -> JobStatus:
        ws_name = job_workspace_name(self.wr.metadata.name, job)
        workspace = self.workspaces.get(ws_name)
        if workspace is None:
            if not self.cancel:
                created = job_workspace(self.wr, job, spec.runs_on, self.config)
                self.actions.append(_create(created, ws_name))
            return evolve(status, message="creating the job workspace")
        if not owned_by(workspace.metadata, self.wr.metadata.uid):
            return _failed(status, f'workspace "{ws_name}" exists and belongs to another object')
        steps = list(status.steps)
        artifacts = dict(status.artifacts)
        for index, step in enumerate(spec.steps):
            name = step_run_name(self.wr.metadata.name, job, step.name)
            child = self.runs.get(name)
            if child is not None and not owned_by(child.metadata, self.wr.metadata.uid):
                return _failed(status, f'Run "{name}" exists and belongs to another object')
            if child is None:
                return self._start_step(job, spec, index, steps, artifacts, workspace)
            steps[index] = _step_status(step.name, child)
            if child.active:
                self._cancel_if_requested(child)
                return evolve(status, phase=JobPhase.RUNNING, steps=tuple(steps))
            if child.status.phase is not RunPhase.SUCCEEDED:
                message = f'step "{step.name}" {child.status.phase.value.lower()}'
                detail = f": {child.status.message}" if child.status.message else ""
                return _failed(evolve(status, steps=tuple(steps)), message + detail)
            for ref in child.status.artifact_refs:
                artifacts[ref.name] = ref  # the most recent successful step wins
        done = evolve(status, steps=tuple(steps), artifacts=artifacts)
        try:
            outputs = resolve_job_outputs(job, spec, done, self.jobs)
        except InvalidInputError as error:
            return _failed(done, str(error))
        return evolve(done, phase=JobPhase.SUCCEEDED, outputs=outputs, message="")

    def _start_step(
        self,
        job: str,
        spec: JobSpec,
        index: int,
        steps: list[StepStatus],
        artifacts: dict[str, ArtifactRef],
        workspace: PersistentWorkspace,
    ) -> JobStatus:
        base = JobStatus(
            phase=JobPhase.RUNNING if index else self._initial_phase(job),
            pre=self.graph.needs(job),
            steps=tuple(steps),
            artifacts=artifacts,
        )
        if workspace.status.phase is WorkspacePhase.LOST:
            return _failed(base, "job workspace was lost")
        if self.cancel:
            return base
        try:
            resolved = resolve_step(job, spec, index, base, self.jobs)
        except InvalidInputError as error:
            return _failed(base, str(error))
        name = step_run_name(self.wr.metadata.name, job, spec.steps[index].name)
        self.actions.append(_create(step_run(self.wr, resolved), name))
        return evolve(base, phase=JobPhase.RUNNING)

    def _initial_phase(self, job: str) -> JobPhase:
        return JobPhase.WAITING if self.graph.needs(job) else JobPhase.PENDING

    def _cancel_if_requested(self, child: Run) -> None:
        self.children_active = True
        if self.cancel and not child.spec.cancel_requested:
            target = ObjectRef.to(child.API_VERSION, child.KIND, child.metadata)
            self.actions.append(RequestCancel(target))


def _failed(status: JobStatus, message: str) -> JobStatus:
    return evolve(status, phase=JobPhase.FAILED, message=message)


def _step_status(name: str, child: Run) -> StepStatus:
    phase = {
        RunPhase.SUCCEEDED: StepPhase.SUCCEEDED,
        RunPhase.FAILED: StepPhase.FAILED,
        RunPhase.TIMEOUT: StepPhase.FAILED,
        RunPhase.CANCELLED: StepPhase.FAILED,
        RunPhase.PENDING: StepPhase.PENDING,
    }.get(child.status.phase, StepPhase.RUNNING)
    return StepStatus(
        name=name,
        phase=phase,
        run_name=child.metadata.name,
        outputs=dict(child.status.outputs) if phase is StepPhase.SUCCEEDED else {},
        message=child.status.message,
    )


def _run_phase(
    jobs: Mapping[str, JobStatus], children_active: bool, *, cancel: bool
) -> WorkflowRunPhase:
    phases = [status.phase for status in jobs.values()]
    if cancel:
        return WorkflowRunPhase.RUNNING if children_active else WorkflowRunPhase.CANCELLED
    if all(phase is JobPhase.SUCCEEDED for phase in phases):
        return WorkflowRunPhase.SUCCEEDED
    if all(phase.terminal for phase in phases):
        return WorkflowRunPhase.FAILED
    started = any(
        phase is not JobPhase.PENDING and phase is not JobPhase.WAITING for phase in phases
    ) or any(step.run_name for status in jobs.values() for step in status.steps)
    return WorkflowRunPhase.RUNNING if started else WorkflowRunPhase.PENDING


def _run_message(jobs: Mapping[str, JobStatus], phase: WorkflowRunPhase) -> str:
    if phase is not WorkflowRunPhase.FAILED:
        return ""
    failed = [job for job in sorted(jobs) if jobs[job].phase is JobPhase.FAILED]
    return "; ".join(f'job "{job}": {jobs[job].message}' for job in failed)
