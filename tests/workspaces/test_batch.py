"""Deciding many workspaces at once (workspaces/batch.py)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TypeVar

import pytest

from kruntimes_core.core.conditions import ConditionStatus
from kruntimes_core.resources.cluster import ClusterSnapshot
from kruntimes_core.resources.pod import Pod
from kruntimes_core.resources.run import Run, RunPhase
from kruntimes_core.resources.runtime import Runtime
from kruntimes_core.resources.workspace import CleanupPolicy, PersistentWorkspace, WorkspacePhase
from kruntimes_core.workspaces.batch import decide_cluster, decide_for_runtime
from kruntimes_core.workspaces.controller import decide_workspace
from kruntimes_core.workspaces.pods import RuntimePods
from kruntimes_core.workspaces.runtimed import decide_local_cleanup
from tests.workspaces.builders import (
    T0,
    at,
    bound_workspace,
    condition,
    placed_run,
    pod,
    run,
    runtime,
    runtime_pods,
    with_deletion,
    workspace,
)

T = TypeVar("T")
NOW = at(3600.5)


def _bound(
    on: Pod,
    name: str,
    *,
    ttl: int | None = None,
    policy: CleanupPolicy = CleanupPolicy.DELETE_AFTER_TTL,
) -> PersistentWorkspace:
    return bound_workspace(on, name=name, ttl=ttl, policy=policy, now=T0)


def cluster() -> ClusterSnapshot:
    """Two namespaces, several Runtimes, workspaces in every phase of the story."""
    bash = [pod("bash-0"), pod("bash-1"), pod("bash-2", ready=False), pod("bash-3", deleting=True)]
    python = [pod(f"py-{i}", runtime="python") for i in range(4)]
    team = [pod("bash-0", namespace="team-a", uid="uid-team-bash-0")]
    stray = pod("no-label", runtime="")
    workspaces = [
        workspace("fresh-1"),
        workspace("fresh-2", uid=""),
        workspace("fresh-py", runtime="python", ttl=60),
        workspace("no-runtime", runtime="ruby"),
        workspace("fresh-1", namespace="team-a", uid="uid-team-fresh-1"),
        workspace("orphan", namespace="team-a", runtime="python"),
        _bound(bash[0], "idle", ttl=3600),
        _bound(bash[1], "busy", ttl=60),
        _bound(python[2], "kept", ttl=1, policy=CleanupPolicy.RETAIN),
        with_deletion(_bound(bash[0], "deleting")),
        with_deletion(_bound(bash[1], "deleting-busy")),
        _bound(pod("bash-gone"), "lost"),
        with_deletion(_bound(pod("bash-2"), "deleting-unready")),  # bound while ready
    ]
    runs = [
        placed_run("r-busy", bash[1], workspace="busy"),
        placed_run("r-deleting-busy", bash[1], workspace="deleting-busy"),
        placed_run("r-done", bash[0], workspace="deleting", phase=RunPhase.SUCCEEDED),
        placed_run("r-remote", bash[1], workspace="deleting"),  # not local to bash-0
        run("r-pending", workspace="fresh-1", phase=RunPhase.PENDING),
        run("r-other-ns", namespace="team-a", workspace="idle"),
        run("r-none", workspace=None),
    ]
    return ClusterSnapshot(
        runtimes=(
            runtime("bash"),
            runtime("python"),
            runtime("bash", namespace="team-a"),
        ),
        pods=(*bash, *python, *team, stray),
        workspaces=tuple(workspaces),
        runs=tuple(runs),
    )


def permute(snapshot: ClusterSnapshot, how: str) -> ClusterSnapshot:
    """Every tuple of ``snapshot`` reordered: reversed, rotated or shuffled-<seed>."""

    def order(items: Sequence[T]) -> tuple[T, ...]:
        if how == "reversed":
            return tuple(reversed(items))
        if how == "rotated":
            return (*items[1:], *items[:1])
        copy = list(items)
        random.Random(int(how.removeprefix("shuffled-"))).shuffle(copy)
        return tuple(copy)

    return ClusterSnapshot(
        runtimes=order(snapshot.runtimes),
        pods=order(snapshot.pods),
        workspaces=order(snapshot.workspaces),
        runs=order(snapshot.runs),
    )


# --------------------------------------------------------------------------- ordering


def test_results_are_sorted_by_namespace_and_name() -> None:
    results = decide_cluster(cluster(), NOW)

    keys = [r.workspace.metadata.key for r in results]
    assert keys == sorted(keys)
    assert len(keys) == len(cluster().workspaces)
    assert keys[0] == ("default", "busy")
    assert keys[-1] == ("team-a", "orphan")


@pytest.mark.parametrize("how", ["reversed", "rotated", "shuffled-1", "shuffled-2", "shuffled-3"])
def test_results_do_not_depend_on_input_order(how: str) -> None:
    baseline = decide_cluster(cluster(), NOW)
    permuted = permute(cluster(), how)
    assert permuted.workspaces != cluster().workspaces

    assert decide_cluster(permuted, NOW) == baseline


def test_empty_snapshot() -> None:
    assert decide_cluster(ClusterSnapshot(), NOW) == ()


# --------------------------------------------------------------------------- equivalence


def _runtime_of(snapshot: ClusterSnapshot, ws: PersistentWorkspace) -> Runtime | None:
    return next(
        (
            rt
            for rt in snapshot.runtimes
            if rt.metadata.key == (ws.metadata.namespace, ws.spec.runtime)
        ),
        None,
    )


def _pods_of(snapshot: ClusterSnapshot, ws: PersistentWorkspace) -> list[Pod]:
    return [
        p
        for p in snapshot.pods
        if p.metadata.namespace == ws.metadata.namespace and p.runtime == ws.spec.runtime
    ]


def _runs_naming(snapshot: ClusterSnapshot, ws: PersistentWorkspace) -> list[Run]:
    return [
        r
        for r in snapshot.runs
        if r.metadata.namespace == ws.metadata.namespace and r.workspace_name == ws.metadata.name
    ]


def test_controller_half_equals_decide_workspace() -> None:
    snapshot = cluster()

    for result in decide_cluster(snapshot, NOW):
        ws = result.workspace
        pods = RuntimePods.index(_runtime_of(snapshot, ws), _pods_of(snapshot, ws))
        expected = decide_workspace(ws, pods, _runs_naming(snapshot, ws), NOW)
        assert result.controller == expected, ws.metadata.key


def test_runtimed_half_is_the_bound_pods_decision() -> None:
    snapshot = cluster()

    for result in decide_cluster(snapshot, NOW):
        ws = result.workspace
        live = [
            p
            for p in _pods_of(snapshot, ws)
            if (p.metadata.name, p.metadata.uid) == (ws.status.bound_pod, ws.status.bound_pod_uid)
            and p.metadata.uid
        ]
        if not live:
            assert result.runtimed is None, ws.metadata.key
            continue
        (bound_pod,) = live
        local = [
            r
            for r in snapshot.runs
            if r.metadata.namespace == bound_pod.metadata.namespace
            and r.status.assigned_pod == bound_pod.metadata.name
            and r.status.assigned_pod_uid == bound_pod.metadata.uid
        ]
        assert result.runtimed == decide_local_cleanup(bound_pod, ws, local), ws.metadata.key


def test_the_story_in_one_batch() -> None:
    """Spot checks that the cluster above exercises what it claims to."""
    by_key = {r.workspace.metadata.key: r for r in decide_cluster(cluster(), NOW)}

    def phase(namespace: str, name: str) -> WorkspacePhase | None:
        status = by_key[(namespace, name)].controller.status
        assert status is not None
        return status.phase

    assert phase("default", "fresh-1") is WorkspacePhase.BOUND
    assert phase("default", "no-runtime") is WorkspacePhase.PENDING
    # team-a has a bash Runtime of its own: never a pod of another namespace
    team_fresh = by_key[("team-a", "fresh-1")].controller.status
    assert team_fresh is not None
    assert (team_fresh.bound_pod, team_fresh.bound_pod_uid) == ("bash-0", "uid-team-bash-0")
    orphan = by_key[("team-a", "orphan")].controller.status
    assert orphan is not None
    assert condition(orphan, "RuntimeReady").reason == "RuntimeNotFound"
    assert phase("default", "idle") is WorkspacePhase.RELEASED  # TTL ran out at 3600
    assert phase("default", "busy") is WorkspacePhase.BOUND
    assert phase("default", "kept") is WorkspacePhase.BOUND
    assert phase("default", "lost") is WorkspacePhase.LOST
    assert phase("default", "deleting") is WorkspacePhase.RELEASED
    deleting = by_key[("default", "deleting")].runtimed
    assert deleting is not None
    assert len(deleting.actions) == 2  # r-remote runs elsewhere; r-done is terminal
    busy = by_key[("default", "deleting-busy")].runtimed
    assert busy is not None
    assert busy.actions == ()
    assert "r-deleting-busy" in busy.message
    assert by_key[("default", "lost")].runtimed is None
    unready = by_key[("default", "deleting-unready")]
    runtime_ready = unready.controller.status
    assert runtime_ready is not None
    assert condition(runtime_ready, "RuntimeReady").status is ConditionStatus.FALSE


# --------------------------------------------------------------------------- per Runtime


def test_decide_for_runtime_equals_decide_workspace_per_workspace() -> None:
    pods = runtime_pods(pod("p-c"), pod("p-a"), pod("p-b", ready=False), pod("p-d"))
    workspaces = [
        workspace("zeta"),
        workspace("alpha", uid=""),
        _bound(pod("p-a"), "bound", ttl=60),
        _bound(pod("p-gone"), "lost"),
        with_deletion(_bound(pod("p-d"), "leaving")),
        workspace("other-ns", namespace="team-a"),
    ]
    runs = [
        run("r1", workspace="bound"),
        run("r2", workspace="zeta", phase=RunPhase.FAILED),
        run("r3", namespace="team-a", workspace="alpha"),
    ]
    runs_by_workspace: dict[tuple[str, str], list[Run]] = {}
    for r in runs:
        runs_by_workspace.setdefault((r.metadata.namespace, r.workspace_name), []).append(r)

    decisions = decide_for_runtime(pods, workspaces, runs_by_workspace, NOW)

    assert decisions == tuple(
        decide_workspace(ws, pods, runs_by_workspace.get(ws.metadata.key, ()), NOW)
        for ws in workspaces
    )
    assert len(decisions) == len(workspaces)


def test_decide_for_runtime_keeps_input_order() -> None:
    pods = runtime_pods(pod("p-a"))
    workspaces = [workspace("b"), workspace("a"), workspace("c")]

    decisions = decide_for_runtime(pods, workspaces, {}, NOW)

    assert [d.actions[0].target.name for d in decisions] == ["b", "a", "c"]
