"""A small in-memory world in which workspace decisions act as on a cluster.

Theory of operation. The world holds Runtime Pods, Runtimes,
PersistentWorkspaces and Runs, a virtual clock, and per pod the set of
workspace directories that exist on that pod's ``workspace`` volume (an
emptyDir: the directories vanish with the pod). Tests change the world the
way users (creating, editing, deleting), kubelets and controllers of pods
(readiness, termination, replacement, label edits), the scheduler (spec 4
workspace filter) and runtimed's Run execution (fencing, spec 6) would, read
inputs for the decisions from it, and hand the decisions' actions back to
``World.apply``, which applies them with Kubernetes semantics.

``World`` is built in layers, one module each:

- ``workspace_world_pods``: pod incarnations (``PodId``, ``WorldPod``,
  ``PodHealth``) and who acts (``Actor``);
- ``workspace_history``: the facts recorded while applying (``History``);
- ``workspace_world_state``: ``WorldState``, the objects, clock and disks and
  every read-only question asked of them;
- ``workspace_apply``: ``ActionApplier.apply``, decisions' actions with
  Kubernetes semantics, recording ``History``;
- this module: ``World``, the events tests drive (pods, Runtimes,
  workspaces, Runs, time) and what the controller saw.

The world judges nothing itself; the invariants in ``workspace_invariants``
do. The names of the layers are re-exported here.
"""

from __future__ import annotations

from datetime import timedelta

from attrs import evolve

from kruntimes_core.core.actions import DeleteObject, ObjectRef, RemoveFinalizer
from kruntimes_core.core.meta import ObjectMeta
from kruntimes_core.core.timeutil import to_k8s_time
from kruntimes_core.resources.run import Run, RunPhase, RunSpec, RunStatus, WorkspaceRef
from kruntimes_core.resources.runtime import Runtime
from kruntimes_core.resources.workspace import (
    CleanupPolicy,
    PersistentWorkspace,
    WorkspacePhase,
    WorkspaceSpec,
    workspace_path,
)
from kruntimes_core.testing.workspace_apply import ActionApplier
from kruntimes_core.testing.workspace_history import (
    Binding,
    ControllerOutcome,
    DirectoryDeletion,
    FinalizerRemoval,
    History,
    LastUsedMove,
    Release,
    StatusWrite,
    Vanished,
    expected_binding,
)
from kruntimes_core.testing.workspace_world_pods import (
    Actor,
    Party,
    PodHealth,
    PodId,
    WorldPod,
    assigned_pod_of,
    bound_pod_of,
)
from kruntimes_core.testing.workspace_world_state import WorldError

__all__ = [
    "FOREIGN_FINALIZER",
    "Actor",
    "Binding",
    "ControllerOutcome",
    "DirectoryDeletion",
    "FinalizerRemoval",
    "History",
    "LastUsedMove",
    "Party",
    "PodHealth",
    "PodId",
    "Release",
    "StatusWrite",
    "Vanished",
    "World",
    "WorldError",
    "WorldPod",
    "bound_pod_of",
    "expected_binding",
]

FOREIGN_FINALIZER = "example.com/keep"
"""A finalizer some other controller holds; the workspace protocol must not care."""


