"""Checks the reconcile rules of the workspace state machine run on the spot.

Unlike the invariants checked after every step (workspace_invariants.py),
these judge a decision against the decision taken again: it ignores the
order of its inputs (``decisions_ignore_input_order``), deciding again after
applying yields no actions (``deciding_again_after_applying_yields_no_actions``)
and no events (``events_only_on_transitions``), and the requeue hint equals
the remaining TTL (``requeue_hint_equals_remaining_ttl``). Once the operator
has caught up with the world, ``cleanup_eventually_completes`` checks that
nothing the spec requires is still waiting. ``ReconcileChecks`` is a mixin of
``WorkspaceLifecycleMachine``, which provides ``world``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from kruntimes_core.core.actions import Action, Event
from kruntimes_core.core.decision import Decision
from kruntimes_core.resources.run import Run
from kruntimes_core.resources.workspace import (
    FINALIZER,
    CleanupPolicy,
    PersistentWorkspace,
    WorkspacePhase,
    WorkspaceStatus,
)
from kruntimes_core.testing.workspace_world import World, bound_pod_of


def release_due(
    ws: PersistentWorkspace, status: WorkspaceStatus, runs: Sequence[Run]
) -> datetime | None:
    """Spec 3.2: when the TTL of ``ws`` with ``status`` runs out, if it is running.

    None unless the workspace is Bound and not being deleted, its policy is
    DeleteAfterTTL with a TTL, ``lastUsedTime`` is set and no Run of ``runs``
    is active.
    """
    spec = ws.spec
    if (
        status.phase is not WorkspacePhase.BOUND
        or ws.metadata.deleting
        or spec.cleanup_policy is not CleanupPolicy.DELETE_AFTER_TTL
        or spec.ttl_seconds_after_unused is None
        or status.last_used_time is None
        or any(run.active for run in runs)
    ):
        return None
    return status.last_used_time + timedelta(seconds=spec.ttl_seconds_after_unused)


class ReconcileChecks:
    """Checks called from the reconcile rules; see the module doc."""

    world: World

    def decisions_ignore_input_order(self, decided: object, shuffled: object, order: str) -> None:
        """Spec README rule 1: the order of pods and Runs carries no meaning."""
        assert decided == shuffled, (
            f"decision changed with input order {order}:\n{decided!r}\nvs\n{shuffled!r}"
        )

    def deciding_again_after_applying_yields_no_actions(
        self, ws: PersistentWorkspace, actions: Sequence[Action]
    ) -> None:
        """Spec README rule 3: applying a decision and deciding again is a fixpoint."""
        assert not actions, (
            f"{ws.metadata.name}#{ws.metadata.uid} still wants {list(actions)!r} after "
            f"its decision was applied (status {ws.status!r}, meta {ws.metadata!r})"
        )

    def events_only_on_transitions(self, ws: PersistentWorkspace, events: Sequence[Event]) -> None:
        """core.actions.Event: emitted on transitions only, so never by a fixpoint."""
        assert not events, f"{ws.metadata.name}#{ws.metadata.uid} repeats events {events!r}"

    def requeue_hint_equals_remaining_ttl(
        self, ws: PersistentWorkspace, runs: Sequence[Run], decision: Decision[WorkspaceStatus]
    ) -> None:
        """Spec 3.2: before the TTL runs out the decision asks to look again then."""
        status = decision.status
        due = None if status is None else release_due(ws, status, runs)
        if due is None:
            return
        assert decision.requeue_after == due - self.world.now, (
            f"{ws.metadata.name}: TTL due {due}, now {self.world.now}, "
            f"requeue_after {decision.requeue_after}"
        )

    def cleanup_eventually_completes(self) -> None:
        """Spec 2.2, 3.2, 3.4-3.7 once the operator caught up with the world.

        Nothing is left waiting that the spec says must happen: unbound
        workspaces with ready pods are bound, expired TTLs are released, every
        release is followed by a deletion request, and a workspace keeps its
        cleanup finalizer only while its bound pod exists AND (it is not being
        deleted, or a local Run still uses it).
        """
        world = self.world
        for release in world.history.releases:
            released = world.workspace_by_uid(release.workspace_uid)
            assert released is None or released.metadata.deleting, (
                f"workspace {release.workspace_uid} was Released at {release.at} but its "
                f"deletion was never requested (spec 3.3); status {released.status!r}"
            )
        for (namespace, name), ws in sorted(world.workspaces.items()):
            status, meta = ws.status, ws.metadata
            bound = bound_pod_of(status, namespace)
            label = f"{namespace}/{name}#{meta.uid} ({status.phase}, deleting={meta.deleting})"
            if bound is None and not meta.deleting:
                ready = world.ready_pods(namespace, ws.spec.runtime)
                runtime_exists = (namespace, ws.spec.runtime) in world.runtimes
                assert not (ready and runtime_exists), f"{label} not bound; ready pods {ready}"
            releasable = meta.deleting or status.phase is WorkspacePhase.LOST
            if meta.has_finalizer(FINALIZER) and releasable:
                pod = world.existing(bound)
                assert pod is not None, (
                    f"{label} keeps the finalizer though it has no bound pod (left: {bound})"
                )
                local = world.local_active_runs(pod.id, name)
                assert not meta.deleting or local, (
                    f"{label} still has the finalizer; no local Run on {bound} uses it"
                )
            due = release_due(ws, status, world.runs_naming(namespace, name))
            assert due is None or world.now < due, (
                f"{label} idle past its TTL ({due}) yet not Released"
            )
