"""A Hypothesis state machine for the PersistentWorkspace lifecycle (spec 2-3).

Theory of operation. ``WorkspaceLifecycleMachine`` drives a ``World``
(workspace_world.py) with everything that happens around a workspace: pods
come, turn unready, start terminating, vanish, are replaced under the same
name or get their ``runtime`` label edited; Runtimes come and go; users
create, edit and delete workspaces; Runs are admitted, scheduled, started by
runtimed (which creates the workspace directory), finished and deleted; time
passes, sometimes far past every TTL (these rules are in
workspace_world_events.py). Reconcile rules, here, run the decisions under
test as an operator would and apply their actions:

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

The reconcile rules check on the spot (workspace_reconcile_checks.py) that a
decision ignores the order of its inputs (``decisions_ignore_input_order``),
that deciding again after applying yields no actions and no events, and that
the requeue hint equals the remaining TTL. After every step
``spec_invariants_hold`` runs the checks named in ``INVARIANTS``
(workspace_invariants.py), each named after the spec rule it guards; they
read the facts the world recorded (``History``) and the world itself. A
decision that raises fails the run: no state of the world may make a
decision raise.

Downstream code can run the machine with its own settings::

    TestWorkspaces = WorkspaceLifecycleMachine.TestCase
    TestWorkspaces.settings = settings(max_examples=200, stateful_step_count=50)

and a subclass can switch a world event off by setting its rule to None.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, TypeVar

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from kruntimes_core.core.actions import Action, DeleteObject, PatchStatus
from kruntimes_core.core.decision import Decision
from kruntimes_core.resources.cluster import ClusterSnapshot
from kruntimes_core.resources.pod import Pod
from kruntimes_core.resources.run import Run
from kruntimes_core.resources.workspace import CleanupPolicy, PersistentWorkspace, WorkspaceStatus
from kruntimes_core.testing.strategies import (
    BASE_TIME,
    NAMESPACES,
    POD_NAMES,
    RUNTIMES,
    WORKSPACE_NAMES,
)
from kruntimes_core.testing.workspace_invariants import (
    ALLOWED_PHASE_MOVES,
    INVARIANTS,
    SpecInvariants,
)
from kruntimes_core.testing.workspace_reconcile_checks import ReconcileChecks
from kruntimes_core.testing.workspace_world import Actor, PodHealth, World, bound_pod_of
from kruntimes_core.testing.workspace_world_events import (
    MAX_TTL_SECONDS,
    RUN_STAGES,
    WorldEventRules,
    cleanup_policies,
    pod_healths,
    statistics_event,
    workspace_ttls,
)
from kruntimes_core.workspaces.batch import WorkspaceDecisions, decide_cluster
from kruntimes_core.workspaces.controller import decide_workspace
from kruntimes_core.workspaces.pods import RuntimePods, by_name
from kruntimes_core.workspaces.runtimed import decide_local_cleanup

__all__ = ["ALLOWED_PHASE_MOVES", "INVARIANTS", "MAX_TTL_SECONDS", "WorkspaceLifecycleMachine"]

_MAX_CONVERGE_ROUNDS = 6

T = TypeVar("T")


def _shuffled(rng: random.Random, items: Sequence[T]) -> list[T]:
    shuffled = list(items)
    rng.shuffle(shuffled)
    return shuffled


def _names(objects: Sequence[Any]) -> list[str]:
    return [f"{obj.metadata.name}#{obj.metadata.uid}" for obj in objects]


class WorkspaceLifecycleMachine(
    WorldEventRules, SpecInvariants, ReconcileChecks, RuleBasedStateMachine
):
    """Random histories of pods, workspaces, Runs and reconciles; see the module doc."""

    def __init__(self) -> None:
        super().__init__()
        self.world = World(BASE_TIME)
        for namespace in NAMESPACES:
            self.world.set_runtime(namespace, RUNTIMES[0], present=True)
        self._cursors: dict[str, int] = {}

    # ------------------------------------------------------------------ a starting world

    @initialize(
        healths=st.lists(pod_healths, min_size=1, max_size=len(POD_NAMES)),
        workspaces=st.lists(
            st.tuples(workspace_ttls, cleanup_policies),
            min_size=1,
            max_size=len(WORKSPACE_NAMES),
        ),
        runs=st.lists(
            st.tuples(st.sampled_from(WORKSPACE_NAMES), st.sampled_from(RUN_STAGES)),
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


def _actions_of(item: WorkspaceDecisions) -> tuple[Action, ...]:
    local = item.runtimed.actions if item.runtimed is not None else ()
    return (*item.controller.actions, *local)


def _note_actions(actions: Sequence[Action]) -> None:
    for action in actions:
        statistics_event(f"action {type(action).__name__}")
