"""A Hypothesis state machine for the PersistentWorkspace lifecycle (spec 2-3).

Theory of operation. ``WorkspaceLifecycleMachine`` drives a ``World``
(workspace_world.py) with everything that happens around a workspace: pods
come, turn unready, start terminating, vanish, are replaced under the same
name or get their ``runtime`` label edited; Runtimes come and go; users
create, edit and delete workspaces; Runs are admitted, scheduled, started by
runtimed (which creates the workspace directory), finished and deleted; time
passes, sometimes far past every TTL. Reconcile rules run the decisions
under test as an operator would and apply their actions:

- ``reconcile_workspace``: the controller decides one workspace
  (``decide_workspace``), inputs built as batch.py builds them;
- ``reconcile_workspace_interrupted``: the same, but the controller crashes
  after a prefix of its actions;
- ``reconcile_runtimed``: runtimed on one pod decides every workspace of its
  namespace (``decide_local_cleanup``) with the Runs assigned to that pod;
- ``reconcile_cluster``: both halves for every workspace (``decide_cluster``);
- ``reconcile_until_quiet``: ``decide_cluster`` until no action is left,
  then ``cleanup_eventually_completes`` checks that nothing the spec
  requires is still waiting.

The reconcile rules check on the spot that a decision ignores the order of
its inputs (``decisions_ignore_input_order``), that deciding again after
applying yields no actions and no events, and that the requeue hint equals
the remaining TTL. After every step ``spec_invariants_hold`` runs the checks
named in ``INVARIANTS``, each named after the spec rule it guards; they read
the facts the world recorded (``History``) and the world itself. A decision
that raises fails the run: no state of the world may make a decision raise.

Downstream code can run the machine with its own settings::

    TestWorkspaces = WorkspaceLifecycleMachine.TestCase
    TestWorkspaces.settings = settings(max_examples=200, stateful_step_count=50)

and a subclass can switch a world event off by setting its rule to None.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import timedelta
from itertools import pairwise
from typing import Any, TypeVar

from hypothesis import currently_in_test_context, event
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from kruntimes_core.core.actions import Action, DeleteObject, Event, PatchStatus
from kruntimes_core.core.conditions import ConditionStatus, find_condition
from kruntimes_core.core.decision import Decision
from kruntimes_core.resources.cluster import ClusterSnapshot
from kruntimes_core.resources.pod import Pod
from kruntimes_core.resources.run import Run, RunPhase
from kruntimes_core.resources.workspace import (
    FINALIZER,
    CleanupPolicy,
    PersistentWorkspace,
    WorkspacePhase,
    WorkspaceStatus,
)
from kruntimes_core.testing.strategies import (
    BASE_TIME,
    NAMESPACES,
    POD_NAMES,
    RUNTIMES,
    WORKSPACE_NAMES,
)
from kruntimes_core.testing.workspace_world import (
    FOREIGN_FINALIZER,
    Actor,
    PodHealth,
    World,
    bound_pod_of,
)
from kruntimes_core.workspaces.batch import WorkspaceDecisions, decide_cluster
from kruntimes_core.workspaces.controller import decide_workspace
from kruntimes_core.workspaces.pods import RuntimePods, by_name
from kruntimes_core.workspaces.runtimed import decide_local_cleanup
from kruntimes_core.workspaces.usage import IN_USE, UNUSED

__all__ = ["ALLOWED_PHASE_MOVES", "INVARIANTS", "MAX_TTL_SECONDS", "WorkspaceLifecycleMachine"]

MAX_TTL_SECONDS = 30

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

_MAX_CONVERGE_ROUNDS = 6
_RUN_STAGES = ("pending", "scheduled", "running")

T = TypeVar("T")
_Key = tuple[str, str]

# Most of the action happens in one namespace and Runtime; the others check isolation.
_namespaces = st.sampled_from(NAMESPACES[:1]) | st.sampled_from(NAMESPACES)
_runtimes = st.sampled_from(RUNTIMES[:1]) | st.sampled_from(RUNTIMES)
_healths = st.just(PodHealth.READY) | st.sampled_from(PodHealth)
_terminal = st.sampled_from([phase for phase in RunPhase if phase.terminal])
_ttls = st.none() | st.integers(0, MAX_TTL_SECONDS) | st.integers(1, 5)  # short TTLs expire often
_policies = st.just(CleanupPolicy.DELETE_AFTER_TTL) | st.sampled_from(CleanupPolicy)
_steps = st.integers(1, 20) | st.sampled_from((MAX_TTL_SECONDS + 1, 3600))


def _shuffled(rng: random.Random, items: Sequence[T]) -> list[T]:
    shuffled = list(items)
    rng.shuffle(shuffled)
    return shuffled


def _names(objects: Sequence[Any]) -> list[str]:
    return [f"{obj.metadata.name}#{obj.metadata.uid}" for obj in objects]


class WorkspaceLifecycleMachine(RuleBasedStateMachine):
    """Random histories of pods, workspaces, Runs and reconciles; see the module doc."""

    def __init__(self) -> None:
        super().__init__()
        self.world = World(BASE_TIME)
        for namespace in NAMESPACES:
            self.world.set_runtime(namespace, RUNTIMES[0], present=True)
        self._cursors: dict[str, int] = {}

    # ------------------------------------------------------------------ helpers

    def _fresh(self, invariant_name: str, records: Sequence[T]) -> Sequence[T]:
        """Records an invariant has not looked at yet (histories only grow)."""
        start = self._cursors.get(invariant_name, 0)
        self._cursors[invariant_name] = len(records)
        return records[start:]

    def _free_pod_names(self) -> list[_Key]:
        return [(ns, n) for ns in NAMESPACES for n in POD_NAMES if (ns, n) not in self.world.pods]

    def _free_workspace_names(self) -> list[_Key]:
        taken = self.world.workspaces
        return [(ns, n) for ns in NAMESPACES for n in WORKSPACE_NAMES if (ns, n) not in taken]

    def _admissible_workspaces(self) -> list[_Key]:
        return [
            key
            for key, ws in sorted(self.world.workspaces.items())
            if self.world.admission_problem(key[0], key[1], ws.spec.runtime) is None
        ]

    def _active_runs(self) -> list[_Key]:
        return [key for key, run in sorted(self.world.runs.items()) if run.active]

    def _pick(self, data: st.DataObject, options: Sequence[T], label: str) -> T:
        return data.draw(st.sampled_from(options), label=label)

    def _pod(self, data: st.DataObject, label: str = "pod") -> _Key:
        return self._pick(data, sorted(self.world.pods), label)

    def _workspace(self, data: st.DataObject) -> PersistentWorkspace:
        key = self._pick(data, sorted(self.world.workspaces), "workspace")
        return self.world.workspaces[key]

    # ------------------------------------------------------------------ a starting world

    @initialize(
        healths=st.lists(_healths, min_size=1, max_size=len(POD_NAMES)),
        workspaces=st.lists(
            st.tuples(_ttls, _policies),
            min_size=1,
            max_size=len(WORKSPACE_NAMES),
        ),
        runs=st.lists(
            st.tuples(st.sampled_from(WORKSPACE_NAMES), st.sampled_from(_RUN_STAGES)),
            max_size=3,
        ),
    )
    def start_with_a_running_cluster(
        self,
        healths: list[PodHealth],
        workspaces: list[tuple[int | None, CleanupPolicy]],
        runs: list[tuple[str, str]],
    ) -> None:
        """Pods and workspaces of the main Runtime, reconciled until quiet (so
        ready pods hold bindings), then Runs using them, pending, scheduled
        or running: most histories start where the protocol gets interesting."""
        namespace, runtime = NAMESPACES[0], RUNTIMES[0]
        for name, health in zip(POD_NAMES, healths, strict=False):
            self.world.add_pod(namespace, name, runtime, health)
        for name, (ttl, policy) in zip(WORKSPACE_NAMES, workspaces, strict=False):
            self.world.add_workspace(namespace, name, runtime, ttl_seconds=ttl, policy=policy)
        self.reconcile_until_quiet()
        for workspace, stage in runs:
            if self.world.admission_problem(namespace, workspace, runtime) is not None:
                continue
            run = self.world.add_run(namespace, workspace, runtime).metadata.name
            eligible = self.world.eligible_pods(self.world.runs[(namespace, run)])
            if stage != "pending" and eligible:
                self.world.schedule_run(namespace, run, eligible[0])
                if stage == "running":
                    self.world.start_run(namespace, run)

    # ------------------------------------------------------------------ pods

    @precondition(lambda self: bool(self._free_pod_names()))
    @rule(data=st.data(), runtime=_runtimes, health=_healths)
    def add_pod(self, data: st.DataObject, runtime: str, health: PodHealth) -> None:
        namespace, name = self._pick(data, self._free_pod_names(), "pod")
        self.world.add_pod(namespace, name, runtime, health)

    @precondition(lambda self: bool(self.world.pods))
    @rule(data=st.data(), health=st.sampled_from(PodHealth))
    def set_pod_health(self, data: st.DataObject, health: PodHealth) -> None:
        self.world.set_pod_health(*self._pod(data), health)

    @precondition(lambda self: bool(self.world.pods))
    @rule(data=st.data(), how=st.sampled_from(("deleting", "gone", "replaced")))
    def pod_goes_away(self, data: st.DataObject, how: str) -> None:
        """The pod starts terminating, is gone (evicted, node lost) with its
        emptyDir, or is replaced: same name, new uid, empty disk (StatefulSet)."""
        namespace, name = self._pod(data)
        if how == "deleting":
            self.world.start_deleting_pod(namespace, name)
        elif how == "gone":
            self.world.remove_pod(namespace, name)
        else:
            self.world.replace_pod(namespace, name)

    @precondition(lambda self: bool(self.world.pods))
    @rule(data=st.data(), runtime=st.sampled_from(RUNTIMES))
    def relabel_pod(self, data: st.DataObject, runtime: str) -> None:
        """The ``runtime`` label of a pod is edited; the pod itself lives on."""
        self.world.relabel_pod(*self._pod(data), runtime)

    @rule(namespace=_namespaces, runtime=st.sampled_from(RUNTIMES), present=st.booleans())
    def set_runtime(self, namespace: str, runtime: str, present: bool) -> None:
        self.world.set_runtime(namespace, runtime, present=present)

    # ------------------------------------------------------------------ workspaces

    @precondition(lambda self: bool(self._free_workspace_names()))
    @rule(
        data=st.data(),
        runtime=_runtimes,
        ttl=_ttls,
        policy=_policies,
        foreign_finalizer=st.booleans(),
    )
    def add_workspace(
        self,
        data: st.DataObject,
        runtime: str,
        ttl: int | None,
        policy: CleanupPolicy,
        foreign_finalizer: bool,
    ) -> None:
        namespace, name = self._pick(data, self._free_workspace_names(), "workspace")
        self.world.add_workspace(
            namespace,
            name,
            runtime,
            ttl_seconds=ttl,
            policy=policy,
            foreign_finalizer=foreign_finalizer,
        )

    @precondition(lambda self: bool(self.world.workspaces))
    @rule(data=st.data())
    def user_deletes_workspace(self, data: st.DataObject) -> None:
        ws = self._workspace(data)
        self.world.delete_workspace(ws.metadata.namespace, ws.metadata.name)

    @precondition(lambda self: bool(self.world.workspaces))
    @rule(data=st.data(), ttl=_ttls, policy=_policies)
    def user_edits_workspace_cleanup(
        self, data: st.DataObject, ttl: int | None, policy: CleanupPolicy
    ) -> None:
        ws = self._workspace(data)
        meta = ws.metadata
        self.world.edit_workspace_spec(meta.namespace, meta.name, ttl_seconds=ttl, policy=policy)

    @precondition(lambda self: bool(self.world.workspaces))
    @rule(data=st.data(), runtime=st.sampled_from(RUNTIMES))
    def user_changes_workspace_runtime(self, data: st.DataObject, runtime: str) -> None:
        ws = self._workspace(data)
        meta = ws.metadata
        self.world.edit_workspace_spec(
            meta.namespace,
            meta.name,
            runtime=runtime,
            ttl_seconds=ws.spec.ttl_seconds_after_unused,
        )

    @precondition(
        lambda self: any(
            ws.metadata.has_finalizer(FOREIGN_FINALIZER) for ws in self.world.workspaces.values()
        )
    )
    @rule(data=st.data())
    def foreign_controller_removes_its_finalizer(self, data: st.DataObject) -> None:
        held = sorted(
            key
            for key, ws in self.world.workspaces.items()
            if ws.metadata.has_finalizer(FOREIGN_FINALIZER)
        )
        self.world.remove_foreign_finalizer(*self._pick(data, held, "workspace"))

    # ------------------------------------------------------------------ runs

    @precondition(lambda self: bool(self._admissible_workspaces()))
    @rule(data=st.data())
    def add_run(self, data: st.DataObject) -> None:
        """A Run naming a workspace that admission (spec 5.1) accepts."""
        namespace, name = self._pick(data, self._admissible_workspaces(), "workspace")
        runtime = self.world.workspaces[(namespace, name)].spec.runtime
        self.world.add_run(namespace, name, runtime)

    @rule(namespace=_namespaces, runtime=_runtimes)
    def add_run_without_workspace(self, namespace: str, runtime: str) -> None:
        self.world.add_run(namespace, None, runtime)

    @precondition(lambda self: bool(self.world.schedulable_runs()))
    @rule(data=st.data())
    def schedule_run(self, data: st.DataObject) -> None:
        namespace, name = self._pick(data, self.world.schedulable_runs(), "run")
        eligible = self.world.eligible_pods(self.world.runs[(namespace, name)])
        self.world.schedule_run(namespace, name, self._pick(data, eligible, "pod"))

    @precondition(lambda self: bool(self.world.startable_runs()))
    @rule(data=st.data())
    def start_run(self, data: st.DataObject) -> None:
        """runtimed accepts the Run (or fencing refuses it) and creates the directory."""
        started = self.world.start_run(*self._pick(data, self.world.startable_runs(), "run"))
        _event("run started" if started else "run refused by fencing")

    @precondition(lambda self: bool(self._active_runs()))
    @rule(data=st.data(), phase=_terminal, seconds_later=st.integers(0, 10))
    def finish_run(self, data: st.DataObject, phase: RunPhase, seconds_later: int) -> None:
        """A Run ends, ``seconds_later`` after the previous step (Runs take time)."""
        self.world.advance(seconds_later)
        self.world.finish_run(*self._pick(data, self._active_runs(), "run"), phase)

    @precondition(lambda self: bool(self.world.runs))
    @rule(data=st.data())
    def delete_run(self, data: st.DataObject) -> None:
        self.world.delete_run(*self._pick(data, sorted(self.world.runs), "run"))

    # ------------------------------------------------------------------ time

    @rule(seconds=_steps)
    def advance_time(self, seconds: int) -> None:
        self.world.advance(seconds)

    # ------------------------------------------------------------------ reconciles

    def _controller_inputs(
        self, ws: PersistentWorkspace
    ) -> tuple[RuntimePods, list[Pod], list[Run]]:
        """Pods of the workspace's Runtime and the Runs naming it, as batch.py builds them."""
        meta = ws.metadata
        runtime, pods = self.world.runtime_inputs(meta.namespace, ws.spec.runtime)
        runs = self.world.runs_naming(meta.namespace, meta.name)
        named = by_name(self.world.namespace_pods(meta.namespace))
        return RuntimePods.index(runtime, pods, named), pods, runs

    def _decide_controller(self, ws: PersistentWorkspace) -> Decision[WorkspaceStatus]:
        pods, _, runs = self._controller_inputs(ws)
        return decide_workspace(ws, pods, runs, self.world.now)

    @precondition(lambda self: bool(self.world.workspaces))
    @rule(data=st.data())
    def reconcile_workspace(self, data: st.DataObject) -> None:
        """The controller decides one workspace; its actions are applied."""
        ws = self._workspace(data)
        uid = ws.metadata.uid
        now = self.world.now
        index, pods, runs = self._controller_inputs(ws)
        decision = decide_workspace(ws, index, runs, now)

        rng = data.draw(st.randoms(use_true_random=False), label="input order")
        pods_shuffled, runs_shuffled = _shuffled(rng, pods), _shuffled(rng, runs)
        named = by_name(_shuffled(rng, self.world.namespace_pods(ws.metadata.namespace)))
        shuffled = decide_workspace(
            ws, RuntimePods.index(index.runtime, pods_shuffled, named), runs_shuffled, now
        )
        self.decisions_ignore_input_order(
            decision, shuffled, f"pods {_names(pods_shuffled)}, runs {_names(runs_shuffled)}"
        )
        self.requeue_hint_equals_remaining_ttl(ws, runs, decision)

        self.world.note_controller_view(ws)
        self.world.apply(decision.actions, Actor.controller())
        self.world.note_controller_outcome(uid)
        _note_actions(decision.actions)

        again = self.world.workspace_by_uid(uid)
        if again is not None:
            second = self._decide_controller(again)
            self.deciding_again_after_applying_yields_no_actions(again, second.actions)
            self.events_only_on_transitions(again, second.events)

    @precondition(lambda self: bool(self.world.workspaces))
    @rule(data=st.data())
    def reconcile_workspace_interrupted(self, data: st.DataObject) -> None:
        """The controller crashes part-way: only a prefix of its actions is applied.

        Whatever the prefix, no invariant may break and later reconciles must
        finish the job (actions are ordered so that every prefix is safe).
        """
        ws = self._workspace(data)
        decision = self._decide_controller(ws)
        if not decision.actions:
            return
        applied = data.draw(st.integers(0, len(decision.actions) - 1), label="actions applied")
        prefix = decision.actions[:applied]
        if any(isinstance(action, PatchStatus) for action in prefix):
            self.world.note_controller_view(ws)  # what it saw survives the crash in status
        self.world.apply(prefix, Actor.controller())

    @precondition(lambda self: bool(self.world.pods))
    @rule(data=st.data())
    def reconcile_runtimed(self, data: st.DataObject) -> None:
        """runtimed on one pod looks at every workspace of its namespace.

        The decision itself must ignore workspaces not bound to this pod
        (name AND uid), so they are handed over too.
        """
        pod = self.world.pods[self._pod(data)]
        rng = data.draw(st.randoms(use_true_random=False), label="input order")
        actor = Actor.runtimed(pod.id)
        for ws in self.world.workspaces_in(pod.id.namespace):
            current = self.world.workspace_by_uid(ws.metadata.uid)
            if current is None:
                continue
            local = self.world.runs_on(pod.id)
            decision = decide_local_cleanup(pod.to_pod(), current, local)
            shuffled = _shuffled(rng, local)
            self.decisions_ignore_input_order(
                decision,
                decide_local_cleanup(pod.to_pod(), current, shuffled),
                f"local runs {_names(shuffled)}",
            )
            self.world.apply(decision.actions, actor)
            _note_actions(decision.actions)
            again = self.world.workspace_by_uid(ws.metadata.uid)
            if again is not None:
                second = decide_local_cleanup(pod.to_pod(), again, self.world.runs_on(pod.id))
                self.deciding_again_after_applying_yields_no_actions(again, second.actions)

    def _apply_cluster(self, results: Sequence[WorkspaceDecisions]) -> set[str]:
        """Apply both halves of every decision; return uids the controller deleted."""
        for item in results:
            self.world.note_controller_view(item.workspace)
        deleted: set[str] = set()
        for item in results:
            ws = item.workspace
            self.world.apply(item.controller.actions, Actor.controller())
            _note_actions(item.controller.actions)
            if any(isinstance(a, DeleteObject) for a in item.controller.actions):
                deleted.add(ws.metadata.uid)
            if item.runtimed is not None:
                bound = bound_pod_of(ws.status, ws.metadata.namespace)
                assert bound is not None, f"runtimed decision for unbound {ws.metadata.name}"
                self.world.apply(item.runtimed.actions, Actor.runtimed(bound))
                _note_actions(item.runtimed.actions)
        for item in results:
            self.world.note_controller_outcome(item.workspace.metadata.uid)
        return deleted

    @rule(data=st.data())
    def reconcile_cluster(self, data: st.DataObject) -> None:
        snapshot = self.world.snapshot()
        now = self.world.now
        results = decide_cluster(snapshot, now)

        rng = data.draw(st.randoms(use_true_random=False), label="input order")
        permuted = ClusterSnapshot(
            runtimes=tuple(_shuffled(rng, snapshot.runtimes)),
            pods=tuple(_shuffled(rng, snapshot.pods)),
            workspaces=tuple(_shuffled(rng, snapshot.workspaces)),
            runs=tuple(_shuffled(rng, snapshot.runs)),
        )
        self.decisions_ignore_input_order(
            results,
            decide_cluster(permuted, now),
            f"pods {_names(permuted.pods)}, workspaces {_names(permuted.workspaces)}, "
            f"runs {_names(permuted.runs)}",
        )

        deletion_requested = self._apply_cluster(results)
        for item in decide_cluster(self.world.snapshot(), now):
            ws = item.workspace
            self.deciding_again_after_applying_yields_no_actions(ws, item.controller.actions)
            self.events_only_on_transitions(ws, item.controller.events)
            if item.runtimed is not None and ws.metadata.uid not in deletion_requested:
                # runtimed may only have work the controller created in this very
                # round (it decided on the snapshot before the deletion request).
                self.deciding_again_after_applying_yields_no_actions(ws, item.runtimed.actions)

    @rule()
    def reconcile_until_quiet(self) -> None:
        """Reconcile everything until nothing is left to do, then check liveness."""
        for _ in range(_MAX_CONVERGE_ROUNDS):
            results = decide_cluster(self.world.snapshot(), self.world.now)
            if not any(_actions_of(item) for item in results):
                break
            self._apply_cluster(results)
        else:
            pending = [
                (item.workspace.metadata.name, _actions_of(item))
                for item in decide_cluster(self.world.snapshot(), self.world.now)
                if _actions_of(item)
            ]
            raise AssertionError(f"no fixpoint after {_MAX_CONVERGE_ROUNDS} rounds: {pending}")
        self.cleanup_eventually_completes()

    # ------------------------------------------------------------------ checks in rules

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
        spec = ws.spec
        if (
            status is None
            or status.phase is not WorkspacePhase.BOUND
            or ws.metadata.deleting
            or spec.cleanup_policy is not CleanupPolicy.DELETE_AFTER_TTL
            or spec.ttl_seconds_after_unused is None
            or status.last_used_time is None
            or any(run.active for run in runs)
        ):
            return
        due = status.last_used_time + timedelta(seconds=spec.ttl_seconds_after_unused)
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
                local = [
                    run.metadata.name
                    for run in world.runs_on(pod.id)
                    if run.active and run.workspace_name == name
                ]
                assert not meta.deleting or local, (
                    f"{label} still has the finalizer; no local Run on {bound} uses it"
                )
            if status.phase is WorkspacePhase.BOUND and not meta.deleting:
                spec = ws.spec
                idle = not any(run.active for run in world.runs_naming(namespace, name))
                if (
                    idle
                    and spec.cleanup_policy is CleanupPolicy.DELETE_AFTER_TTL
                    and spec.ttl_seconds_after_unused is not None
                    and status.last_used_time is not None
                ):
                    due = status.last_used_time + timedelta(seconds=spec.ttl_seconds_after_unused)
                    assert world.now < due, f"{label} idle past its TTL ({due}) yet not Released"

    # ------------------------------------------------------------------ invariants

    @invariant()
    def spec_invariants_hold(self) -> None:
        """Run every check of ``INVARIANTS`` after each step.

        One Hypothesis invariant calling the named checks keeps a shrunk
        counterexample readable (one line per step instead of one per check);
        a failure's traceback names the check, i.e. the spec rule.
        """
        for name in INVARIANTS:
            getattr(self, name)()

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


def _actions_of(item: WorkspaceDecisions) -> tuple[Action, ...]:
    local = item.runtimed.actions if item.runtimed is not None else ()
    return (*item.controller.actions, *local)


def _event(text: str) -> None:
    """Statistics for ``--hypothesis-show-statistics``; silent outside Hypothesis."""
    if currently_in_test_context():
        event(text)


def _note_actions(actions: Sequence[Action]) -> None:
    for action in actions:
        _event(f"action {type(action).__name__}")
