"""Runs, as the workspace decisions see them (spec workspaces.md section 1)."""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar

from attrs import field, frozen

from kruntimes_core.core.meta import ObjectMeta
from kruntimes_core.core.names import dns1123_subdomain_problem, label_value_problem
from kruntimes_core.core.validate import non_empty, one_of, syntax
from kruntimes_core.core.wire import wire
from kruntimes_core.resources.runtime import API_VERSION

WORKSPACE_KIND = "PersistentWorkspace"


class RunPhase(StrEnum):
    PENDING = "Pending"
    SCHEDULED = "Scheduled"
    RUNNING = "Running"
    READY = "Ready"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    TIMEOUT = "Timeout"
    CANCELLED = "Cancelled"

    @property
    def terminal(self) -> bool:
        return self in _TERMINAL


_TERMINAL = frozenset({RunPhase.SUCCEEDED, RunPhase.FAILED, RunPhase.TIMEOUT, RunPhase.CANCELLED})


@frozen
class WorkspaceRef:
    """``spec.workspace``: only PersistentWorkspaces of our API group exist today."""

    name: str = field(validator=[non_empty, syntax(dns1123_subdomain_problem)])
    kind: str = field(default=WORKSPACE_KIND, validator=one_of(WORKSPACE_KIND))
    api_group: str = field(default=API_VERSION, validator=one_of(API_VERSION))


@frozen
class RunSpec:
    runtime: str = field(validator=[non_empty, syntax(label_value_problem)])
    workspace: WorkspaceRef | None = None
    cancel_requested: bool = False


@frozen
class RunStatus:
    phase: RunPhase = RunPhase.PENDING
    assigned_pod: str = ""
    assigned_pod_uid: str = field(default="", metadata=wire("assignedPodUID"))
    message: str = ""


@frozen
class Run:
    API_VERSION: ClassVar[str] = API_VERSION
    KIND: ClassVar[str] = "Run"

    metadata: ObjectMeta
    spec: RunSpec
    status: RunStatus = RunStatus()

    @property
    def active(self) -> bool:
        """Non-terminal: the Run still holds any workspace it names."""
        return not self.status.phase.terminal

    @property
    def workspace_name(self) -> str:
        return self.spec.workspace.name if self.spec.workspace else ""
