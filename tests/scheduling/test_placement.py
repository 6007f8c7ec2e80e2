"""Placement decisions (spec workspaces.md section 4), as tables of named cases."""

from __future__ import annotations

from datetime import UTC, datetime

from attrs import evolve

from kruntimes_core.core.actions import PatchStatus
from kruntimes_core.core.meta import ObjectMeta
from kruntimes_core.resources.run import RunPhase
from kruntimes_core.resources.workspace import (
    PersistentWorkspace,
    WorkspacePhase,
    WorkspaceSpec,
    WorkspaceStatus,
)
from kruntimes_core.scheduling.placement import normalise
from tests.scheduling.builders import (
    NS,
    place,
    pod,
    preferred,
    required,
    run,
    term,
    where,
)


def test_ties_break_by_fewest_used_slots_then_pod_name() -> None:
    a, b = pod("a"), pod("b")
    result = place(b, a, run("busy", on=a), run("new"))
    assert where(result, "new") == "b"
    assert where(place(b, a, run("new")), "new") == "a"


def test_a_placement_writes_scheduled_with_pod_name_and_uid() -> None:
    result = place(pod("a"), run("new"))
    (action,) = result["new"].decision.actions
    assert isinstance(action, PatchStatus)
    assert action.status.phase is RunPhase.SCHEDULED
    assert (action.status.assigned_pod, action.status.assigned_pod_uid) == ("a", "a-uid")


def test_a_batch_accounts_for_the_runs_it_just_placed() -> None:
    result = place(pod("a", slots=1), pod("b", slots=1), *(run(f"r{i}", order=i) for i in range(3)))
    assert [where(result, f"r{i}") for i in range(3)] == ["a", "b", None]
    assert result["r2"].decision.message == "no Runtime Pod fits (2 ready): 2 lack free run slots"
    assert result["r2"].run.status.phase is RunPhase.PENDING


def test_the_batch_order_is_creation_time_then_name() -> None:
    result = place(pod("a", slots=1), run("zz", order=0), run("aa", order=1))
    assert where(result, "zz") == "a"
    assert where(result, "aa") is None


def test_capacity_comes_from_the_annotation_then_the_runtime_then_two() -> None:
    assert where(place(pod("a", slots=0), run("r")), "r") is None
    assert where(place(pod("a"), run("r"), slots=0), "r") is None
    full = place(pod("a"), run("x", on=pod("a")), run("y", on=pod("a")), run("r"))
    assert where(full, "r") is None


def test_a_run_asking_for_more_slots_needs_them_free() -> None:
    a = pod("a", slots=3)
    assert where(place(a, run("x", on=a, slots=2), run("r", slots=2)), "r") is None
    assert where(place(a, run("r", slots=3)), "r") == "a"


def test_terminal_runs_free_their_slots() -> None:
    a = pod("a", slots=1)
    assert where(place(a, run("done", on=a, phase=RunPhase.SUCCEEDED), run("r")), "r") == "a"


def test_no_ready_pods_waits() -> None:
    result = place(pod("a", ready=False), run("r"))
    assert result["r"].pod is None
    assert result["r"].decision.message == 'runtime "bash" has no ready pods'


def test_required_affinity_goes_where_a_matching_run_is() -> None:
    a, b = pod("a"), pod("b")
    result = place(
        a, b, run("web", labels={"app": "x"}, on=b), run("r", affinity=required(term(app="x")))
    )
    assert where(result, "r") == "b"


def test_the_first_run_of_a_group_may_start_it() -> None:
    first = run("r", labels={"app": "x"}, affinity=required(term(app="x")))
    assert where(place(pod("a"), first), "r") == "a"
    stranger = run("s", labels={"app": "y"}, affinity=required(term(app="x")))
    result = place(pod("a"), stranger)
    assert result["s"].decision.message == (
        "no Runtime Pod fits (1 ready): 1 fail required run affinity"
    )


def test_the_first_run_rule_still_needs_the_topology_label() -> None:
    first = run("r", labels={"app": "x"}, affinity=required(term("zone", app="x")))
    assert where(place(pod("a"), pod("b", zone="z1"), first), "r") == "b"


def test_required_affinity_by_zone_label() -> None:
    a, b, c = pod("a", zone="z1"), pod("b", zone="z2"), pod("c")
    result = place(
        a,
        b,
        c,
        run("db", labels={"app": "db"}, on=a),
        run("r", affinity=required(term("zone", app="db"))),
    )
    assert where(result, "r") == "a"


def test_required_anti_affinity_avoids_matching_runs_and_ignores_unlabelled_pods() -> None:
    a, b = pod("a", zone="z1"), pod("b")
    result = place(
        a,
        b,
        run("db", labels={"app": "db"}, on=a),
        run("r", affinity=required(term("zone", app="db"), anti=True)),
    )
    assert where(result, "r") == "b"


