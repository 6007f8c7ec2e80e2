"""The cleanup protocol, controller and runtimed together (spec workspaces.md 3.3-3.7)."""

from __future__ import annotations

import pytest
from attrs import evolve

from kruntimes_core.core.actions import (
    AddFinalizer,
    DeleteObject,
    DeleteWorkspaceDirectory,
    ObjectRef,
    PatchStatus,
    RemoveFinalizer,
)
from kruntimes_core.core.conditions import ConditionStatus
from kruntimes_core.resources.pod import Pod
from kruntimes_core.resources.run import RunPhase
from kruntimes_core.resources.workspace import (
    FINALIZER,
    CleanupPolicy,
    PersistentWorkspace,
    WorkspacePhase,
)
from kruntimes_core.workspaces.controller import decide_workspace
from kruntimes_core.workspaces.pods import RuntimePods
from kruntimes_core.workspaces.runtimed import decide_local_cleanup
from tests.workspaces.builders import (
    T0,
    action_types,
    apply,
    at,
    bound_workspace,
    condition,
    patched_status,
    placed_run,
    pod,
    runtime_pods,
    settle,
    with_deletion,
    workspace,
)

POD = pod("p-a")
PODS = runtime_pods(POD)


def ws_ref(ws: PersistentWorkspace) -> ObjectRef:
    return ObjectRef(
        "kruntimes.io/v1alpha1", "PersistentWorkspace", "default", "data", ws.metadata.uid
    )


POD_REF = ObjectRef("v1", "Pod", "default", "p-a", "uid-p-a")


# --------------------------------------------------------------------------- explicit deletion


@pytest.mark.parametrize(
    ("ttl", "policy"),
    [
        pytest.param(60, CleanupPolicy.RETAIN, id="retain-with-ttl"),
        pytest.param(None, CleanupPolicy.RETAIN, id="retain-no-ttl"),
        pytest.param(None, CleanupPolicy.DELETE_AFTER_TTL, id="no-ttl"),
        pytest.param(3600, CleanupPolicy.DELETE_AFTER_TTL, id="ttl-not-yet-expired"),
    ],
)
def test_explicit_delete_runs_the_same_protocol(ttl: int | None, policy: CleanupPolicy) -> None:
    ws = with_deletion(bound_workspace(POD, ttl=ttl, policy=policy))

    decision = decide_workspace(ws, PODS, (), at(30))

    assert action_types(decision) == [PatchStatus]
    assert patched_status(decision).phase is WorkspacePhase.RELEASED
    released = apply(ws, decision)
    assert released is not None
    assert released.metadata.has_finalizer(FINALIZER)
    # the controller waits for runtimed from now on
    for seconds in (31, 3600, 10**6):
        assert decide_workspace(released, PODS, (), at(seconds)).actions == ()

    local = decide_local_cleanup(POD, released, ())

    assert local.actions == (
        DeleteWorkspaceDirectory(POD_REF, "/workspace/persistent/data"),
        RemoveFinalizer(ws_ref(released), FINALIZER),
    )
    assert local.status is None
    assert apply(released, local) is None


def test_ttl_expiry_end_to_end() -> None:
    ws = bound_workspace(POD, ttl=60)

    expired = decide_workspace(ws, PODS, (), at(60))
    assert action_types(expired) == [PatchStatus, DeleteObject]
    deleting = apply(ws, expired)
    assert deleting is not None
    assert deleting.metadata.deleting
    assert deleting.status.phase is WorkspacePhase.RELEASED
    assert decide_workspace(deleting, PODS, (), at(61)).actions == ()

    local = decide_local_cleanup(POD, deleting, ())
    assert action_types(local) == [DeleteWorkspaceDirectory, RemoveFinalizer]
    assert apply(deleting, local) is None


def test_released_but_not_yet_deleting_requests_deletion_again() -> None:
    ws = bound_workspace(POD, ttl=60)
    released = apply(ws, decide_workspace(ws, PODS, (), at(60)))
    assert released is not None
    not_deleted = workspace(
        "data", ttl=60, status=released.status, finalizer=True
    )  # the DeleteObject never landed

    decision = decide_workspace(not_deleted, PODS, (), at(120))

    assert action_types(decision) == [DeleteObject]


