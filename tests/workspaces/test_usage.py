"""Usage tracking and the unused TTL (spec workspaces.md 3.1-3.2)."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from kruntimes_core.core.actions import DeleteObject, PatchStatus
from kruntimes_core.core.conditions import ConditionStatus
from kruntimes_core.resources.run import Run, RunPhase
from kruntimes_core.resources.workspace import CleanupPolicy, WorkspacePhase
from kruntimes_core.workspaces.controller import decide_workspace
from tests.workspaces.builders import (
    T0,
    action_types,
    at,
    bound_workspace,
    condition,
    patched_status,
    pod,
    run,
    runtime_pods,
    settle,
    workspace,
)

TRUE = ConditionStatus.TRUE
FALSE = ConditionStatus.FALSE
POD = pod("p-a")
PODS = runtime_pods(POD)
TEN_YEARS = 10 * 365 * 24 * 3600


# --------------------------------------------------------------------------- 3.1 active


@pytest.mark.parametrize(
    ("now", "expected"),
    [
        pytest.param(at(0), T0, id="whole-second"),
        pytest.param(at(0.999999), T0, id="truncated-not-rounded"),
        pytest.param(at(7.5), at(7), id="half-second"),
    ],
)
def test_newly_bound_without_runs_starts_idle_at_bind_time(
    now: datetime, expected: datetime
) -> None:
    decision = decide_workspace(workspace("data", ttl=3600), PODS, (), now)

    status = patched_status(decision)
    assert status.phase is WorkspacePhase.BOUND
    assert status.last_used_time == expected
    in_use = condition(status, "InUse")
    assert (in_use.status, in_use.reason) == (FALSE, "Unused")


def test_newly_bound_with_an_active_run_is_in_use() -> None:
    decision = decide_workspace(workspace("data", ttl=60), PODS, (run("r1"),), at(0))

    status = patched_status(decision)
    assert status.phase is WorkspacePhase.BOUND
    assert status.last_used_time is None
    in_use = condition(status, "InUse")
    assert (in_use.status, in_use.reason) == (TRUE, "ActiveRuns")
    assert decision.requeue_after is None


ACTIVITY_CASES = [
    pytest.param(run("r", phase=RunPhase.PENDING), True, id="pending"),
    pytest.param(run("r", phase=RunPhase.SCHEDULED), True, id="scheduled"),
    pytest.param(run("r", phase=RunPhase.RUNNING), True, id="running"),
    pytest.param(run("r", phase=RunPhase.READY), True, id="ready-function-mode"),
    pytest.param(run("r", phase=RunPhase.SUCCEEDED), False, id="succeeded"),
    pytest.param(run("r", phase=RunPhase.FAILED), False, id="failed"),
    pytest.param(run("r", phase=RunPhase.TIMEOUT), False, id="timeout"),
    pytest.param(run("r", phase=RunPhase.CANCELLED), False, id="cancelled"),
    pytest.param(run("r", workspace="other"), False, id="names-another-workspace"),
    pytest.param(run("r", workspace=None), False, id="no-workspace"),
    pytest.param(run("r", namespace="elsewhere"), False, id="same-name-other-namespace"),
]


@pytest.mark.parametrize(("the_run", "active"), ACTIVITY_CASES)
def test_which_runs_make_the_workspace_active(the_run: Run, active: bool) -> None:
    ws = bound_workspace(POD, ttl=60)

    decision = decide_workspace(ws, PODS, (the_run,), at(3600))

    assert decision.status is not None
    in_use = condition(decision.status, "InUse")
    if active:
        assert (in_use.status, in_use.reason) == (TRUE, "ActiveRuns")
        assert decision.status.phase is WorkspacePhase.BOUND
        assert DeleteObject not in action_types(decision)
    else:
        assert (in_use.status, in_use.reason) == (FALSE, "Unused")
        assert decision.status.last_used_time == T0
        assert decision.status.phase is WorkspacePhase.RELEASED


def test_active_run_reopens_and_next_idle_sets_a_new_last_used_time() -> None:
    ws = bound_workspace(POD, ttl=600)
    assert ws.status.last_used_time == T0

    busy = settle(ws, PODS, (run("r1", phase=RunPhase.RUNNING),), at(100))
    in_use = condition(busy, "InUse")
    assert (in_use.status, in_use.reason) == (TRUE, "ActiveRuns")
    assert in_use.last_transition_time == at(100)

    # the TTL does not run while active, however long it takes
    still_busy = decide_workspace(busy, PODS, (run("r1"),), at(100 + TEN_YEARS))
    assert still_busy.status is not None
    assert still_busy.status.phase is WorkspacePhase.BOUND
    assert still_busy.requeue_after is None
    assert still_busy.actions == ()

    idle = settle(busy, PODS, (run("r1", phase=RunPhase.SUCCEEDED),), at(5000.5))
    assert idle.status.last_used_time == at(5000)
    in_use = condition(idle, "InUse")
    assert (in_use.status, in_use.reason) == (FALSE, "Unused")
    assert in_use.last_transition_time == at(5000)
    assert idle.status.phase is WorkspacePhase.BOUND

    again = decide_workspace(idle, PODS, (), at(5001))
    assert again.requeue_after == at(5600) - at(5001)


def test_idle_deadline_never_moves_across_reconciles() -> None:
    ws = bound_workspace(POD, ttl=3600)
    runs = (run("done", phase=RunPhase.SUCCEEDED),)

    for seconds in (1, 10, 59.5, 600, 1800, 3599):
        decision = decide_workspace(ws, PODS, runs, at(seconds))
        assert decision.actions == ()
        assert decision.status == ws.status
        assert decision.requeue_after == at(3600) - at(seconds)
    assert ws.status.last_used_time == T0


# --------------------------------------------------------------------------- 3.2 TTL


@pytest.mark.parametrize(
    ("ttl", "now_seconds"),
    [
        pytest.param(60, 0, id="just-bound"),
        pytest.param(60, 0.5, id="half-second"),
        pytest.param(60, 12.345678, id="microseconds"),
        pytest.param(60, 59.999999, id="one-microsecond-left"),
        pytest.param(86400, 3600, id="one-day-ttl"),
        pytest.param(1, 0.25, id="one-second-ttl"),
    ],
)
def test_requeue_after_equals_remaining_time(ttl: int, now_seconds: float) -> None:
    ws = bound_workspace(POD, ttl=ttl)

    decision = decide_workspace(ws, PODS, (), at(now_seconds))

    assert decision.requeue_after == (T0 + timedelta(seconds=ttl)) - at(now_seconds)
    assert decision.actions == ()


def test_requeue_counts_from_the_truncated_bind_time() -> None:
    decision = decide_workspace(workspace("data", ttl=60), PODS, (), at(0.75))

    assert decision.status is not None
    assert decision.status.last_used_time == T0
    assert decision.requeue_after == timedelta(seconds=60) - timedelta(seconds=0.75)


@pytest.mark.parametrize(
    ("ttl", "now_seconds"),
    [
        pytest.param(60, 60, id="exactly-at-deadline"),
        pytest.param(60, 60.000001, id="just-after"),
        pytest.param(60, 7200, id="long-after"),
        pytest.param(0, 0, id="zero-ttl-immediately"),
    ],
)
def test_expired_ttl_releases_then_requests_deletion(ttl: int, now_seconds: float) -> None:
    ws = bound_workspace(POD, ttl=ttl) if ttl else workspace("data", ttl=0)

    decision = decide_workspace(ws, PODS, (), at(now_seconds))

    types = action_types(decision)
    assert PatchStatus in types
    assert DeleteObject in types
    assert types.index(PatchStatus) < types.index(DeleteObject)
    assert patched_status(decision).phase is WorkspacePhase.RELEASED
    assert decision.requeue_after is None
    assert any(e.reason == "Released" for e in decision.events)


@pytest.mark.parametrize(
    ("ttl", "policy"),
    [
        pytest.param(None, CleanupPolicy.DELETE_AFTER_TTL, id="no-ttl"),
        pytest.param(60, CleanupPolicy.RETAIN, id="retain-with-ttl"),
        pytest.param(0, CleanupPolicy.RETAIN, id="retain-zero-ttl"),
        pytest.param(None, CleanupPolicy.RETAIN, id="retain-no-ttl"),
    ],
)
def test_never_automatic(ttl: int | None, policy: CleanupPolicy) -> None:
    ws = settle(workspace("data", ttl=ttl, policy=policy), PODS, (), T0)
    assert ws.status.phase is WorkspacePhase.BOUND

    for seconds in (1, 60, 3600, TEN_YEARS):
        decision = decide_workspace(ws, PODS, (), at(seconds))
        assert decision.actions == ()
        assert decision.requeue_after is None
        assert decision.status == ws.status


def test_ttl_runs_while_the_bound_pod_is_not_ready() -> None:
    ws = bound_workspace(POD, ttl=60)
    unready = runtime_pods(pod("p-a", ready=False))

    before = decide_workspace(ws, unready, (), at(30))
    after = decide_workspace(ws, unready, (), at(60))

    assert before.requeue_after == timedelta(seconds=30)
    assert after.status is not None
    assert after.status.phase is WorkspacePhase.RELEASED
    assert DeleteObject in action_types(after)
