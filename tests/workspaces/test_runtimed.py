"""runtimed's half of the cleanup protocol (spec workspaces.md 3.4 and 3.6)."""

from __future__ import annotations

import pytest
from attrs import evolve

from kruntimes_core.core.actions import (
    DeleteWorkspaceDirectory,
    ObjectRef,
    PatchStatus,
    RemoveFinalizer,
)
from kruntimes_core.resources.pod import Pod
from kruntimes_core.resources.run import Run, RunPhase
from kruntimes_core.resources.workspace import (
    FINALIZER,
    PersistentWorkspace,
    WorkspacePhase,
    WorkspaceStatus,
)
from kruntimes_core.workspaces.runtimed import decide_local_cleanup
from tests.workspaces.builders import (
    action_types,
    bound_workspace,
    placed_run,
    pod,
    run,
    with_deletion,
    without_finalizer,
)

POD = pod("p-a")


def deleting_workspace(name: str = "data") -> PersistentWorkspace:
    return with_deletion(bound_workspace(POD, name=name))


def assert_no_action(decision_pod: Pod, ws: PersistentWorkspace, runs: tuple[Run, ...] = ()) -> str:
    decision = decide_local_cleanup(decision_pod, ws, runs)
    assert decision.actions == ()
    assert decision.status is None
    return decision.message


# --------------------------------------------------------------------------- fencing


@pytest.mark.parametrize(
    "me",
    [
        pytest.param(pod("p-a", uid="uid-successor"), id="same-name-other-uid"),
        pytest.param(pod("p-b"), id="other-name"),
        pytest.param(pod("p-b", uid="uid-p-a"), id="other-name-same-uid"),
        pytest.param(pod("p-a", uid=""), id="same-name-no-uid"),
    ],
)
def test_never_acts_for_another_pod(me: Pod) -> None:
    ws = deleting_workspace()
    message = assert_no_action(me, ws)

    assert "not bound to this pod" in message


def test_empty_uids_never_match() -> None:
    """A binding without a uid is no binding: runtimed with no uid must not act."""
    ws = deleting_workspace()
    ws = evolve(ws, status=evolve(ws.status, bound_pod_uid=""))

    assert_no_action(pod("p-a", uid=""), ws)
    assert_no_action(POD, ws)


def test_never_acts_for_a_workspace_bound_elsewhere_or_unbound() -> None:
    unbound = evolve(deleting_workspace(), status=WorkspaceStatus())

    assert_no_action(POD, unbound)


# --------------------------------------------------------------------------- not deleting


@pytest.mark.parametrize(
    "ws",
    [
        pytest.param(bound_workspace(POD), id="bound"),
        pytest.param(bound_workspace(POD, ttl=3600), id="bound-with-ttl"),
        pytest.param(
            evolve(
                bound_workspace(POD),
                status=evolve(bound_workspace(POD).status, phase=WorkspacePhase.RELEASED),
            ),
            id="released-deletion-not-landed",
        ),
    ],
)
def test_never_acts_when_not_deleting(ws: PersistentWorkspace) -> None:
    message = assert_no_action(POD, ws)
    assert "not being deleted" in message


def test_nothing_to_do_once_the_finalizer_is_gone() -> None:
    ws = without_finalizer(deleting_workspace())

    assert_no_action(POD, ws)


# --------------------------------------------------------------------------- local Runs

BLOCKING_CASES = [
    pytest.param(placed_run("r1", POD, phase=RunPhase.PENDING), True, id="pending"),
    pytest.param(placed_run("r1", POD, phase=RunPhase.SCHEDULED), True, id="scheduled"),
    pytest.param(placed_run("r1", POD, phase=RunPhase.RUNNING), True, id="running"),
    pytest.param(placed_run("r1", POD, phase=RunPhase.READY), True, id="ready-function-mode"),
    pytest.param(placed_run("r1", POD, phase=RunPhase.SUCCEEDED), False, id="succeeded"),
    pytest.param(placed_run("r1", POD, phase=RunPhase.FAILED), False, id="failed"),
    pytest.param(placed_run("r1", POD, phase=RunPhase.TIMEOUT), False, id="timeout"),
    pytest.param(placed_run("r1", POD, phase=RunPhase.CANCELLED), False, id="cancelled"),
    pytest.param(placed_run("r1", POD, workspace="other"), False, id="other-workspace"),
    pytest.param(placed_run("r1", POD, workspace=None), False, id="no-workspace"),
    pytest.param(
        run("r1", namespace="elsewhere", assigned_pod="p-a", assigned_pod_uid="uid-p-a"),
        False,
        id="same-workspace-name-other-namespace",
    ),
]


@pytest.mark.parametrize(("local", "blocks"), BLOCKING_CASES)
def test_waits_for_local_non_terminal_runs(local: Run, blocks: bool) -> None:
    ws = deleting_workspace()

    decision = decide_local_cleanup(POD, ws, (local,))

    assert decision.status is None
    if blocks:
        assert decision.actions == ()
        assert "r1" in decision.message
    else:
        assert action_types(decision) == [DeleteWorkspaceDirectory, RemoveFinalizer]


def test_waiting_message_names_every_blocking_run() -> None:
    ws = deleting_workspace()
    runs = (
        placed_run("zeta", POD),
        placed_run("alpha", POD, phase=RunPhase.PENDING),
        placed_run("done", POD, phase=RunPhase.SUCCEEDED),
        placed_run("elsewhere", POD, workspace="other"),
    )

    message = assert_no_action(POD, ws, runs)

    assert "alpha" in message
    assert "zeta" in message
    assert "done" not in message
    assert "elsewhere" not in message
    assert message == assert_no_action(POD, ws, tuple(reversed(runs)))


# --------------------------------------------------------------------------- deleting


@pytest.mark.parametrize("name", ["data", "team-a.scratch", "x" * 200])
def test_deletes_exactly_the_workspace_directory_then_removes_the_finalizer(name: str) -> None:
    ws = deleting_workspace(name)
    # status.path is never trusted: the directory is derived from the name
    ws = evolve(ws, status=evolve(ws.status, path="/workspace"))

    decision = decide_local_cleanup(POD, ws, ())

    assert decision.status is None
    assert decision.actions == (
        DeleteWorkspaceDirectory(
            ObjectRef("v1", "Pod", "default", "p-a", "uid-p-a"), f"/workspace/persistent/{name}"
        ),
        RemoveFinalizer(
            ObjectRef(
                "kruntimes.io/v1alpha1", "PersistentWorkspace", "default", name, ws.metadata.uid
            ),
            FINALIZER,
        ),
    )
    assert PatchStatus not in action_types(decision)


def test_acts_for_a_workspace_lost_while_its_pod_terminates() -> None:
    terminating = pod("p-a", deleting=True)
    ws = deleting_workspace()

    decision = decide_local_cleanup(terminating, ws, ())

    assert action_types(decision) == [DeleteWorkspaceDirectory, RemoveFinalizer]
