"""The spec invariants checked after every step of the workspace state machine.

``SpecInvariants`` holds one check per spec rule, each named after the rule
it guards and listed in ``INVARIANTS``; ``WorkspaceLifecycleMachine`` runs
them all after every step (``spec_invariants_hold``). They read the facts
the world recorded (``History``, workspace_history.py) and the world itself;
a check over a history looks only at records it has not seen yet
(``_fresh``). ``ALLOWED_PHASE_MOVES`` is the phase table they hold the
recorded phases to. ``SpecInvariants`` is a mixin of the machine, which
provides ``world`` and ``_cursors``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from itertools import pairwise
from typing import TypeVar

from kruntimes_core.core.conditions import ConditionStatus, find_condition
from kruntimes_core.resources.workspace import FINALIZER, CleanupPolicy, WorkspacePhase
from kruntimes_core.testing.workspace_world import Actor, World
from kruntimes_core.workspaces.usage import IN_USE, UNUSED

__all__ = ["ALLOWED_PHASE_MOVES", "INVARIANTS", "SpecInvariants"]

ALLOWED_PHASE_MOVES: dict[WorkspacePhase | None, frozenset[WorkspacePhase | None]] = {
    None: frozenset({None, WorkspacePhase.PENDING, WorkspacePhase.BOUND}),
    WorkspacePhase.PENDING: frozenset({WorkspacePhase.PENDING, WorkspacePhase.BOUND}),
    WorkspacePhase.BOUND: frozenset(
        {WorkspacePhase.BOUND, WorkspacePhase.LOST, WorkspacePhase.RELEASED}
    ),
    WorkspacePhase.RELEASED: frozenset({WorkspacePhase.RELEASED, WorkspacePhase.LOST}),
    WorkspacePhase.LOST: frozenset({WorkspacePhase.LOST}),
}
"""The phase table of controller.py; a binding write that starts cleanup at
once (ttl 0) is recorded by the world as passing through Bound."""

INVARIANTS: tuple[str, ...] = (
    "bound_pod_uid_never_changes_once_set",
    "lost_never_becomes_bound",
    "phases_follow_the_transition_table",
    "binding_picks_the_hashed_ready_pod",
    "bound_stays_bound_until_its_pod_is_gone_replaced_or_deleting",
    "unbound_workspace_binds_when_a_ready_pod_exists",
    "every_bound_workspace_carries_the_finalizer",
    "bytes_deleted_only_by_bound_runtimed_without_local_active_run",
    "finalizer_leaves_only_after_directory_deletion_or_pod_gone",
    "only_bound_runtimed_removes_finalizer_while_pod_exists",
    "no_workspace_vanishes_while_its_directory_remains",
    "released_only_when_policy_ttl_and_idleness_allow_or_deletion_requested",
    "idle_deadline_never_moves",
    "last_used_time_is_never_in_the_future",
    "in_use_condition_matches_recorded_idleness",
    "status_written_only_when_changed",
    "conditions_keep_transition_time_unless_status_flips",
    "actions_from_a_fresh_snapshot_always_apply",
)
"""The checks run after every step, each named after the spec rule it guards."""

T = TypeVar("T")


class SpecInvariants:
    """The checks named in ``INVARIANTS``; see the module doc."""

    world: World
    _cursors: dict[str, int]

    def _fresh(self, invariant_name: str, records: Sequence[T]) -> Sequence[T]:
        """Records an invariant has not looked at yet (histories only grow)."""
        start = self._cursors.get(invariant_name, 0)
        self._cursors[invariant_name] = len(records)
        return records[start:]

    def bound_pod_uid_never_changes_once_set(self) -> None:
        """Spec 2.3: ``boundPod``/``boundPodUID`` are immutable once written."""
        for uid, seen in self.world.history.bound_pods.items():
            # ``seen`` starts unset and records every change: unset, then one pod.
            assert len(seen) <= 2, f"workspace {uid} changed its binding: {[str(p) for p in seen]}"

    def lost_never_becomes_bound(self) -> None:
        """Spec 2.5: Lost is final; never rebind."""
        for uid, phases in self.world.history.phases.items():
            if WorkspacePhase.LOST in phases:
                after = phases[phases.index(WorkspacePhase.LOST) :]
                assert set(after) == {WorkspacePhase.LOST}, f"workspace {uid} left Lost: {phases}"

    def phases_follow_the_transition_table(self) -> None:
        """controller.py's phase table (spec 2.3-2.5, 3.3)."""
        for uid, phases in self.world.history.phases.items():
            for before, after in pairwise(phases):
                assert after in ALLOWED_PHASE_MOVES[before], (
                    f"workspace {uid} moved {before} -> {after}: {phases}"
                )

    def binding_picks_the_hashed_ready_pod(self) -> None:
        """Spec 2.2: ready pods sorted by name, index fnv1a_32(uid) % len."""
        for binding in self._fresh("binding", self.world.history.bindings):
            assert binding.pod == binding.expected, (
                f"workspace {binding.workspace_uid} bound to {binding.pod}, expected "
                f"{binding.expected} among {[str(p) for p in binding.ready_pods]}"
            )

    def bound_stays_bound_until_its_pod_is_gone_replaced_or_deleting(self) -> None:
        """Spec 2.4-2.5, judged right after each controller decision was applied."""
        for outcome in self._fresh("outcome", self.world.history.controller_outcomes):
            if outcome.bound_to is None:
                continue
            label = f"workspace {outcome.workspace_uid} bound to {outcome.bound_to}"
            if outcome.bound_pod_state == "live":
                assert outcome.phase in (WorkspacePhase.BOUND, WorkspacePhase.RELEASED), (
                    f"{label} (pod live) is {outcome.phase}"
                )
            else:
                assert outcome.phase is WorkspacePhase.LOST, (
                    f"{label} (pod {outcome.bound_pod_state}) is {outcome.phase}, not Lost"
                )

    def unbound_workspace_binds_when_a_ready_pod_exists(self) -> None:
        """Spec 2.1-2.2: Pending only while the Runtime is missing or has no ready pod."""
        for outcome in self._fresh("unbound", self.world.history.controller_outcomes):
            if outcome.bound_to is not None:
                continue
            label = f"unbound workspace {outcome.workspace_uid}"
            assert outcome.phase is WorkspacePhase.PENDING, f"{label} is {outcome.phase}"
            assert outcome.deleting or not (outcome.runtime_exists and outcome.ready_pods), (
                f"{label} stayed Pending with ready pods {[str(p) for p in outcome.ready_pods]}"
            )

    def every_bound_workspace_carries_the_finalizer(self) -> None:
        """Spec 3.3: every Bound workspace carries the cleanup finalizer."""
        for key, ws in self.world.workspaces.items():
            if ws.status.phase is WorkspacePhase.BOUND and not ws.metadata.deleting:
                assert ws.metadata.has_finalizer(FINALIZER), f"{key} is Bound without finalizer"

    def bytes_deleted_only_by_bound_runtimed_without_local_active_run(self) -> None:
        """Spec 3.4 and 3.6: only runtimed on the bound pod, only for a deleting
        workspace, only when no local non-terminal Run uses it; never elsewhere."""
        for deletion in self._fresh("bytes", self.world.history.directory_deletions):
            label = f"{deletion.actor} deleted {deletion.path} on {deletion.target}"
            assert deletion.actor == Actor.runtimed(deletion.target), label
            assert deletion.workspace_uid is not None, f"{label}: no such workspace"
            assert deletion.workspace_bound_to == deletion.target, (
                f"{label}: workspace is bound to {deletion.workspace_bound_to}"
            )
            assert deletion.workspace_deleting, f"{label}: workspace is not being deleted"
            assert not deletion.local_active_runs, (
                f"{label}: local Runs still active: {deletion.local_active_runs}"
            )

    def finalizer_leaves_only_after_directory_deletion_or_pod_gone(self) -> None:
        """Spec 3.4-3.5: no finalizer removal while the bytes may still exist."""
        for removal in self._fresh("finalizer", self.world.history.finalizer_removals):
            assert not (removal.pod_exists and removal.directory_present), (
                f"{removal.actor} removed the finalizer of {removal.workspace_uid} while "
                f"its directory still exists on {removal.bound_to}"
            )

    def only_bound_runtimed_removes_finalizer_while_pod_exists(self) -> None:
        """Spec 3.4-3.5 (controller.py): the controller releases it only once the pod is gone."""
        for removal in self._fresh("remover", self.world.history.finalizer_removals):
            if removal.pod_exists and removal.bound_to is not None:
                assert removal.actor == Actor.runtimed(removal.bound_to), (
                    f"{removal.actor} removed the finalizer of {removal.workspace_uid} "
                    f"while its bound pod {removal.bound_to} exists"
                )

    def no_workspace_vanishes_while_its_directory_remains(self) -> None:
        """Spec README rule 5 and 3.3: the object outlives its bytes."""
        for gone in self._fresh("vanished", self.world.history.vanished):
            assert not (gone.pod_exists and gone.directory_present), (
                f"workspace {gone.workspace_uid} disappeared; its directory is still on "
                f"{gone.bound_to}"
            )

    def released_only_when_policy_ttl_and_idleness_allow_or_deletion_requested(self) -> None:
        """Spec 3.1-3.3 and 3.6."""
        for release in self._fresh("release", self.world.history.releases):
            if release.deleting:
                continue
            label = f"workspace {release.workspace_uid} Released at {release.at}"
            assert release.policy is CleanupPolicy.DELETE_AFTER_TTL, f"{label} under Retain"
            assert release.ttl_seconds is not None, f"{label} without a TTL"
            assert not release.active_runs, f"{label} with active Runs {release.active_runs}"
            last_used = release.last_used_time
            assert last_used is not None, f"{label} without lastUsedTime"
            assert release.at >= last_used + timedelta(seconds=release.ttl_seconds), (
                f"{label}: unused since {last_used}, ttl {release.ttl_seconds}s"
            )
            assert release.bound_at is not None, f"{label} never bound"
            assert last_used >= release.bound_at, f"{label}: lastUsedTime before binding"
            seen = release.last_seen_active
            assert seen is None or last_used >= seen, (
                f"{label}: lastUsedTime {last_used} before the controller last saw it active {seen}"
            )

    def idle_deadline_never_moves(self) -> None:
        """Spec 3.1: while a workspace stays idle, lastUsedTime does not change."""
        for move in self._fresh("idle", self.world.history.last_used_moves):
            assert move.active_since_before, (
                f"workspace {move.workspace_uid}: lastUsedTime moved {move.before} -> "
                f"{move.after} at {move.at} with no Run active in between"
            )
            assert move.after is not None and move.after > move.before, (
                f"workspace {move.workspace_uid}: lastUsedTime moved back {move.before} -> "
                f"{move.after}"
            )

    def last_used_time_is_never_in_the_future(self) -> None:
        """Spec 3.1: lastUsedTime records a moment that happened."""
        for key, ws in self.world.workspaces.items():
            last_used = ws.status.last_used_time
            assert last_used is None or last_used <= self.world.now, f"{key}: {last_used}"

    def in_use_condition_matches_recorded_idleness(self) -> None:
        """Spec 3.1: ``InUse=False, reason Unused`` comes with a ``lastUsedTime``."""
        for key, ws in self.world.workspaces.items():
            found = find_condition(ws.status.conditions, IN_USE)
            if found is not None and found.status is ConditionStatus.FALSE:
                assert found.reason == UNUSED and ws.status.last_used_time is not None, (
                    f"{key}: {found!r} with lastUsedTime {ws.status.last_used_time}"
                )

    def status_written_only_when_changed(self) -> None:
        """Spec 2.6: status is written only when it changed."""
        for write in self._fresh("unchanged", self.world.history.status_writes):
            assert write.changed, f"workspace {write.workspace_uid}: no-op status write"

    def conditions_keep_transition_time_unless_status_flips(self) -> None:
        """Spec 2.6: lastTransitionTime moves only when a condition's status flips."""
        for write in self._fresh("conditions", self.world.history.status_writes):
            assert not write.misdated_conditions, (
                f"workspace {write.workspace_uid} at {write.at}: lastTransitionTime of "
                f"{write.misdated_conditions} broke set-condition semantics"
            )

    def actions_from_a_fresh_snapshot_always_apply(self) -> None:
        """Actions computed from the current world never hit a missing or deleting object."""
        rejected = self._fresh("rejected", self.world.history.rejected)
        assert not rejected, f"rejected actions: {[(str(a), act, why) for a, act, why in rejected]}"
