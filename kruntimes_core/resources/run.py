"""Runs, as the workspace decisions see them (spec workspaces.md section 1)."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import ClassVar

from attrs import field, frozen

from kruntimes_core.artifacts.refs import MAX_ARTIFACT_INPUTS, ArtifactInput, ArtifactRef
from kruntimes_core.core.errors import ValidationError
from kruntimes_core.core.meta import ObjectMeta
from kruntimes_core.core.names import dns1123_subdomain_problem, label_value_problem
from kruntimes_core.core.validate import non_empty, one_of, subdomain_name, syntax
from kruntimes_core.core.wire import wire
from kruntimes_core.resources.affinity import Affinity
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
class RunSource:
    inline: str = ""


@frozen
class TaskMode:
    args: tuple[str, ...] = ()


@frozen
class RunMode:
    task: TaskMode | None = None


@frozen
class EnvVar:
    name: str
    value: str = ""


def _check_inputs(_instance: object, _attribute: object, value: tuple[ArtifactInput, ...]) -> None:
    if len(value) > MAX_ARTIFACT_INPUTS:
        raise ValidationError(
            f"must hold at most {MAX_ARTIFACT_INPUTS} items (got {len(value)})",
            ("artifactInputs",),
        )


@frozen
class RunResources:
    requests: Mapping[str, int] = field(factory=dict)


@frozen
class RunSpec:
    runtime: str = field(validator=[non_empty, syntax(label_value_problem)])
    workspace: WorkspaceRef | None = None
    cancel_requested: bool = False
    source: RunSource | None = None
    mode: RunMode | None = None
    env: tuple[EnvVar, ...] = ()
    artifact_inputs: tuple[ArtifactInput, ...] = field(default=(), validator=_check_inputs)
    resources: RunResources = RunResources()
    affinity: Affinity = field(factory=Affinity)


@frozen
class RunStatus:
    phase: RunPhase = RunPhase.PENDING
    assigned_pod: str = ""
    assigned_pod_uid: str = field(default="", metadata=wire("assignedPodUID"))
    message: str = ""
    outputs: Mapping[str, str] = field(factory=dict)
    artifact_refs: tuple[ArtifactRef, ...] = ()


@frozen
class Run:
    API_VERSION: ClassVar[str] = API_VERSION
    KIND: ClassVar[str] = "Run"

    metadata: ObjectMeta = field(validator=subdomain_name)
    spec: RunSpec
    status: RunStatus = RunStatus()

    @property
    def active(self) -> bool:
        """Non-terminal: the Run still holds any workspace it names."""
        return not self.status.phase.terminal

    @property
    def slots(self) -> int:
        """Run slots this Run takes on its pod (``requests.runs``, default 1)."""
        return self.spec.resources.requests.get("runs", 1)

    @property
    def placed(self) -> bool:
        """Assigned to a pod and still holding its slot there."""
        return bool(self.status.assigned_pod) and self.active

    @property
    def workspace_name(self) -> str:
        return self.spec.workspace.name if self.spec.workspace else ""
