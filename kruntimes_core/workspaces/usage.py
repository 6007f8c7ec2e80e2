"""Usage tracking and the unused TTL (spec workspaces.md 3.1-3.2).

Theory of operation. A workspace is active while any Run naming it is
non-terminal. The moment it is seen idle, ``lastUsedTime`` is written once
and the ``InUse`` condition turns False with reason ``Unused``; that
condition is the memory that the idle period already started, so later
reconciles keep the same deadline. Becoming active flips ``InUse`` back to
True, and the next idle period starts a new ``lastUsedTime``.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from attrs import frozen

from kruntimes_core.core.conditions import ConditionStatus, find_condition
from kruntimes_core.core.timeutil import to_k8s_time
from kruntimes_core.resources.workspace import CleanupPolicy, WorkspaceSpec, WorkspaceStatus

IN_USE = "InUse"
ACTIVE_RUNS = "ActiveRuns"
UNUSED = "Unused"
ACTIVE_MESSAGE = "non-terminal Runs reference the workspace"
UNUSED_MESSAGE = "no non-terminal Run references the workspace"


def idle_seen(status: WorkspaceStatus) -> bool:
    """Whether the current idle period was already recorded."""
    found = find_condition(status.conditions, IN_USE)
    return (
        found is not None
        and found.status is ConditionStatus.FALSE
        and found.reason == UNUSED
        and status.last_used_time is not None
    )


def last_used_time(status: WorkspaceStatus, *, active: bool, now: datetime) -> datetime | None:
    """``lastUsedTime`` after this observation: written once per idle period."""
    if active or idle_seen(status):
        return status.last_used_time
    return to_k8s_time(now)


@frozen
class TTLVerdict:
    expired: bool
    remaining: timedelta | None
    message: str


_NEVER = TTLVerdict(expired=False, remaining=None, message="")


def deadline(spec: WorkspaceSpec, last_used: datetime | None) -> datetime | None:
    """When automatic cleanup may start; None when it never starts automatically."""
    if spec.cleanup_policy is not CleanupPolicy.DELETE_AFTER_TTL:
        return None
    if spec.ttl_seconds_after_unused is None or last_used is None:
        return None
    return last_used + timedelta(seconds=spec.ttl_seconds_after_unused)


def ttl_verdict(
    spec: WorkspaceSpec, last_used: datetime | None, *, active: bool, now: datetime
) -> TTLVerdict:
    """Whether the unused TTL has run out, and if not, how long remains."""
    due = deadline(spec, last_used)
    if active or due is None:
        return _NEVER
    if now >= due:
        return TTLVerdict(
            expired=True,
            remaining=None,
            message=f"unused for {spec.ttl_seconds_after_unused}s since "
            f"{last_used:%Y-%m-%dT%H:%M:%SZ}",
        )
    return TTLVerdict(expired=False, remaining=due - now, message="")