def test_placed_runs_anti_affinity_is_symmetric() -> None:
    a, b = pod("a"), pod("b")
    loner = run("loner", on=a, affinity=required(term(app="x"), anti=True))
    result = place(a, b, run("busy", on=b), loner, run("r", labels={"app": "x"}))
    assert where(result, "r") == "b"  # a is emptier, but loner refuses app=x beside it
    alone = place(a, loner, run("r", labels={"app": "x"}))
    assert alone["r"].decision.message == (
        "no Runtime Pod fits (1 ready): 1 are excluded by placed Runs' anti-affinity"
    )


def test_runs_placed_earlier_in_the_batch_count_for_affinity() -> None:
    result = place(
        pod("a"),
        pod("b"),
        run("first", labels={"app": "x"}, order=0),
        run("second", order=1, affinity=required(term(app="x"))),
    )
    assert where(result, "second") == where(result, "first") == "a"


def test_preferred_terms_score_and_beat_the_tie_breaks() -> None:
    a, b = pod("a"), pod("b")
    cache = run("cache", labels={"app": "cache"}, on=b)
    liked = place(a, b, cache, run("r", affinity=preferred((10, term(app="cache")))))
    assert where(liked, "r") == "b"
    disliked = place(a, b, cache, run("r", affinity=preferred((10, term(app="cache")), anti=True)))
    assert where(disliked, "r") == "a"


def test_normalise_maps_scores_to_0_100() -> None:
    assert normalise({"a": -10, "b": 0, "c": 30}) == {"a": 0, "b": 25, "c": 100}
    assert normalise({"a": 5, "b": 5}) == {"a": 0, "b": 0}
    assert normalise({}) == {}


def workspace(
    phase: WorkspacePhase | None,
    *,
    bound: str = "",
    uid: str = "",
    runtime: str = "bash",
    deleting: bool = False,
) -> PersistentWorkspace:

    meta = ObjectMeta(
        "data",
        NS,
        "ws-uid",
        deletion_timestamp=datetime(2026, 1, 1, tzinfo=UTC) if deleting else None,
    )
    status = WorkspaceStatus(phase=phase, bound_pod=bound, bound_pod_uid=uid)
    return PersistentWorkspace(meta, WorkspaceSpec(runtime=runtime), status)


def test_a_bound_workspace_admits_only_its_pod() -> None:
    a, b = pod("a"), pod("b")
    ws = workspace(WorkspacePhase.BOUND, bound="b", uid="b-uid")
    assert where(place(a, b, ws, run("r", workspace="data")), "r") == "b"


def test_every_workspace_reason_has_its_message() -> None:
    a = pod("a")
    bound = WorkspacePhase.BOUND
    cases: list[tuple[PersistentWorkspace | None, str]] = [
        (None, 'workspace "data" not found'),
        (workspace(WorkspacePhase.PENDING), 'workspace "data" is not bound to a pod yet'),
        (
            workspace(WorkspacePhase.LOST, bound="gone", uid="g"),
            'workspace "data" is lost: its pod "gone" is gone',
        ),
        (
            workspace(WorkspacePhase.RELEASED, bound="a", uid="a-uid"),
            'workspace "data" is released: no new Run may use it',
        ),
        (
            workspace(bound, bound="a", uid="a-uid", deleting=True),
            'workspace "data" is released: no new Run may use it',
        ),
        (
            workspace(bound, bound="a", uid="a-uid", runtime="py"),
            'workspace "data" belongs to runtime "py", not "bash"',
        ),
        (
            workspace(bound, bound="a", uid="old"),
            'workspace "data" is bound to pod "a" (uid old), '
            "which was replaced by a pod with another uid",
        ),
        (
            workspace(bound, bound="x", uid="x-uid"),
            'workspace "data" is bound to pod "x" (uid x-uid), which no longer exists',
        ),
    ]
    for ws, message in cases:
        objects = (a, run("r", workspace="data")) + ((ws,) if ws is not None else ())
        result = place(*objects)
        assert result["r"].pod is None
        assert result["r"].decision.message == message
    not_ready = place(
        pod("a", ready=False),
        pod("b"),
        workspace(WorkspacePhase.BOUND, bound="a", uid="a-uid"),
        run("r", workspace="data"),
    )
    assert not_ready["r"].decision.message.endswith("which is not ready")


def test_waiting_writes_the_message_once() -> None:
    result = place(pod("a", slots=0), run("r"))
    decision = result["r"].decision
    assert decision.status is not None
    assert [type(a) for a in decision.actions] == [PatchStatus]
    again = place(
        pod("a", slots=0),
        result["r"].run.__class__(result["r"].run.metadata, result["r"].run.spec, decision.status),
    )
    assert again["r"].decision.actions == ()


def test_cancelled_pending_runs_are_not_placed() -> None:
    r = run("r")
    r = evolve(r, spec=evolve(r.spec, cancel_requested=True))
    assert where(place(pod("a"), r), "r") is None
