"""What happens around a workspace, as rules of the workspace state machine.

``WorldEventRules`` holds the Hypothesis rules through which
``WorkspaceLifecycleMachine`` (workspace_machine.py) changes its ``World``
the way everything but the operator would: pods come, turn unready, start
terminating, vanish, are replaced under the same name or get their
``runtime`` label edited; Runtimes come and go; users create, edit and
delete workspaces; Runs are admitted, scheduled, started by runtimed (which
creates the workspace directory), finished and deleted; time passes,
sometimes far past every TTL. It also holds the strategies these draw from
and the helpers that pick existing or free objects of the world.

The class is a mixin: the machine creates ``world`` and inherits the rules;
a subclass of the machine can switch an event off by setting its rule to
None.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from hypothesis import currently_in_test_context, event
from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule

from kruntimes_core.resources.run import RunPhase
from kruntimes_core.resources.workspace import CleanupPolicy, PersistentWorkspace
from kruntimes_core.testing.strategies import NAMESPACES, POD_NAMES, RUNTIMES, WORKSPACE_NAMES
from kruntimes_core.testing.workspace_world import FOREIGN_FINALIZER, PodHealth, World

__all__ = [
    "MAX_TTL_SECONDS",
    "RUN_STAGES",
    "WorldEventRules",
    "cleanup_policies",
    "pod_healths",
    "statistics_event",
    "workspace_ttls",
]

MAX_TTL_SECONDS = 30
RUN_STAGES = ("pending", "scheduled", "running")

T = TypeVar("T")
_Key = tuple[str, str]

# Most of the action happens in one namespace and Runtime; the others check isolation.
_namespaces = st.sampled_from(NAMESPACES[:1]) | st.sampled_from(NAMESPACES)
_runtimes = st.sampled_from(RUNTIMES[:1]) | st.sampled_from(RUNTIMES)
pod_healths = st.just(PodHealth.READY) | st.sampled_from(PodHealth)
_terminal = st.sampled_from([phase for phase in RunPhase if phase.terminal])
workspace_ttls = (  # short TTLs expire often
    st.none() | st.integers(0, MAX_TTL_SECONDS) | st.integers(1, 5)
)
cleanup_policies = st.just(CleanupPolicy.DELETE_AFTER_TTL) | st.sampled_from(CleanupPolicy)
_steps = st.integers(1, 20) | st.sampled_from((MAX_TTL_SECONDS + 1, 3600))


def statistics_event(text: str) -> None:
    """Statistics for ``--hypothesis-show-statistics``; silent outside Hypothesis."""
    if currently_in_test_context():
        event(text)


class WorldEventRules:
    """Rules for pods, Runtimes, workspaces, Runs and time; see the module doc."""

    world: World

    # ------------------------------------------------------------------ helpers

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

    # ------------------------------------------------------------------ pods

    @precondition(lambda self: bool(self._free_pod_names()))
    @rule(data=st.data(), runtime=_runtimes, health=pod_healths)
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
        ttl=workspace_ttls,
        policy=cleanup_policies,
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
    @rule(data=st.data(), ttl=workspace_ttls, policy=cleanup_policies)
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
        statistics_event("run started" if started else "run refused by fencing")

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
