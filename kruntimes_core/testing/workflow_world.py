"""An in-memory world in which WorkflowRun decisions act as on a cluster (spec workflows.md 4-5).

Theory of operation. The world holds one WorkflowRun, its snapshot (a
ControllerRevision), the direct child Runs and the job workspaces. Callers
read a ``WorkflowRunSnapshot`` from it, decide, and hand the decision back to
``WorkflowWorld.apply``, which applies the actions in order with Kubernetes
semantics:

- ``CreateObject`` stores the object with a fresh uid, ``creationTimestamp``
  and resourceVersion; a name that exists already is rejected
  (AlreadyExists) and the existing object stays. A PersistentWorkspace
  becomes ``Bound`` at once (the workspace controller is not modelled);
- ``PatchStatus`` replaces the WorkflowRun's status if the decision saw the
  current resourceVersion (a conflict otherwise);
- ``RequestCancel`` sets ``spec.cancelRequested`` on the Run it names.

An action whose target is missing, or exists with another uid, is rejected
as the API server would reject it; rejections are recorded, never raised.

What the decisions cannot do is done by the caller: ``complete`` ends an
active Run with a phase, outputs and artifact refs (as runtimed would),
``request_cancel`` is the user's cancel, ``lose_status`` wipes the status.
``drive`` repeats "settle, then complete some active Runs" until the
WorkflowRun is terminal.

While applying, the world records the facts properties need (it judges
nothing itself): every name a decision asked to create (``created``; a name
twice means a child was created twice), every rejection, the phase of every
job and of the run after each applied decision, and how many decisions with
actions each ``settle`` needed before a decision had none.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime

from attrs import evolve, field, frozen

from kruntimes_core.artifacts.refs import (
    ArtifactRef,
    ArtifactType,
    Driver,
    FilesystemLocation,
    Location,
)
from kruntimes_core.core.actions import Action, CreateObject, PatchStatus, RequestCancel
from kruntimes_core.core.decision import Decision
from kruntimes_core.core.meta import ObjectMeta
from kruntimes_core.resources.run import Run, RunPhase
from kruntimes_core.resources.workspace import PersistentWorkspace, WorkspacePhase
from kruntimes_core.workflows.children import ControllerConfig
from kruntimes_core.workflows.naming import job_workspace_name, step_run_name
from kruntimes_core.workflows.reconcile import (
    DEFAULT_CONFIG,
    WorkflowRunSnapshot,
    decide_workflow_run,
)
from kruntimes_core.workflows.snapshot import ControllerRevision
from kruntimes_core.workflows.status import (
    JobPhase,
    WorkflowRun,
    WorkflowRunPhase,
    WorkflowRunStatus,
)

__all__ = [
    "NOW",
    "Completion",
    "DriveError",
    "Observer",
    "Outcome",
    "Picker",
    "Rejection",
    "WorkflowWorld",
    "file_ref",
]

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)
"""The default virtual time; WorkflowRun decisions do not depend on time passing."""

MAX_SETTLE_DECISIONS = 100
MAX_DRIVE_ROUNDS = 100_000


class DriveError(Exception):
    """The world did not reach a fixpoint, or no Run is left to complete (a stuck run)."""


@frozen
class Completion:
    """How an active Run ends: a terminal phase, and what runtimed reports for it."""

    phase: RunPhase
    outputs: Mapping[str, str] = field(factory=dict)
    artifact_refs: tuple[ArtifactRef, ...] = ()
    message: str = ""


@frozen
class Rejection:
    """An action the API server refused, and why (e.g. ``AlreadyExists``)."""

    action: Action
    reason: str


Outcome = Callable[[Run], Completion]
"""How the world completes an active Run (read its labels for job and step)."""
Picker = Callable[[Sequence[str]], Sequence[str]]
"""From the sorted names of the active Runs, which to complete this round, in order."""
Observer = Callable[["WorkflowWorld", Decision[WorkflowRunStatus]], None]
"""Called with every decision ``settle`` makes, before it is applied."""


def file_ref(run: Run, name: str) -> ArtifactRef:
    """A Filesystem artifact ``name`` as runtimed reports it for ``run``."""
    path = f"runs/{run.metadata.uid}/artifacts/{name}"
    return ArtifactRef(
        name=name,
        driver=Driver.FILESYSTEM,
        type=ArtifactType.FILE,
        location=Location(filesystem=FilesystemLocation(path)),
    )


class WorkflowWorld:
    """One WorkflowRun and its direct children, changed only through actions and callers."""

    def __init__(
        self,
        workflow_run: WorkflowRun,
        *,
        now: datetime = NOW,
        config: ControllerConfig = DEFAULT_CONFIG,
        bind_workspaces: bool = True,
    ) -> None:
        meta = workflow_run.metadata
        self.workflow_run = evolve(
            workflow_run,
            metadata=evolve(
                meta,
                uid=meta.uid or "workflowrun-uid",
                resource_version=meta.resource_version or "1",
                generation=meta.generation or 1,
            ),
        )
        self.now = now
        self.config = config
        self.bind_workspaces = bind_workspaces
        self.revision: ControllerRevision | None = None
        self.runs: dict[str, Run] = {}
        self.workspaces: dict[str, PersistentWorkspace] = {}
        self.created: list[str] = []
        """Every name a CreateObject asked for, in order, including rejected ones."""
        self.rejected: list[Rejection] = []
        self.job_phases: dict[str, list[JobPhase]] = {}
        """Per job, its phase in the WorkflowRun status after each applied decision."""
        self.run_phases: list[WorkflowRunPhase | None] = []
        """The WorkflowRun's phase after each applied decision."""
        self.settle_lengths: list[int] = []
        """Per ``settle``, how many decisions had actions before one had none."""
        self._next_uid = 0

    # -- reading -------------------------------------------------------------

    @property
    def status(self) -> WorkflowRunStatus:
        return self.workflow_run.status

    @property
    def finished(self) -> bool:
        phase = self.workflow_run.status.phase
        return phase is not None and phase.terminal

    def snapshot(self) -> WorkflowRunSnapshot:
        """What a WorkflowRun decision reads, children in name order."""
        return WorkflowRunSnapshot(
            workflow_run=self.workflow_run,
            revision=self.revision,
            runs=tuple(self.runs[name] for name in sorted(self.runs)),
            workspaces=tuple(self.workspaces[name] for name in sorted(self.workspaces)),
        )

    def decide(self) -> Decision[WorkflowRunStatus]:
        return decide_workflow_run(self.snapshot(), self.now, self.config)

    def active_runs(self) -> tuple[str, ...]:
        """Names of the Runs that are not terminal, sorted."""
        return tuple(sorted(name for name, run in self.runs.items() if run.active))

    def step_run(self, job: str, step: str) -> Run | None:
        """The child Run of ``step`` in ``job``, if it was created."""
        return self.runs.get(step_run_name(self.workflow_run.metadata.name, job, step))

    def job_workspace(self, job: str) -> PersistentWorkspace | None:
        return self.workspaces.get(job_workspace_name(self.workflow_run.metadata.name, job))

    def copy(self) -> WorkflowWorld:
        """An independent world in the same state (to apply a decision and look again)."""
        clone = copy.copy(self)
        clone.runs = dict(self.runs)
        clone.workspaces = dict(self.workspaces)
        clone.created = list(self.created)
        clone.rejected = list(self.rejected)
        clone.job_phases = {job: list(history) for job, history in self.job_phases.items()}
        clone.run_phases = list(self.run_phases)
        clone.settle_lengths = list(self.settle_lengths)
        return clone

    # -- applying decisions --------------------------------------------------

    def apply(self, decision: Decision[WorkflowRunStatus]) -> tuple[Rejection, ...]:
        """Apply the actions in order; return (and record) those the API server refused."""
        rejected: list[Rejection] = []
        for action in decision.actions:
            reason = self._apply(action)
            if reason is not None:
                rejected.append(Rejection(action, reason))
        self.rejected.extend(rejected)
        for job, job_status in self.workflow_run.status.jobs.items():
            self.job_phases.setdefault(job, []).append(job_status.phase)
        self.run_phases.append(self.workflow_run.status.phase)
        return tuple(rejected)

    def _apply(self, action: Action) -> str | None:
        if isinstance(action, CreateObject):
            return self._create(action)
        if isinstance(action, PatchStatus):
            return self._patch_status(action)
        if isinstance(action, RequestCancel):
            return self._request_cancel(action)
        return f"unsupported action {type(action).__name__}"

    def _uid(self) -> str:
        self._next_uid += 1
        return f"uid-{self._next_uid}"

    def _create(self, action: CreateObject[object]) -> str | None:
        name = action.target.name
        self.created.append(name)
        obj = action.object
        if not isinstance(obj, ControllerRevision | PersistentWorkspace | Run):
            return f"unsupported kind {action.target.kind}"
        if obj.metadata.name != name or obj.metadata.namespace != action.target.namespace:
            return "Invalid: the target does not name the object"
        if obj.metadata.namespace != self.workflow_run.metadata.namespace:
            return "Invalid: a child lives in its owner's namespace"
        meta = evolve(
            obj.metadata, uid=self._uid(), creation_timestamp=self.now, resource_version="1"
        )
        if isinstance(obj, ControllerRevision):
            if self.revision is not None and self.revision.metadata.name == name:
                return "AlreadyExists"
            self.revision = evolve(obj, metadata=meta)
        elif isinstance(obj, PersistentWorkspace):
            if name in self.workspaces:
                return "AlreadyExists"
            workspace = evolve(obj, metadata=meta)
            if self.bind_workspaces:
                bound = evolve(obj.status, phase=WorkspacePhase.BOUND, runtime=obj.spec.runtime)
                workspace = evolve(workspace, status=bound)
            self.workspaces[name] = workspace
        else:
            if name in self.runs:
                return "AlreadyExists"
            self.runs[name] = evolve(obj, metadata=meta)
        return None

    def _patch_status(self, action: PatchStatus[object]) -> str | None:
        meta = self.workflow_run.metadata
        if (action.target.name, action.target.uid) != (meta.name, meta.uid):
            return "NotFound"
        if action.resource_version != meta.resource_version:
            return "Conflict: the decision read an older resourceVersion"
        if not isinstance(action.status, WorkflowRunStatus):
            return "Invalid: not a WorkflowRun status"
        self.workflow_run = evolve(self.workflow_run, metadata=_bumped(meta), status=action.status)
        return None

    def _request_cancel(self, action: RequestCancel) -> str | None:
        run = self.runs.get(action.target.name)
        if action.target.kind != Run.KIND or run is None:
            return "NotFound"
        if run.metadata.uid != action.target.uid:
            return "Conflict: another object has that name now"
        spec = evolve(run.spec, cancel_requested=True)
        self.runs[run.metadata.name] = evolve(run, metadata=_bumped(run.metadata), spec=spec)
        return None

    # -- what callers do -----------------------------------------------------

    def complete(self, name: str, completion: Completion) -> None:
        """End the active Run ``name`` as runtimed would. Raises ValueError otherwise."""
        run = self.runs[name]
        if not run.active:
            raise ValueError(f"Run {name!r} is terminal already")
        if not completion.phase.terminal:
            raise ValueError(f"{completion.phase.value} is not a terminal Run phase")
        status = evolve(
            run.status,
            phase=completion.phase,
            outputs=dict(completion.outputs),
            artifact_refs=completion.artifact_refs,
            message=completion.message,
        )
        self.runs[name] = evolve(run, metadata=_bumped(run.metadata), status=status)

    def set_run_phase(self, name: str, phase: RunPhase) -> None:
        """Move an active Run to a non-terminal phase (Scheduled, Running, ...)."""
        run = self.runs[name]
        if not run.active or phase.terminal:
            raise ValueError(f"use complete() to end Run {name!r}")
        status = evolve(run.status, phase=phase)
        self.runs[name] = evolve(run, metadata=_bumped(run.metadata), status=status)

    def set_workspace_phase(self, job: str, phase: WorkspacePhase) -> None:
        """What the workspace controller would do to the job's workspace (e.g. Lost)."""
        name = job_workspace_name(self.workflow_run.metadata.name, job)
        workspace = self.workspaces[name]
        status = evolve(workspace.status, phase=phase)
        self.workspaces[name] = evolve(
            workspace, metadata=_bumped(workspace.metadata), status=status
        )

    def request_cancel(self) -> None:
        """The user sets ``spec.cancelRequested: true`` on the WorkflowRun."""
        wr = self.workflow_run
        meta = evolve(_bumped(wr.metadata), generation=wr.metadata.generation + 1)
        spec = evolve(wr.spec, cancel_requested=True)
        self.workflow_run = evolve(wr, metadata=meta, spec=spec)

    def lose_status(self) -> None:
        """The WorkflowRun's status is gone (e.g. restored from a backup without it)."""
        wr = self.workflow_run
        self.workflow_run = evolve(wr, metadata=_bumped(wr.metadata), status=WorkflowRunStatus())

    # -- loops ---------------------------------------------------------------

    def settle(
        self, observer: Observer | None = None, *, limit: int = MAX_SETTLE_DECISIONS
    ) -> Decision[WorkflowRunStatus]:
        """Decide and apply until a decision has no actions; return that decision.

        Raises DriveError when ``limit`` decisions all had actions.
        """
        for count in range(limit + 1):
            decision = self.decide()
            if observer is not None:
                observer(self, decision)
            if not decision.actions:
                self.settle_lengths.append(count)
                return decision
            self.apply(decision)
        raise DriveError(f"no fixpoint after {limit} decisions with actions")

    def drive(
        self,
        outcome: Outcome,
        *,
        pick: Picker | None = None,
        observer: Observer | None = None,
        max_rounds: int = MAX_DRIVE_ROUNDS,
    ) -> WorkflowRun:
        """Settle, complete active Runs, repeat until the WorkflowRun is terminal.

        Each round completes the Runs ``pick`` chooses from the sorted active
        ones (all of them, in name order, without ``pick``), each with
        ``outcome``; an active Run it leaves is ``Running`` from then on.
        Raises DriveError when the run is stuck (no active Run, not terminal),
        ``pick`` chooses nothing, or ``max_rounds`` pass.
        """
        for _ in range(max_rounds):
            self.settle(observer)
            if self.finished:
                return self.workflow_run
            active = self.active_runs()
            if not active:
                raise DriveError(f"stuck without active Runs: {self.workflow_run.status!r}")
            chosen = list(pick(active)) if pick is not None else list(active)
            if not chosen:
                raise DriveError("the picker chose no Run to complete")
            for name in chosen:
                self.complete(name, outcome(self.runs[name]))
            for name in active:
                run = self.runs[name]
                if run.active and run.status.phase is not RunPhase.RUNNING:
                    self.set_run_phase(name, RunPhase.RUNNING)
        raise DriveError(f"not terminal after {max_rounds} rounds")


def _bumped(meta: ObjectMeta) -> ObjectMeta:
    """``meta`` at the next resourceVersion (every write to an object makes one)."""
    return evolve(meta, resource_version=str(int(meta.resource_version or "0") + 1))
