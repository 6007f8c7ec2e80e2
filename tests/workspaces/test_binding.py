"""Binding lifecycle: Pending -> Bound -> Lost (spec workspaces.md section 2)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from attrs import evolve

from kruntimes_core.core.actions import AddFinalizer, ObjectRef, PatchStatus, RemoveFinalizer
from kruntimes_core.core.conditions import ConditionStatus
from kruntimes_core.resources.pod import Pod
from kruntimes_core.resources.workspace import FINALIZER, PersistentWorkspace, WorkspacePhase
from kruntimes_core.workspaces.controller import decide_workspace
from tests.workspaces.builders import (
    T0,
    action_types,
    apply,
    at,
    bound_workspace,
    condition,
    patched_status,
    pod,
    runtime_pods,
    settle,
    workspace,
)

TRUE = ConditionStatus.TRUE
FALSE = ConditionStatus.FALSE


def reference_fnv1a_32(text: str) -> int:
    """FNV-1a 32 written out from its definition, independent of the library."""
    value = 2166136261
    for byte in text.encode("utf-8"):
        value ^= byte
        value = (value * 16777619) % (1 << 32)
    return value


def expected_pod_name(ws: PersistentWorkspace, pods: list[Pod]) -> str:
    """The spec's selection rule, computed without the library's helpers."""
    ready = sorted(p.metadata.name for p in pods if p.ready)
    key = ws.metadata.uid or f"{ws.metadata.namespace}/{ws.metadata.name}"
    return ready[reference_fnv1a_32(key) % len(ready)]


# --------------------------------------------------------------------------- 2.1 waiting


@pytest.mark.parametrize(
    "pods",
    [
        pytest.param([], id="no-pods"),
        pytest.param([pod("p-a", ready=False)], id="one-not-ready"),
        pytest.param([pod("p-a", deleting=True)], id="one-deleting"),
        pytest.param(
            [pod("p-a", ready=False), pod("p-b", phase="Pending"), pod("p-c", deleting=True)],
            id="several-unready",
        ),
    ],
)
def test_no_ready_pods_stays_pending(pods: list[Pod]) -> None:
    ws = workspace("data")

    decision = decide_workspace(ws, runtime_pods(*pods), (), T0)

    assert decision.status is not None
    assert decision.status.phase is WorkspacePhase.PENDING
    assert decision.status.bound_pod == ""
    assert decision.status.bound_pod_uid == ""
    bound = condition(decision.status, "Bound")
    assert (bound.status, bound.reason) == (FALSE, "NoReadyRuntimePods")
    assert action_types(decision) == [PatchStatus]
    assert decision.requeue_after is None


@pytest.mark.parametrize(
    "pods",
    [
        pytest.param([], id="no-pods"),
        pytest.param([pod("p-a"), pod("p-b")], id="ready-labelled-pods-exist"),
    ],
)
def test_missing_runtime_is_reported_and_never_binds(pods: list[Pod]) -> None:
    ws = workspace("data")

    decision = decide_workspace(ws, runtime_pods(*pods, present=False), (), T0)

    assert decision.status is not None
    assert decision.status.phase is WorkspacePhase.PENDING
    assert decision.status.bound_pod == ""
    runtime_ready = condition(decision.status, "RuntimeReady")
    assert (runtime_ready.status, runtime_ready.reason) == (FALSE, "RuntimeNotFound")
    assert condition(decision.status, "Bound").status is FALSE
    assert AddFinalizer not in action_types(decision)


# --------------------------------------------------------------------------- 2.2 selection

_FIVE = ["p-e", "p-b", "p-d", "p-a", "p-c"]  # deliberately not in name order

SELECTION_CASES = [
    pytest.param("ws-uid-1", "default", ["p-a"], id="single-pod"),
    pytest.param("ws-uid-1", "default", ["p-b", "p-a", "p-c"], id="uid1-of-3"),
    pytest.param("ws-uid-2", "default", ["p-b", "p-a", "p-c", "p-d"], id="uid2-of-4"),
    pytest.param("ws-uid-4", "default", ["p-d", "p-c", "p-b", "p-a"], id="uid4-of-4-reversed"),
    pytest.param("ws-uid-1", "default", _FIVE, id="uid1-of-5"),
    pytest.param("ws-uid-2", "default", _FIVE, id="uid2-of-5"),
    pytest.param("ws-uid-3", "default", _FIVE, id="uid3-of-5"),
    pytest.param("ws-uid-5", "default", _FIVE, id="uid5-of-5"),
    pytest.param("", "default", ["p-b", "p-a", "p-c"], id="no-uid-hashes-namespace-name-of-3"),
    pytest.param("", "default", _FIVE, id="no-uid-hashes-namespace-name-of-5"),
    pytest.param("", "team-a", _FIVE, id="no-uid-other-namespace-of-5"),
    pytest.param(
        "ws-uid-5", "default", ["runtime-10", "runtime-9", "runtime-1", "runtime-2"], id="lexical"
    ),
]


@pytest.mark.parametrize(("uid", "namespace", "names"), SELECTION_CASES)
def test_selection_rule(uid: str, namespace: str, names: list[str]) -> None:
    pods = [pod(n, namespace=namespace) for n in names]
    ws = workspace("data", uid=uid, namespace=namespace)

    decision = decide_workspace(ws, runtime_pods(*pods), (), T0)

    assert decision.status is not None
    assert decision.status.phase is WorkspacePhase.BOUND
    assert decision.status.bound_pod == expected_pod_name(ws, pods)


def test_selection_cases_discriminate() -> None:
    """The matrix above would catch "always the first pod" or an unsorted pick."""
    picks: list[tuple[list[str], str]] = []
    for param in SELECTION_CASES:
        uid, ns, names = param.values
        assert isinstance(uid, str)
        assert isinstance(ns, str)
        assert isinstance(names, list)
        pods = [pod(n, namespace=ns) for n in names]
        picks.append(
            (sorted(names), expected_pod_name(workspace("data", uid=uid, namespace=ns), pods))
        )
    assert len({pick for _, pick in picks}) >= 4
    firsts = sum(pick == names[0] for names, pick in picks)
    assert firsts < len(picks) // 2
    # an empty uid must not hash the empty string
    empty = workspace("data", uid="")
    five = [pod(n) for n in _FIVE]
    assert sorted(_FIVE)[reference_fnv1a_32("") % 5] != expected_pod_name(empty, five)


def test_selection_is_independent_of_input_order() -> None:
    names = ["p-c", "p-a", "p-e", "p-b", "p-d"]
    ws = workspace("data", uid="ws-uid-2")
    results = {
        decide_workspace(ws, runtime_pods(*[pod(n) for n in order]), (), T0).status
        for order in (names, sorted(names), sorted(names, reverse=True))
    }
    assert len(results) == 1


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param(pod("p-bad", deleting=True), id="deleting"),
        pytest.param(pod("p-bad", ready=False), id="not-ready"),
        pytest.param(pod("p-bad", phase="Pending"), id="phase-pending"),
        pytest.param(pod("p-bad", pod_ready=False), id="ready-condition-false"),
        pytest.param(pod("p-bad", runtimed_ready=False), id="runtimed-heartbeat-false"),
    ],
)
@pytest.mark.parametrize("uid", ["ws-uid-1", "ws-uid-2", "ws-uid-3", "ws-uid-4", "ws-uid-5"])
def test_unready_and_deleting_pods_are_not_candidates(bad: Pod, uid: str) -> None:
    good = pod("p-good")
    ws = workspace("data", uid=uid)

    decision = decide_workspace(ws, runtime_pods(bad, good), (), T0)

    assert decision.status is not None
    assert decision.status.phase is WorkspacePhase.BOUND
    assert decision.status.bound_pod == "p-good"
    assert decision.status.bound_pod_uid == "uid-p-good"


# --------------------------------------------------------------------------- 2.3 binding


def test_binding_writes_the_binding_and_adds_the_finalizer() -> None:
    chosen = pod("p-a", uid="pod-uid-123")
    ws = workspace("data")

    decision = decide_workspace(ws, runtime_pods(chosen), (), at(0.25))

    target = ObjectRef(
        "kruntimes.io/v1alpha1", "PersistentWorkspace", "default", "data", ws.metadata.uid
    )
    assert AddFinalizer(target, FINALIZER) in decision.actions
    status = patched_status(decision)
    assert status == decision.status
    assert status.phase is WorkspacePhase.BOUND
    assert status.runtime == "bash"
    assert status.bound_pod == "p-a"
    assert status.bound_pod_uid == "pod-uid-123"
    assert status.path == "/workspace/persistent/data"
    bound = condition(status, "Bound")
    assert (bound.status, bound.reason) == (TRUE, "Bound")
    assert bound.last_transition_time == T0  # truncated to whole seconds
    assert RemoveFinalizer not in action_types(decision)


def test_candidate_set_changes_after_binding_never_rebinds() -> None:
    first = pod("p-a")
    ws = bound_workspace(first)
    worlds = [
        [first, pod("p-0"), pod("p-00")],
        [pod("p-00"), pod("p-0"), first],
        [first, pod("p-0"), pod("p-00"), pod("p-b"), pod("p-c")],
    ]
    for world in worlds:
        # the selection rule, run again over this set, would pick another pod
        assert expected_pod_name(ws, world) != "p-a"
        decision = decide_workspace(ws, runtime_pods(*world), (), at(5))
        assert decision.status == ws.status
        assert decision.actions == ()


@pytest.mark.parametrize(
    "unready",
    [
        pytest.param(pod("p-a", ready=False), id="not-ready"),
        pytest.param(pod("p-a", pod_ready=False), id="ready-false"),
        pytest.param(pod("p-a", runtimed_ready=False), id="runtimed-down"),
        pytest.param(pod("p-a", phase="Unknown"), id="phase-unknown"),
    ],
)
def test_bound_pod_not_ready_stays_bound(unready: Pod) -> None:
    ws = bound_workspace(pod("p-a"))
    assert unready.metadata.uid == ws.status.bound_pod_uid

    after = settle(ws, runtime_pods(unready, pod("p-b")), (), at(10))

    assert after.status.phase is WorkspacePhase.BOUND
    assert (after.status.bound_pod, after.status.bound_pod_uid) == ("p-a", "uid-p-a")
    assert condition(after, "Bound").status is TRUE
    runtime_ready = condition(after, "RuntimeReady")
    assert (runtime_ready.status, runtime_ready.reason) == (FALSE, "BoundPodNotReady")
    assert after.metadata.has_finalizer(FINALIZER)


# --------------------------------------------------------------------------- 2.5 lost

LOSS_CASES = [
    pytest.param([pod("p-a", uid="uid-new")], "BoundPodReplaced", id="replaced-new-uid"),
    pytest.param([], "BoundPodDeleted", id="deleted"),
    pytest.param([pod("p-b")], "BoundPodDeleted", id="deleted-other-ready-pod"),
    pytest.param([pod("p-a", deleting=True)], "BoundPodDeleting", id="deleting"),
    pytest.param(
        [pod("p-a", deleting=True, ready=False), pod("p-b")], "BoundPodDeleting", id="deleting-2"
    ),
]


@pytest.mark.parametrize(("pods", "reason"), LOSS_CASES)
def test_bound_pod_loss_makes_the_workspace_lost(pods: list[Pod], reason: str) -> None:
    ws = bound_workspace(pod("p-a"))

    decision = decide_workspace(ws, runtime_pods(*pods), (), at(30))

    status = patched_status(decision)
    assert status.phase is WorkspacePhase.LOST
    assert (status.bound_pod, status.bound_pod_uid) == ("p-a", "uid-p-a")
    bound = condition(status, "Bound")
    assert (bound.status, bound.reason) == (FALSE, reason)
    assert bound.last_transition_time == at(30)
    assert any(e.reason == "WorkspaceLost" for e in decision.events)


@pytest.mark.parametrize(("pods", "reason"), LOSS_CASES)
def test_lost_is_final(pods: list[Pod], reason: str) -> None:
    ws = settle(bound_workspace(pod("p-a")), runtime_pods(*pods), (), at(30))
    assert ws.status.phase is WorkspacePhase.LOST

    later_worlds = [
        [pod("p-a", uid="uid-newer"), pod("p-b"), pod("p-c")],
        [pod("p-b")],
        [pod("p-x"), pod("p-y"), pod("p-z")],
    ]
    for step, world in enumerate(later_worlds, start=1):
        ws = settle(ws, runtime_pods(*world), (), at(30 + step * 60))
        assert ws.status.phase is WorkspacePhase.LOST
        assert (ws.status.bound_pod, ws.status.bound_pod_uid) == ("p-a", "uid-p-a")
        assert condition(ws, "Bound").status is FALSE


def test_lost_stays_lost_when_a_stale_read_shows_the_old_pod() -> None:
    """A lagging cache may still list the recorded pod, alive and ready."""
    lost = settle(bound_workspace(pod("p-a")), runtime_pods(), (), at(30))
    assert lost.status.phase is WorkspacePhase.LOST

    decision = decide_workspace(lost, runtime_pods(pod("p-a"), pod("p-b")), (), at(40))

    assert decision.status is not None
    assert decision.status.phase is WorkspacePhase.LOST
    assert (decision.status.bound_pod, decision.status.bound_pod_uid) == ("p-a", "uid-p-a")
    assert condition(decision.status, "Bound") == condition(lost, "Bound")
    assert condition(decision.status, "RuntimeReady").reason != "BoundPodReady"


# --------------------------------------------------------------------------- 2.6 writes


def _pending(ws: PersistentWorkspace) -> PersistentWorkspace:
    return settle(ws, runtime_pods(), (), T0)


Scenario = Callable[[], tuple[PersistentWorkspace, list[Pod], bool]]
"""Builds (workspace, pods of its Runtime, whether the Runtime exists)."""

FIXPOINT_CASES = [
    pytest.param(lambda: (workspace("data"), [], True), id="pending-no-pods"),
    pytest.param(lambda: (workspace("data"), [pod("p-a")], False), id="pending-missing-runtime"),
    pytest.param(lambda: (workspace("data"), [pod("p-a")], True), id="newly-bound"),
    pytest.param(
        lambda: (workspace("data", ttl=3600), [pod("p-b"), pod("p-a")], True), id="bound-ttl"
    ),
    pytest.param(
        lambda: (bound_workspace(pod("p-a")), [pod("p-a", ready=False)], True),
        id="bound-not-ready",
    ),
    pytest.param(lambda: (bound_workspace(pod("p-a")), [], True), id="lost-deleted"),
    pytest.param(
        lambda: (bound_workspace(pod("p-a")), [pod("p-a", uid="x")], True), id="lost-replaced"
    ),
]


@pytest.mark.parametrize("scenario", FIXPOINT_CASES)
def test_deciding_again_after_applying_yields_no_actions(scenario: Scenario) -> None:
    ws, pods, present = scenario()
    index = runtime_pods(*pods, present=present)
    first = settle(ws, index, (), at(1.5))

    for now in (at(1.5), at(2), at(90)):
        again = decide_workspace(first, index, (), now)
        assert again.actions == (), f"at {now}: {again.actions}"
        assert again.status == first.status


def test_condition_keeps_transition_time_when_only_reason_changes() -> None:
    ws = settle(workspace("data"), runtime_pods(present=False), (), T0)
    assert condition(ws, "Bound").reason == "RuntimeNotFound"
    assert condition(ws, "RuntimeReady").reason == "RuntimeNotFound"

    decision = decide_workspace(ws, runtime_pods(pod("p-a", ready=False)), (), at(60))

    status = patched_status(decision)
    for type_ in ("Bound", "RuntimeReady"):
        cond = condition(status, type_)
        assert (cond.status, cond.reason) == (FALSE, "NoReadyRuntimePods")
        assert cond.last_transition_time == T0
    assert condition(status, "Accepted") == condition(ws, "Accepted")


def test_lost_reason_change_keeps_transition_time() -> None:
    bound = bound_workspace(pod("p-a"))
    lost = settle(bound, runtime_pods(pod("p-a", deleting=True)), (), at(10))
    assert condition(lost, "Bound").reason == "BoundPodDeleting"

    decision = decide_workspace(lost, runtime_pods(), (), at(70))

    status = patched_status(decision)
    bound_cond = condition(status, "Bound")
    assert (bound_cond.status, bound_cond.reason) == (FALSE, "BoundPodDeleted")
    assert bound_cond.last_transition_time == at(10)
    assert "no longer exists" in bound_cond.message


def test_bound_condition_flip_moves_transition_time() -> None:
    pending = _pending(workspace("data"))
    assert condition(pending, "Bound").last_transition_time == T0

    decision = decide_workspace(pending, runtime_pods(pod("p-a")), (), at(42.9))

    status = patched_status(decision)
    assert condition(status, "Bound").status is TRUE
    assert condition(status, "Bound").last_transition_time == at(42)
    assert condition(status, "Accepted").last_transition_time == T0


def test_bound_workspace_missing_its_finalizer_gets_it_back() -> None:
    ws = bound_workspace(pod("p-a"))
    stripped = evolve(ws, metadata=evolve(ws.metadata, finalizers=()))

    decision = decide_workspace(stripped, runtime_pods(pod("p-a")), (), at(5))

    assert action_types(decision) == [AddFinalizer]


def test_binding_decision_applies_in_order_under_resource_version_preconditions() -> None:
    """Adapters send status patches with a resourceVersion precondition (409 when
    stale; core/actions.py, architecture.md), and applying a decision's actions
    in order must then be a fixpoint (spec README rule 3). A metadata write
    listed before the status patch moves the resourceVersion on.
    """
    ws = workspace("data")
    pods = runtime_pods(pod("p-a"))
    decision = decide_workspace(ws, pods, (), T0)
    assert AddFinalizer in action_types(decision)

    after = apply(ws, decision, check_resource_version=True)

    assert after is not None
    assert after.status.phase is WorkspacePhase.BOUND
    assert decide_workspace(after, pods, (), T0).actions == ()