def test_explicit_delete_with_a_local_active_run_waits_for_runtimed() -> None:
    ws = with_deletion(bound_workspace(POD, policy=CleanupPolicy.RETAIN))
    busy = placed_run("r1", POD)
    released = settle(ws, PODS, (busy,), at(10))
    assert released.status.phase is WorkspacePhase.RELEASED

    waiting = decide_local_cleanup(POD, released, (busy,))
    assert waiting.actions == ()
    assert "r1" in waiting.message
    assert decide_workspace(released, PODS, (busy,), at(20)).actions == ()

    done = placed_run("r1", POD, phase=RunPhase.SUCCEEDED)
    assert decide_workspace(released, PODS, (done,), at(30)).actions == ()
    local = decide_local_cleanup(POD, released, (done,))
    assert action_types(local) == [DeleteWorkspaceDirectory, RemoveFinalizer]


# --------------------------------------------------------------------------- unavailable pod

UNAVAILABLE = [
    pytest.param(pod("p-a", ready=False), id="not-ready"),
    pytest.param(pod("p-a", runtimed_ready=False), id="runtimed-heartbeat-lost"),
    pytest.param(pod("p-a", phase="Pending"), id="phase-pending"),
]


@pytest.mark.parametrize("unavailable", UNAVAILABLE)
def test_cleanup_waits_while_bound_pod_is_unavailable(unavailable: Pod) -> None:
    other = pod("p-b")
    pods = runtime_pods(unavailable, other)
    ws = with_deletion(bound_workspace(POD))

    ws = settle(ws, pods, (), at(10))
    assert ws.status.phase is WorkspacePhase.RELEASED
    for seconds in (20, 3600, 10**7):
        decision = decide_workspace(ws, pods, (), at(seconds))
        assert RemoveFinalizer not in action_types(decision)
        assert decision.actions == ()
    # never delete a directory on another pod
    assert decide_local_cleanup(other, ws, ()).actions == ()
    assert ws.metadata.has_finalizer(FINALIZER)

    # the pod goes away: no bytes left, the controller releases the finalizer
    gone = decide_workspace(ws, runtime_pods(other), (), at(10**7 + 1))

    assert action_types(gone) == [PatchStatus, RemoveFinalizer]
    assert patched_status(gone).phase is WorkspacePhase.LOST
    assert RemoveFinalizer(ws_ref(ws), FINALIZER) in gone.actions
    assert apply(ws, gone) is None


@pytest.mark.parametrize(
    "remaining",
    [
        pytest.param([], id="deleted"),
        pytest.param([pod("p-b")], id="deleted-others-ready"),
        pytest.param([pod("p-a", uid="uid-successor")], id="replaced-same-name"),
    ],
)
@pytest.mark.parametrize("deleting", [True, False], ids=["ws-deleting", "ws-not-deleting"])
def test_bound_pod_gone_controller_removes_the_finalizer(
    remaining: list[Pod], deleting: bool
) -> None:
    ws = bound_workspace(POD)
    if deleting:
        ws = with_deletion(ws)
    pods = runtime_pods(*remaining)

    decision = decide_workspace(ws, pods, (), at(10))

    assert patched_status(decision).phase is WorkspacePhase.LOST
    assert action_types(decision)[-1] is RemoveFinalizer
    assert RemoveFinalizer(ws_ref(ws), FINALIZER) in decision.actions
    assert AddFinalizer not in action_types(decision)
    assert DeleteObject not in action_types(decision)
    after = apply(ws, decision)
    if deleting:
        assert after is None
    else:
        assert after is not None
        assert not after.metadata.finalizers
        assert decide_workspace(after, pods, (), at(20)).actions == ()
    # a successor under the same name is no runtimed of ours
    for successor in remaining:
        assert decide_local_cleanup(successor, ws, ()).actions == ()


def test_bound_pod_deleting_keeps_finalizer_until_it_is_gone() -> None:
    """While the terminating pod still exists its runtimed may still clean up."""
    terminating = pod("p-a", deleting=True)
    ws = with_deletion(bound_workspace(POD))

    lost = settle(ws, runtime_pods(terminating), (), at(10))
    assert lost.status.phase is WorkspacePhase.LOST
    assert condition(lost, "Bound").reason == "BoundPodDeleting"
    assert lost.metadata.has_finalizer(FINALIZER)
    assert action_types(decide_local_cleanup(terminating, lost, ())) == [
        DeleteWorkspaceDirectory,
        RemoveFinalizer,
    ]

    gone = decide_workspace(lost, runtime_pods(), (), at(40))
    assert RemoveFinalizer in action_types(gone)
    assert apply(lost, gone) is None


