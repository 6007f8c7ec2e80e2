"""PersistentWorkspaces (spec workspaces.md section 1)."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import ClassVar

from attrs import field, frozen

from kruntimes_core.core.conditions import Condition
from kruntimes_core.core.errors import ValidationError
from kruntimes_core.core.meta import ObjectMeta
from kruntimes_core.core.names import label_value_problem
from kruntimes_core.core.validate import at_least, non_empty, subdomain_name, syntax
from kruntimes_core.core.wire import wire
from kruntimes_core.resources.runtime import API_VERSION

FINALIZER = "kruntimes.io/persistentworkspace-cleanup"
PERSISTENT_ROOT = "/workspace/persistent"
MAX_CONDITIONS = 16


def workspace_path(name: str) -> str:
    """Where a workspace lives on its pod's volume; derived, never read from status."""
    return f"{PERSISTENT_ROOT}/{name}"


class WorkspaceMode(StrEnum):
    RUNTIME_POD_LOCAL = "RuntimePodLocal"


class CleanupPolicy(StrEnum):
    DELETE_AFTER_TTL = "DeleteAfterTTL"
    RETAIN = "Retain"


class WorkspacePhase(StrEnum):
    PENDING = "Pending"
    BOUND = "Bound"
    LOST = "Lost"
    RELEASED = "Released"


@frozen
class WorkspaceSpec:
    runtime: str = field(validator=[non_empty, syntax(label_value_problem)])
    mode: WorkspaceMode = WorkspaceMode.RUNTIME_POD_LOCAL
    ttl_seconds_after_unused: int | None = field(default=None, validator=at_least(0))
    cleanup_policy: CleanupPolicy = CleanupPolicy.DELETE_AFTER_TTL


def _check_condition_count(
    _instance: object, _attribute: object, value: tuple[Condition, ...]
) -> None:
    if len(value) > MAX_CONDITIONS:
        raise ValidationError(
            f"must hold at most {MAX_CONDITIONS} items (got {len(value)})", ("conditions",)
        )


@frozen
class WorkspaceStatus:
    """``status``; an object the controller never saw has no phase yet."""

    phase: WorkspacePhase | None = None
    runtime: str = ""
    bound_pod: str = ""
    bound_pod_uid: str = field(default="", metadata=wire("boundPodUID"))
    path: str = ""
    last_used_time: datetime | None = None
    conditions: tuple[Condition, ...] = field(default=(), validator=_check_condition_count)


@frozen
class PersistentWorkspace:
    API_VERSION: ClassVar[str] = API_VERSION
    KIND: ClassVar[str] = "PersistentWorkspace"

    metadata: ObjectMeta = field(validator=subdomain_name)
    spec: WorkspaceSpec
    status: WorkspaceStatus = WorkspaceStatus()