class World(ActionApplier):
    """Objects, a clock and disks; mutated only through its methods."""

    # ---- time

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise WorldError("time never goes back")
        self.now += timedelta(seconds=seconds)

    # ---- runtimes

    def set_runtime(self, namespace: str, name: str, *, present: bool) -> None:
        key = (namespace, name)
        if not present:
            self.runtimes.pop(key, None)
        elif key not in self.runtimes:
            meta = ObjectMeta(name=name, namespace=namespace, uid=self._next("runtime-uid"))
            self.runtimes[key] = Runtime(metadata=meta)

    # ---- pods

    def add_pod(
        self, namespace: str, name: str, runtime: str, health: PodHealth = PodHealth.READY
    ) -> PodId:
        if (namespace, name) in self.pods:
            raise WorldError(f"pod {namespace}/{name} exists")
        pod = WorldPod(PodId(namespace, name, self._next("pod-uid")), runtime, health)
        self.pods[(namespace, name)] = pod
        self.disks[pod.id] = set()
        return pod.id

    def set_pod_health(self, namespace: str, name: str, health: PodHealth) -> None:
        key = (namespace, name)
        self.pods[key] = evolve(self.pods[key], health=health)

    def start_deleting_pod(self, namespace: str, name: str) -> None:
        key = (namespace, name)
        if self.pods[key].deleted_at is None:
            self.pods[key] = evolve(self.pods[key], deleted_at=to_k8s_time(self.now))

    def remove_pod(self, namespace: str, name: str) -> None:
        """The pod is gone, and its emptyDir with it."""
        pod = self.pods.pop((namespace, name))
        self.disks.pop(pod.id, None)

    def relabel_pod(self, namespace: str, name: str, runtime: str) -> None:
        """Someone edits the pod's ``runtime`` label (e.g. to take it out of rotation)."""
        key = (namespace, name)
        self.pods[key] = evolve(self.pods[key], runtime=runtime)

    def replace_pod(self, namespace: str, name: str, health: PodHealth = PodHealth.READY) -> PodId:
        """A new pod with the same name and Runtime but another uid (StatefulSet style)."""
        runtime = self.pods[(namespace, name)].runtime
        self.remove_pod(namespace, name)
        return self.add_pod(namespace, name, runtime, health)

    # ---- workspaces

    def add_workspace(
        self,
        namespace: str,
        name: str,
        runtime: str,
        *,
        ttl_seconds: int | None = None,
        policy: CleanupPolicy = CleanupPolicy.DELETE_AFTER_TTL,
        foreign_finalizer: bool = False,
    ) -> PersistentWorkspace:
        if (namespace, name) in self.workspaces:
            raise WorldError(f"workspace {namespace}/{name} exists")
        ws = PersistentWorkspace(
            metadata=ObjectMeta(
                name=name,
                namespace=namespace,
                uid=self._next("ws-uid"),
                finalizers=(FOREIGN_FINALIZER,) if foreign_finalizer else (),
                creation_timestamp=to_k8s_time(self.now),
                generation=1,
                resource_version=self._version(),
            ),
            spec=WorkspaceSpec(
                runtime=runtime, ttl_seconds_after_unused=ttl_seconds, cleanup_policy=policy
            ),
        )
        self.workspaces[(namespace, name)] = ws
        uid = ws.metadata.uid
        self.history.phases[uid] = [None]
        self.history.bound_pods[uid] = [None]
        self._active_since_last_used[uid] = bool(self._active_runs_naming(namespace, name))
        return ws

    def delete_workspace(self, namespace: str, name: str) -> None:
        """``kubectl delete``: the user asks for deletion."""
        ws = self.workspaces[(namespace, name)]
        self.apply([DeleteObject(_ref(ws))], Actor(Party.USER))

    def edit_workspace_spec(
        self,
        namespace: str,
        name: str,
        *,
        runtime: str | None = None,
        ttl_seconds: int | None = None,
        policy: CleanupPolicy | None = None,
    ) -> None:
        """``kubectl edit``: a new spec (and generation); omitted fields stay.

        ``ttl_seconds`` cannot be cleared this way; pass the old value to keep it.
        """
        ws = self.workspaces[(namespace, name)]
        spec = evolve(
            ws.spec,
            runtime=runtime if runtime is not None else ws.spec.runtime,
            ttl_seconds_after_unused=ttl_seconds,
            cleanup_policy=policy if policy is not None else ws.spec.cleanup_policy,
        )
        if spec == ws.spec:
            return
        meta = evolve(
            ws.metadata,
            generation=ws.metadata.generation + 1,
            resource_version=self._version(),
        )
        self.workspaces[(namespace, name)] = evolve(ws, metadata=meta, spec=spec)

    def remove_foreign_finalizer(self, namespace: str, name: str) -> None:
        ws = self.workspaces[(namespace, name)]
        self.apply([RemoveFinalizer(_ref(ws), FOREIGN_FINALIZER)], Actor(Party.FOREIGN))

    # ---- runs

    def add_run(self, namespace: str, workspace: str | None, runtime: str) -> Run:
        problem = self.admission_problem(namespace, workspace, runtime)
        if problem is not None:
            raise WorldError(f"admission refuses the Run: {problem}")
        name = self._next("run")
        run = Run(
            metadata=ObjectMeta(
                name=name,
                namespace=namespace,
                uid=f"{name}-uid",
                creation_timestamp=to_k8s_time(self.now),
            ),
            spec=RunSpec(
                runtime=runtime,
                workspace=WorkspaceRef(workspace) if workspace is not None else None,
            ),
        )
        self.runs[(namespace, name)] = run
        if workspace is not None:
            ws = self.workspaces.get((namespace, workspace))
            if ws is not None:
                self._active_since_last_used[ws.metadata.uid] = True
        return run

    def schedule_run(self, namespace: str, name: str, pod: PodId) -> None:
        run = self.runs[(namespace, name)]
        if run.status.phase is not RunPhase.PENDING or pod not in self.eligible_pods(run):
            raise WorldError(f"Run {namespace}/{name} cannot be scheduled to {pod}")
        self.runs[(namespace, name)] = evolve(
            run,
            status=RunStatus(
                phase=RunPhase.SCHEDULED, assigned_pod=pod.name, assigned_pod_uid=pod.uid
            ),
        )

    def start_run(self, namespace: str, name: str) -> bool:
        """runtimed accepts (fencing, spec 6) and creates the workspace directory.

        Returns False when fencing refuses the Run, which then fails.
        """
        run = self.runs[(namespace, name)]
        pod = self.existing(assigned_pod_of(run))
        if run.status.phase is not RunPhase.SCHEDULED or pod is None:
            raise WorldError(f"Run {namespace}/{name} cannot start")
        ws = self.workspaces.get((namespace, run.workspace_name)) if run.spec.workspace else None
        fenced = ws is not None and (
            ws.status.phase is WorkspacePhase.BOUND and bound_pod_of(ws.status, namespace) == pod.id
        )
        if run.spec.workspace is not None and not fenced:
            self.runs[(namespace, name)] = evolve(
                run,
                status=evolve(
                    run.status,
                    phase=RunPhase.FAILED,
                    message=f"workspace {run.workspace_name!r} is not Bound to this pod",
                ),
            )
            return False
        self.runs[(namespace, name)] = evolve(
            run, status=evolve(run.status, phase=RunPhase.RUNNING)
        )
        if run.spec.workspace is not None:
            self.disks[pod.id].add(workspace_path(run.workspace_name))
        return True

    def finish_run(self, namespace: str, name: str, phase: RunPhase) -> None:
        if not phase.terminal:
            raise WorldError(f"{phase} is not terminal")
        run = self.runs[(namespace, name)]
        self.runs[(namespace, name)] = evolve(run, status=evolve(run.status, phase=phase))

    def delete_run(self, namespace: str, name: str) -> None:
        del self.runs[(namespace, name)]

    # ---- what the controller saw

    def note_controller_view(self, workspace: PersistentWorkspace) -> None:
        """A controller decision about ``workspace`` is being taken now."""
        meta = workspace.metadata
        if self._active_runs_naming(meta.namespace, meta.name):
            self.history.last_seen_active[meta.uid] = self.now

    def note_controller_outcome(self, uid: str) -> None:
        """Record the workspace's state after the controller's actions were applied."""
        ws = self.workspace_by_uid(uid)
        if ws is None:
            return
        bound = bound_pod_of(ws.status, ws.metadata.namespace)
        self.history.controller_outcomes.append(
            ControllerOutcome(
                at=self.now,
                workspace_uid=uid,
                phase=ws.status.phase,
                deleting=ws.metadata.deleting,
                bound_to=bound,
                bound_pod_state=self.bound_pod_state(bound),
                runtime_exists=(ws.metadata.namespace, ws.spec.runtime) in self.runtimes,
                ready_pods=self.ready_pods(ws.metadata.namespace, ws.spec.runtime),
            )
        )


def _ref(ws: PersistentWorkspace) -> ObjectRef:
    return ObjectRef.to(ws.API_VERSION, ws.KIND, ws.metadata)
