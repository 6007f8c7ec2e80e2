"""Property tests of the PersistentWorkspace lifecycle (spec workspaces.md 2-3).

``TestWorkspaceLifecycle`` runs the state machine of
``kruntimes_core.testing.workspace_machine``; the ``test_decide_cluster_*``
properties permute every input tuple of a ClusterSnapshot. The
``test_replay_*`` tests replay shrunk counterexamples the machine found, as
plain scenarios, so a fix can be checked in milliseconds.
"""

from __future__ import annotations

import random
from datetime import datetime
from typing import TypeVar

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kruntimes_core.resources.cluster import ClusterSnapshot
from kruntimes_core.testing.strategies import cluster_snapshots, moments
from kruntimes_core.testing.workspace_machine import WorkspaceLifecycleMachine
from kruntimes_core.testing.workspace_world import Actor
from kruntimes_core.workspaces.batch import decide_cluster

TestWorkspaceLifecycle = WorkspaceLifecycleMachine.TestCase
TestWorkspaceLifecycle.settings = settings(
    max_examples=200,
    stateful_step_count=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

T = TypeVar("T")


def _shuffle(rng: random.Random, items: tuple[T, ...]) -> tuple[T, ...]:
    return tuple(rng.sample(items, len(items)))


def _permuted(snapshot: ClusterSnapshot, rng: random.Random) -> ClusterSnapshot:
    return ClusterSnapshot(
        runtimes=_shuffle(rng, snapshot.runtimes),
        pods=_shuffle(rng, snapshot.pods),
        workspaces=_shuffle(rng, snapshot.workspaces),
        runs=_shuffle(rng, snapshot.runs),
    )


@settings(max_examples=300, deadline=None)
@given(
    snapshot=cluster_snapshots(),
    now=moments(),
    rng=st.randoms(use_true_random=False),
)
def test_decide_cluster_ignores_input_order(
    snapshot: ClusterSnapshot, now: datetime, rng: random.Random
) -> None:
    assert decide_cluster(_permuted(snapshot, rng), now) == decide_cluster(snapshot, now)


@settings(max_examples=200, deadline=None)
@given(
    snapshot=cluster_snapshots(unique_names=False),
    now=moments(),
    rng=st.randoms(use_true_random=False),
)
def test_decide_cluster_ignores_input_order_with_replaced_objects(
    snapshot: ClusterSnapshot, now: datetime, rng: random.Random
) -> None:
    """Objects sharing a name (an object and its replacement) with distinct uids."""
    assert decide_cluster(_permuted(snapshot, rng), now) == decide_cluster(snapshot, now)


def _bound_workspace(ttl_seconds: int | None = None) -> WorkspaceLifecycleMachine:
    """One ready pod ``pod-a`` and ``ws-a`` bound to it, in ``default``/``rt-a``."""
    machine = WorkspaceLifecycleMachine()
    machine.world.add_pod("default", "pod-a", "rt-a")
    machine.world.add_workspace("default", "ws-a", "rt-a", ttl_seconds=ttl_seconds)
    machine.reconcile_until_quiet()
    machine.spec_invariants_hold()
    return machine


def test_replay_relabelled_bound_pod_keeps_its_workspace() -> None:
    """Spec 2.4 and 3.4-3.5: the pod still exists with the recorded uid, with
    the directory and a running Run on it; only its ``runtime`` label changed."""
    machine = _bound_workspace()
    world = machine.world
    run = world.add_run("default", "ws-a", "rt-a").metadata.name
    world.schedule_run("default", run, world.eligible_pods(world.runs[("default", run)])[0])
    world.start_run("default", run)
    world.delete_workspace("default", "ws-a")
    world.relabel_pod("default", "pod-a", "rt-b")
    machine.reconcile_until_quiet()
    machine.spec_invariants_hold()


def test_replay_interrupted_release_then_pod_deleting_is_a_fixpoint() -> None:
    """Spec README rule 3 and 2.5: the controller crashed between writing
    ``Released`` and requesting deletion; then the bound pod starts terminating."""
    machine = _bound_workspace(ttl_seconds=1)
    world = machine.world
    world.advance(1)
    expired = machine._decide_controller(world.workspaces[("default", "ws-a")])
    world.apply(expired.actions[:1], Actor.controller())  # PatchStatus(Released) only
    world.start_deleting_pod("default", "pod-a")

    decision = machine._decide_controller(world.workspaces[("default", "ws-a")])
    world.apply(decision.actions, Actor.controller())
    again = world.workspaces[("default", "ws-a")]
    machine.deciding_again_after_applying_yields_no_actions(
        again, machine._decide_controller(again).actions
    )
