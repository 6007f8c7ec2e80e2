"""WorkflowRun status and the WorkflowRun object (spec workflows.md section 4)."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import ClassVar

from attrs import field, frozen

from kruntimes_core.artifacts.refs import ArtifactRef
from kruntimes_core.core.conditions import Condition
from kruntimes_core.core.meta import ObjectMeta
from kruntimes_core.core.validate import subdomain_name
from kruntimes_core.core.wire import always_written
from kruntimes_core.resources.runtime import API_VERSION
from kruntimes_core.workflows.spec import WorkflowRunSpec


class JobPhase(StrEnum):
    PENDING = "Pending"
    WAITING = "Waiting"
    RUNNING = "Running"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    SKIPPED = "Skipped"

    @property
    def terminal(self) -> bool:
        return self in (JobPhase.SUCCEEDED, JobPhase.FAILED, JobPhase.SKIPPED)


class StepPhase(StrEnum):
    PENDING = "Pending"
    RUNNING = "Running"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"


class WorkflowRunPhase(StrEnum):
    PENDING = "Pending"
    RUNNING = "Running"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    CANCELLED = "Cancelled"

    @property
    def terminal(self) -> bool:
        return self in (
            WorkflowRunPhase.SUCCEEDED,
            WorkflowRunPhase.FAILED,
            WorkflowRunPhase.CANCELLED,
        )


@frozen
class StepStatus:
    name: str
    phase: StepPhase = field(default=StepPhase.PENDING, metadata=always_written())
    run_name: str = ""
    outputs: Mapping[str, str] = field(factory=dict)
    message: str = ""


@frozen
class JobStatus:
    phase: JobPhase = field(default=JobPhase.PENDING, metadata=always_written())
    pre: tuple[str, ...] = ()
    steps: tuple[StepStatus, ...] = ()
    outputs: Mapping[str, str] = field(factory=dict)
    artifacts: Mapping[str, ArtifactRef] = field(factory=dict)
    workflow_run_name: str = ""
    message: str = ""


@frozen
class WorkflowRunStatus:
    phase: WorkflowRunPhase | None = None
    snapshot_name: str = ""
    jobs: Mapping[str, JobStatus] = field(factory=dict)
    conditions: tuple[Condition, ...] = ()
    message: str = ""


@frozen
class WorkflowRun:
    API_VERSION: ClassVar[str] = API_VERSION
    KIND: ClassVar[str] = "WorkflowRun"

    metadata: ObjectMeta = field(validator=subdomain_name)
    spec: WorkflowRunSpec
    status: WorkflowRunStatus = WorkflowRunStatus()