def test_cleanup_never_depends_on_the_runtime_existing() -> None:
    ws = with_deletion(bound_workspace(POD))

    decision = decide_workspace(ws, runtime_pods(present=False), (), at(10))

    assert patched_status(decision).phase is WorkspacePhase.LOST
    assert RemoveFinalizer in action_types(decision)
    assert apply(ws, decision) is None


# --------------------------------------------------------------------------- never bound

NEVER_BOUND_WORLDS = [
    pytest.param(runtime_pods(present=False), id="runtime-missing"),
    pytest.param(runtime_pods(), id="no-pods"),
    pytest.param(runtime_pods(pod("p-a", ready=False)), id="no-ready-pods"),
    pytest.param(runtime_pods(pod("p-a"), pod("p-b")), id="ready-pods-exist"),
]


@pytest.mark.parametrize("pods", NEVER_BOUND_WORLDS)
def test_never_bound_workspace_being_deleted_gets_its_finalizer_removed(
    pods: RuntimePods,
) -> None:
    ws = workspace("data", finalizer=True, deleting=True)

    decision = decide_workspace(ws, pods, (), T0)

    assert decision.status is not None
    assert decision.status.phase is WorkspacePhase.PENDING
    assert decision.status.bound_pod == ""
    assert condition(decision.status, "Bound").status is ConditionStatus.FALSE
    assert RemoveFinalizer(ws_ref(ws), FINALIZER) in decision.actions
    assert AddFinalizer not in action_types(decision)
    assert apply(ws, decision) is None


@pytest.mark.parametrize("pods", NEVER_BOUND_WORLDS)
def test_never_bound_workspace_without_finalizer_has_nothing_to_remove(
    pods: RuntimePods,
) -> None:
    ws = workspace("data", deleting=True)

    decision = decide_workspace(ws, pods, (), T0)

    assert action_types(decision) == [PatchStatus]
    assert patched_status(decision).bound_pod == ""


def test_a_released_workspace_whose_pod_vanished_requests_its_deletion_first() -> None:
    """A crash between Released and the delete request must not be forgotten when
    the workspace then goes Lost: the delete is requested before the status moves."""
    p = pod("p-a")
    ws = bound_workspace(p, ttl=10)
    released = patched_status(decide_workspace(ws, runtime_pods(p), (), at(10)))
    assert released.phase is WorkspacePhase.RELEASED
    stale = evolve(ws, status=released)  # the delete request was never applied

    decision = decide_workspace(stale, runtime_pods(), (), at(20))

    assert decision.status is not None
    assert decision.status.phase is WorkspacePhase.LOST
    assert action_types(decision) == [DeleteObject, PatchStatus, RemoveFinalizer]
    after = apply(stale, decision)
    assert after is None  # deleted, and with no bytes left nothing held it


def test_an_interrupted_release_then_a_deleting_pod_is_a_fixpoint() -> None:
    p = pod("p-a")
    ws = bound_workspace(p, ttl=1)
    released = patched_status(decide_workspace(ws, runtime_pods(p), (), at(1)))
    stale = evolve(ws, status=released)
    terminating = pod("p-a", deleting=True)

    decision = decide_workspace(stale, runtime_pods(terminating), (), at(2))
    after = apply(stale, decision)

    assert action_types(decision) == [DeleteObject, PatchStatus]
    assert after is not None
    assert after.status.phase is WorkspacePhase.LOST
    assert after.metadata.has_finalizer(FINALIZER)  # the pod still holds the bytes
    assert decide_workspace(after, runtime_pods(terminating), (), at(3)).actions == ()


def test_a_lost_workspace_never_gets_its_finalizer_back_from_a_lagging_cache() -> None:
    p = pod("p-a")
    ws = bound_workspace(p)
    lost = settle(ws, runtime_pods(), (), at(5))
    assert lost.status.phase is WorkspacePhase.LOST
    assert not lost.metadata.has_finalizer(FINALIZER)

    decision = decide_workspace(lost, runtime_pods(p), (), at(6))  # old pod seen again

    assert AddFinalizer not in action_types(decision)
    assert decision.status is not None
    assert decision.status.phase is WorkspacePhase.LOST
