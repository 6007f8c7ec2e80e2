"""A minimal API server for WorkflowRun tests: applies a decision's actions."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime

from attrs import evolve

from kruntimes_core.artifacts.refs import ArtifactRef
from kruntimes_core.core.actions import CreateObject, PatchStatus, RequestCancel
from kruntimes_core.core.decision import Decision
from kruntimes_core.resources.run import Run, RunPhase
from kruntimes_core.resources.workspace import PersistentWorkspace, WorkspacePhase
from kruntimes_core.workflows.reconcile import WorkflowRunSnapshot, decide_workflow_run
from kruntimes_core.workflows.snapshot import ControllerRevision
from kruntimes_core.workflows.status import WorkflowRun, WorkflowRunStatus

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)
Outcome = Callable[[Run], tuple[RunPhase, Mapping[str, str], tuple[ArtifactRef, ...]]]


class World:
    def __init__(self, wr: WorkflowRun) -> None:
        self.wr = wr
        self.revision: ControllerRevision | None = None
        self.runs: dict[str, Run] = {}
        self.workspaces: dict[str, PersistentWorkspace] = {}
        self.created: list[str] = []
        self.next_uid = 0

    def _uid(self) -> str:
        self.next_uid += 1
        return f"uid-{self.next_uid}"

    def snapshot(self) -> WorkflowRunSnapshot:
        return WorkflowRunSnapshot(
            self.wr,
            self.revision,
            tuple(self.runs[name] for name in sorted(self.runs)),
            tuple(self.workspaces[name] for name in sorted(self.workspaces)),
        )

    def decide(self) -> Decision[WorkflowRunStatus]:
        return decide_workflow_run(self.snapshot(), NOW)

    def apply(self, decision: Decision[WorkflowRunStatus]) -> None:
        for action in decision.actions:
            if isinstance(action, CreateObject):
                obj = action.object
                name = action.target.name
                assert name not in self.created, f"{name} created twice"
                self.created.append(name)
                if isinstance(obj, ControllerRevision):
                    self.revision = obj
                elif isinstance(obj, PersistentWorkspace):
                    meta = evolve(obj.metadata, uid=self._uid())
                    status = evolve(obj.status, phase=WorkspacePhase.BOUND)
                    self.workspaces[name] = evolve(obj, metadata=meta, status=status)
                elif isinstance(obj, Run):
                    self.runs[name] = evolve(obj, metadata=evolve(obj.metadata, uid=self._uid()))
                else:
                    raise AssertionError(f"unexpected object {obj!r}")
            elif isinstance(action, PatchStatus):
                assert isinstance(action.status, WorkflowRunStatus)
                self.wr = evolve(self.wr, status=action.status)
            elif isinstance(action, RequestCancel):
                run = self.runs[action.target.name]
                self.runs[run.metadata.name] = evolve(
                    run, spec=evolve(run.spec, cancel_requested=True)
                )
            else:
                raise AssertionError(f"unexpected action {action!r}")

    def finish(
        self,
        name: str,
        phase: RunPhase,
        outputs: Mapping[str, str] = {},
        refs: tuple[ArtifactRef, ...] = (),
    ) -> None:
        run = self.runs[name]
        status = evolve(run.status, phase=phase, outputs=dict(outputs), artifact_refs=refs)
        self.runs[name] = evolve(run, status=status)

    def settle(self) -> Decision[WorkflowRunStatus]:
        """Decide and apply until a decision has no actions; return that decision."""
        for _ in range(100):
            decision = self.decide()
            if not decision.actions:
                return decision
            self.apply(decision)
        raise AssertionError("no fixpoint")

    def drive(self, outcome: Outcome) -> WorkflowRun:
        """Complete every active Run with ``outcome`` until the run is terminal."""
        for _ in range(10_000):
            self.settle()
            if self.wr.status.phase is not None and self.wr.status.phase.terminal:
                return self.wr
            active = sorted(name for name, run in self.runs.items() if run.active)
            assert active, f"stuck: {self.wr.status}"
            for name in active:
                phase, outputs, refs = outcome(self.runs[name])
                self.finish(name, phase, outputs, refs)
        raise AssertionError("did not finish")
