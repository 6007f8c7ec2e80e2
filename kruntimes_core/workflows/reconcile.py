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
from types import MappingProxyType
from typing import Never

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
from kruntimes_core.workflows.naming import job_workspace_name, snapshot_name, step_run_name
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
# One shared, read-only empty mapping: most jobs and steps have no outputs or
# artifacts, and a fresh dict each would be garbage-collector work at scale.
_EMPTY: Mapping[str, Never] = MappingProxyType({})
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
        # The snapshot holds a spec accepted earlier: only its graph is rebuilt.
        graph = (
            validate_jobs(spec.jobs)
            if revision is None
            else JobGraph.build({job: spec.jobs[job].needs for job in spec.jobs})
        )
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
        snapshot_name=snapshot_name(wr.metadata.name, wr.metadata.uid),
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
        finished = {job for job, status in self.wr.status.jobs.items() if status.phase.terminal}
        self._create_workspaces(finished)
        for job in self.graph.order:
            previous = self.wr.status.jobs.get(job)
            self.jobs[job] = (
                previous if previous is not None and job in finished else self._job(job)
            )
        return {job: self.jobs[job] for job in sorted(self.jobs)}

    def _create_workspaces(self, finished: set[str]) -> None:
        """Every unfinished inline job gets its workspace from the start (spec 4)."""
        if self.cancel:
            return
        for job in sorted(self.specs):
            spec = self.specs[job]
            name = job_workspace_name(self.wr.metadata.name, job)
            if spec.is_call or job in finished or name in self.workspaces:
                continue
            created = job_workspace(self.wr, job, spec.runs_on, self.config)
            self.actions.append(_create(created, name))
            # Actions apply in order: this decision's Runs may already use it.
            self.workspaces[name] = created

    def _status(
        self,
        job: str,
        phase: JobPhase,
        *,
        steps: tuple[StepStatus, ...] | None = None,
        message: str = "",
        artifacts: Mapping[str, ArtifactRef] | None = None,
        outputs: Mapping[str, str] | None = None,
    ) -> JobStatus:
        if steps is None:
            steps = tuple(StepStatus(step.name) for step in self.specs[job].steps)
        return JobStatus(
            phase=phase,
            pre=self.graph.needs(job),
            steps=steps,
            outputs=outputs or _EMPTY,
            artifacts=artifacts or _EMPTY,
            message=message,
        )

    def _job(self, job: str) -> JobStatus:
        spec = self.specs[job]
        needs = self.graph.needs(job)
        for need in needs:
            phase = self.jobs[need].phase
            if phase in (JobPhase.FAILED, JobPhase.SKIPPED):
                message = f'dependency "{need}" {phase.value.lower()}'
                return self._status(job, JobPhase.SKIPPED, message=message)
        if any(self.jobs[need].phase is not JobPhase.SUCCEEDED for need in needs):
            return self._status(job, self._initial_phase(job))
        if spec.is_call:
            return self._status(job, JobPhase.FAILED, message=CALLS_NOT_AVAILABLE)
        return self._inline(job, spec)

    def _inline(self, job: str, spec: JobSpec) -> JobStatus:
        owner = self.wr.metadata
        ws_name = job_workspace_name(owner.name, job)
        workspace = self.workspaces.get(ws_name)
        if workspace is None:  # only while cancelling: nothing new is created
            return self._status(job, self._initial_phase(job), message="creating the job workspace")
        if not owned_by(workspace.metadata, owner.uid):
            message = f'workspace "{ws_name}" exists and belongs to another object'
            return self._status(job, JobPhase.FAILED, message=message)
        steps: list[StepStatus] = []
        artifacts: dict[str, ArtifactRef] = {}
        for step in spec.steps:
            name = step_run_name(owner.name, job, step.name)
            child = self.runs.get(name)
            if child is not None and not owned_by(child.metadata, owner.uid):
                message = f'Run "{name}" exists and belongs to another object'
                return self._status(job, JobPhase.FAILED, message=message)
            if child is None:
                return self._start_step(job, spec, steps, artifacts, workspace)
            steps.append(_step_status(step.name, child))
            if child.active:
                self._cancel_if_requested(child)
                running = self._rest(spec, steps)
                return self._status(job, JobPhase.RUNNING, steps=running, artifacts=artifacts)
            if child.status.phase is not RunPhase.SUCCEEDED:
                message = f'step "{step.name}" {child.status.phase.value.lower()}'
                detail = f": {child.status.message}" if child.status.message else ""
                return self._status(
                    job,
                    JobPhase.FAILED,
                    steps=self._rest(spec, steps),
                    artifacts=artifacts,
                    message=message + detail,
                )
            for ref in child.status.artifact_refs:
                artifacts[ref.name] = ref  # the most recent successful step wins
        done = tuple(steps)
        try:
            outputs = resolve_job_outputs(job, spec, done, self.jobs)
        except InvalidInputError as error:
            return self._status(
                job, JobPhase.FAILED, steps=done, artifacts=artifacts, message=str(error)
            )
        return self._status(
            job, JobPhase.SUCCEEDED, steps=done, artifacts=artifacts, outputs=outputs
        )

    @staticmethod
    def _rest(spec: JobSpec, steps: list[StepStatus]) -> tuple[StepStatus, ...]:
        """The observed steps followed by the ones not reached yet."""
        return (*steps, *(StepStatus(step.name) for step in spec.steps[len(steps) :]))

    def _start_step(
        self,
        job: str,
        spec: JobSpec,
        steps: list[StepStatus],
        artifacts: dict[str, ArtifactRef],
        workspace: PersistentWorkspace,
    ) -> JobStatus:
        index = len(steps)
        base = self._status(
            job,
            JobPhase.RUNNING if index else self._initial_phase(job),
            steps=self._rest(spec, steps),
            artifacts=artifacts,
        )
        if workspace.status.phase is WorkspacePhase.LOST:
            return evolve(base, phase=JobPhase.FAILED, message="job workspace was lost")
        if self.cancel:
            return base
        try:
            resolved = resolve_step(job, spec, index, base, self.jobs)
        except InvalidInputError as error:
            return evolve(base, phase=JobPhase.FAILED, message=str(error))
        step = spec.steps[index]
        name = step_run_name(self.wr.metadata.name, job, step.name)
        self.actions.append(_create(step_run(self.wr, resolved), name))
        started = StepStatus(step.name, run_name=name)  # what the next decision will see
        steps_now = (*base.steps[:index], started, *base.steps[index + 1 :])
        return evolve(base, phase=JobPhase.RUNNING, steps=steps_now)

    def _initial_phase(self, job: str) -> JobPhase:
        return JobPhase.WAITING if self.graph.needs(job) else JobPhase.PENDING

    def _cancel_if_requested(self, child: Run) -> None:
        self.children_active = True
        if self.cancel and not child.spec.cancel_requested:
            target = ObjectRef.to(child.API_VERSION, child.KIND, child.metadata)
            self.actions.append(RequestCancel(target))


_STEP_PHASE = {
    RunPhase.SUCCEEDED: StepPhase.SUCCEEDED,
    RunPhase.FAILED: StepPhase.FAILED,
    RunPhase.TIMEOUT: StepPhase.FAILED,
    RunPhase.CANCELLED: StepPhase.FAILED,
    RunPhase.PENDING: StepPhase.PENDING,
}


def _step_status(name: str, child: Run) -> StepStatus:
    phase = _STEP_PHASE.get(child.status.phase, StepPhase.RUNNING)
    return StepStatus(
        name=name,
        phase=phase,
        run_name=child.metadata.name,
        outputs=child.status.outputs if phase is StepPhase.SUCCEEDED else _EMPTY,
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
