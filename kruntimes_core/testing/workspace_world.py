"""A small in-memory world in which workspace decisions act as on a cluster.

Theory of operation. The world holds Runtime Pods, Runtimes,
PersistentWorkspaces and Runs, a virtual clock, and per pod the set of
workspace directories that exist on that pod's ``workspace`` volume (an
emptyDir: the directories vanish with the pod). Tests change the world the
way users (creating, editing, deleting), kubelets and controllers of pods
(readiness, termination, replacement, label edits), the scheduler (spec 4
workspace filter) and runtimed's Run execution (fencing, spec 6) would, read
inputs for the decisions from it, and hand the decisions' actions back to
``World.apply``, which applies them with Kubernetes semantics:

- ``PatchStatus`` replaces the status (resourceVersion is not checked: the
  world is never read stale);
- ``AddFinalizer`` is refused on an object being deleted (the API server
  forbids adding finalizers then), ``RemoveFinalizer`` removes it;
- ``DeleteObject`` sets ``deletionTimestamp`` while finalizers remain and
  removes the object otherwise; an object being deleted disappears the moment
  its last finalizer goes;
- ``DeleteWorkspaceDirectory`` removes the directory from the target pod's
  disk.

An action whose target no longer exists, or exists with another uid, is
rejected as the API server would reject it (404 or a uid precondition).

While applying, the world records the facts invariants need (``History``):
every binding, phase and ``lastUsedTime`` a workspace ever had, every
directory deletion with who did it and which local Runs were active then,
every removal of the cleanup finalizer with whether bytes could remain, and
every workspace that disappeared. The world judges nothing itself; the
invariants in ``workspace_machine`` do.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from enum import StrEnum

from attrs import define, evolve, field, frozen

from kruntimes_core.core.actions import (
    Action,
    AddFinalizer,
    DeleteObject,
    DeleteWorkspaceDirectory,
    ObjectRef,
    PatchStatus,
    RemoveFinalizer,
)
from kruntimes_core.core.conditions import ConditionStatus, find_condition
from kruntimes_core.core.hashing import fnv1a_32
from kruntimes_core.core.meta import ObjectMeta
from kruntimes_core.core.timeutil import to_k8s_time, utc
from kruntimes_core.resources.cluster import ClusterSnapshot
from kruntimes_core.resources.pod import (
    POD_RUNNING,
    RUNTIME_LABEL,
    RUNTIMED_READY,
    Pod,
    PodCondition,
    PodStatus,
)
from kruntimes_core.resources.run import Run, RunPhase, RunSpec, RunStatus, WorkspaceRef
from kruntimes_core.resources.runtime import Runtime
from kruntimes_core.resources.workspace import (
    FINALIZER,
    PERSISTENT_ROOT,
    CleanupPolicy,
    PersistentWorkspace,
    WorkspacePhase,
    WorkspaceSpec,
    WorkspaceStatus,
    workspace_path,
)

FOREIGN_FINALIZER = "example.com/keep"
"""A finalizer some other controller holds; the workspace protocol must not care."""

_Key = tuple[str, str]


class WorldError(Exception):
    """A test drove the world into something its own rules forbid (a harness bug)."""


class PodHealth(StrEnum):
    """How a pod fails (or passes) the readiness rule of spec section 1."""

    READY = "Ready"
    NOT_RUNNING = "NotRunning"
    """``status.phase`` is not Running yet."""
    NOT_READY = "NotReady"
    """The kubelet's ``Ready`` condition is False."""
    RUNTIMED_DOWN = "RuntimedDown"
    """runtimed's ``kruntimes.io/RuntimedReady`` heartbeat is False."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}.{self.name}"


@frozen(order=True)
class PodId:
    """One incarnation of a pod: the same name with another uid is another pod."""

    namespace: str
    name: str
    uid: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}#{self.uid}"

    @classmethod
    def of(cls, meta: ObjectMeta) -> PodId:
        return cls(meta.namespace, meta.name, meta.uid)


@frozen
class WorldPod:
    id: PodId
    runtime: str
    health: PodHealth = PodHealth.READY
    deleted_at: datetime | None = None

    @property
    def ready(self) -> bool:
        """The world's own reading of spec section 1 (not ``Pod.ready``)."""
        return self.health is PodHealth.READY and self.deleted_at is None

    def to_pod(self) -> Pod:
        ready = (
            ConditionStatus.FALSE if self.health is PodHealth.NOT_READY else ConditionStatus.TRUE
        )
        runtimed = (
            ConditionStatus.FALSE
            if self.health is PodHealth.RUNTIMED_DOWN
            else ConditionStatus.TRUE
        )
        return Pod(
            metadata=ObjectMeta(
                name=self.id.name,
                namespace=self.id.namespace,
                uid=self.id.uid,
                labels={RUNTIME_LABEL: self.runtime},
                deletion_timestamp=self.deleted_at,
            ),
            status=PodStatus(
                phase="Pending" if self.health is PodHealth.NOT_RUNNING else POD_RUNNING,
                conditions=(
                    PodCondition("Ready", ready),
                    PodCondition(RUNTIMED_READY, runtimed),
                ),
            ),
        )


class Party(StrEnum):
    CONTROLLER = "controller"
    RUNTIMED = "runtimed"
    USER = "user"
    FOREIGN = "foreign-controller"


@frozen
class Actor:
    """Who applies a batch of actions; runtimed is always runtimed on one pod."""

    party: Party
    pod: PodId | None = None

    def __str__(self) -> str:
        return f"{self.party}@{self.pod}" if self.pod else str(self.party)

    @classmethod
    def controller(cls) -> Actor:
        return cls(Party.CONTROLLER)

    @classmethod
    def runtimed(cls, pod: PodId) -> Actor:
        return cls(Party.RUNTIMED, pod)


# --------------------------------------------------------------------------- history


@frozen
class DirectoryDeletion:
    at: datetime
    actor: Actor
    target: PodId
    path: str
    workspace_uid: str | None
    """The workspace the path belongs to (by name, in the pod's namespace), if any."""
    workspace_bound_to: PodId | None
    workspace_deleting: bool
    local_active_runs: tuple[str, ...]
    """Non-terminal Runs naming the workspace and assigned to ``target`` then."""
    existed: bool


@frozen
class FinalizerRemoval:
    at: datetime
    actor: Actor
    workspace_uid: str
    bound_to: PodId | None
    pod_exists: bool
    """The bound pod (name AND uid) still existed, deleting or not."""
    directory_present: bool
    """The workspace directory still existed on the bound pod's disk."""


@frozen
class Vanished:
    """A workspace object disappeared from the API."""

    at: datetime
    workspace_uid: str
    bound_to: PodId | None
    pod_exists: bool
    directory_present: bool


@frozen
class Binding:
    """A status write that recorded a binding for the first time."""

    at: datetime
    workspace_uid: str
    pod: PodId
    ready_pods: tuple[PodId, ...]
    """The ready pods of the workspace's Runtime then, sorted by name."""
    expected: PodId | None
    """Spec 2.2: ``ready_pods[fnv1a_32(uid) % len(ready_pods)]``."""


@frozen
class Release:
    """A status write that moved a workspace to ``Released``."""

    at: datetime
    workspace_uid: str
    deleting: bool
    policy: CleanupPolicy
    ttl_seconds: int | None
    last_used_time: datetime | None
    active_runs: tuple[str, ...]
    bound_at: datetime | None
    last_seen_active: datetime | None
    """The last time a controller decided this workspace while a Run was active."""


@frozen
class LastUsedMove:
    """A status write that changed an already set ``lastUsedTime``."""

    at: datetime
    workspace_uid: str
    before: datetime
    after: datetime | None
    active_since_before: bool
    """Some Run naming the workspace was non-terminal since ``before`` was written."""


@frozen
class StatusWrite:
    """A status write, judged against spec 2.6."""

    at: datetime
    workspace_uid: str
    changed: bool
    """The written status differs from the stored one."""
    misdated_conditions: tuple[str, ...]
    """Condition types whose lastTransitionTime is not what set-condition
    semantics demand: kept when the status did not flip, ``now`` otherwise."""


@frozen
class ControllerOutcome:
    """A workspace right after the controller's actions for it were applied."""

    at: datetime
    workspace_uid: str
    phase: WorkspacePhase | None
    deleting: bool
    bound_to: PodId | None
    bound_pod_state: str
    """``unbound``, ``live``, ``deleting``, ``replaced`` or ``gone`` (world truth)."""
    runtime_exists: bool
    ready_pods: tuple[PodId, ...]


@define
class History:
    """Append-only facts; ``phases``/``bound_pods`` start with the unset value."""

    phases: dict[str, list[WorkspacePhase | None]] = field(factory=dict)
    bound_pods: dict[str, list[PodId | None]] = field(factory=dict)
    bound_at: dict[str, datetime] = field(factory=dict)
    last_seen_active: dict[str, datetime] = field(factory=dict)
    bindings: list[Binding] = field(factory=list)
    releases: list[Release] = field(factory=list)
    last_used_moves: list[LastUsedMove] = field(factory=list)
    directory_deletions: list[DirectoryDeletion] = field(factory=list)
    finalizer_removals: list[FinalizerRemoval] = field(factory=list)
    vanished: list[Vanished] = field(factory=list)
    controller_outcomes: list[ControllerOutcome] = field(factory=list)
    status_writes: list[StatusWrite] = field(factory=list)
    rejected: list[tuple[Actor, Action, str]] = field(factory=list)


def bound_pod_of(status: WorkspaceStatus, namespace: str) -> PodId | None:
    if not status.bound_pod and not status.bound_pod_uid:
        return None
    return PodId(namespace, status.bound_pod, status.bound_pod_uid)


def expected_binding(workspace: PersistentWorkspace, ready: Sequence[PodId]) -> PodId | None:
    """Spec 2.2, written out independently of ``binding.select_pod``."""
    if not ready:
        return None
    meta = workspace.metadata
    key = meta.uid or f"{meta.namespace}/{meta.name}"
    ordered = sorted(ready, key=lambda pod: pod.name)
    return ordered[fnv1a_32(key.encode("utf-8")) % len(ordered)]


# --------------------------------------------------------------------------- world


class World:
    """Objects, a clock and disks; mutated only through its methods."""

    def __init__(self, now: datetime) -> None:
        self.now: datetime = utc(now)
        self.runtimes: dict[_Key, Runtime] = {}
        self.pods: dict[_Key, WorldPod] = {}
        self.workspaces: dict[_Key, PersistentWorkspace] = {}
        self.runs: dict[_Key, Run] = {}
        self.disks: dict[PodId, set[str]] = {}
        self.history = History()
        self._serial = 0
        self._active_since_last_used: dict[str, bool] = {}

    # ---- identity and time

    def _next(self, prefix: str) -> str:
        self._serial += 1
        return f"{prefix}-{self._serial}"

    def _version(self) -> str:
        self._serial += 1
        return str(self._serial)

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

    def pod(self, namespace: str, name: str) -> WorldPod | None:
        return self.pods.get((namespace, name))

    def existing(self, pod: PodId | None) -> WorldPod | None:
        """The pod with this name AND uid, deleting or not, if it exists."""
        if pod is None:
            return None
        found = self.pods.get((pod.namespace, pod.name))
        return found if found is not None and found.id == pod else None

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

    def ready_pods(self, namespace: str, runtime: str) -> tuple[PodId, ...]:
        return tuple(
            sorted(
                (
                    pod.id
                    for pod in self.pods.values()
                    if pod.ready and pod.id.namespace == namespace and pod.runtime == runtime
                ),
                key=lambda pod: pod.name,
            )
        )

    def runtime_inputs(self, namespace: str, runtime: str) -> tuple[Runtime | None, list[Pod]]:
        """The Runtime and its pods, as batch.py indexes them (sorted by name)."""
        pods = [
            pod.to_pod()
            for key, pod in sorted(self.pods.items())
            if key[0] == namespace and pod.runtime == runtime
        ]
        return self.runtimes.get((namespace, runtime)), pods

    def namespace_pods(self, namespace: str) -> list[Pod]:
        """Every pod of the namespace, labelled or not (bindings are checked against these)."""
        return [pod.to_pod() for key, pod in sorted(self.pods.items()) if key[0] == namespace]

    def bound_pod_state(self, bound: PodId | None) -> str:
        if bound is None:
            return "unbound"
        found = self.pods.get((bound.namespace, bound.name))
        if found is None:
            return "gone"
        if found.id.uid != bound.uid:
            return "replaced"
        return "deleting" if found.deleted_at is not None else "live"

    # ---- workspaces

    def workspace(self, namespace: str, name: str) -> PersistentWorkspace | None:
        return self.workspaces.get((namespace, name))

    def workspace_by_uid(self, uid: str) -> PersistentWorkspace | None:
        return next((ws for ws in self.workspaces.values() if ws.metadata.uid == uid), None)

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

    def workspaces_in(self, namespace: str) -> list[PersistentWorkspace]:
        return [ws for key, ws in sorted(self.workspaces.items()) if key[0] == namespace]

    # ---- runs

    def admission_problem(self, namespace: str, workspace: str | None, runtime: str) -> str | None:
        """Spec 5.1 (authorization is out of scope): why a Run create is refused."""
        if workspace is None:
            return None
        ws = self.workspaces.get((namespace, workspace))
        if ws is None:
            return f"workspace {workspace!r} does not exist"
        if ws.status.phase is WorkspacePhase.RELEASED:
            return f"workspace {workspace!r} is Released"
        if ws.spec.runtime != runtime:
            return f"workspace {workspace!r} belongs to runtime {ws.spec.runtime!r}"
        return None

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

    def eligible_pods(self, run: Run) -> tuple[PodId, ...]:
        """Spec 4: where the scheduler may place ``run`` (capacity is not modelled).

        A Run naming a workspace may only go to the ready bound pod (name AND
        uid) of its Bound workspace of the same Runtime; any other Run to any
        ready pod of its Runtime.
        """
        namespace = run.metadata.namespace
        if run.spec.workspace is None:
            return self.ready_pods(namespace, run.spec.runtime)
        ws = self.workspaces.get((namespace, run.workspace_name))
        if ws is None or ws.status.phase is not WorkspacePhase.BOUND:
            return ()
        if ws.spec.runtime != run.spec.runtime:
            return ()
        pod = self.existing(bound_pod_of(ws.status, namespace))
        if pod is None or not pod.ready or pod.runtime != run.spec.runtime:
            return ()
        return (pod.id,)

    def schedulable_runs(self) -> list[_Key]:
        return [
            key
            for key, run in sorted(self.runs.items())
            if run.status.phase is RunPhase.PENDING and self.eligible_pods(run)
        ]

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

    def startable_runs(self) -> list[_Key]:
        return [
            key
            for key, run in sorted(self.runs.items())
            if run.status.phase is RunPhase.SCHEDULED and self.existing(_assigned(run))
        ]

    def start_run(self, namespace: str, name: str) -> bool:
        """runtimed accepts (fencing, spec 6) and creates the workspace directory.

        Returns False when fencing refuses the Run, which then fails.
        """
        run = self.runs[(namespace, name)]
        pod = self.existing(_assigned(run))
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

    def runs_naming(self, namespace: str, workspace: str) -> list[Run]:
        """The Runs of ``namespace`` naming ``workspace``, as batch.py groups them."""
        return [
            run
            for key, run in sorted(self.runs.items())
            if key[0] == namespace and run.workspace_name == workspace
        ]

    def runs_on(self, pod: PodId) -> list[Run]:
        """The Runs assigned to exactly this pod: what its runtimed executes."""
        return [run for _, run in sorted(self.runs.items()) if _assigned(run) == pod]

    def _active_runs_naming(self, namespace: str, workspace: str) -> tuple[str, ...]:
        return tuple(
            run.metadata.name for run in self.runs_naming(namespace, workspace) if run.active
        )

    # ---- snapshots and observations

    def snapshot(self) -> ClusterSnapshot:
        return ClusterSnapshot(
            runtimes=tuple(rt for _, rt in sorted(self.runtimes.items())),
            pods=tuple(pod.to_pod() for _, pod in sorted(self.pods.items())),
            workspaces=tuple(ws for _, ws in sorted(self.workspaces.items())),
            runs=tuple(run for _, run in sorted(self.runs.items())),
        )

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

    def directory_present(self, pod: PodId | None, workspace_name: str) -> bool:
        if pod is None or self.existing(pod) is None:
            return False
        return workspace_path(workspace_name) in self.disks.get(pod, set())

    # ---- applying actions

    def apply(self, actions: Iterable[Action], actor: Actor) -> None:
        for action in actions:
            self._apply_one(action, actor)

    def _apply_one(self, action: Action, actor: Actor) -> None:
        if isinstance(action, DeleteWorkspaceDirectory):
            self._delete_directory(action, actor)
            return
        if action.target.kind != PersistentWorkspace.KIND:
            raise WorldError(f"unexpected action target {action.target.kind}: {action!r}")
        key = (action.target.namespace, action.target.name)
        ws = self.workspaces.get(key)
        if ws is None or ws.metadata.uid != action.target.uid:
            self.history.rejected.append((actor, action, "not found or uid mismatch"))
            return
        if isinstance(action, PatchStatus):
            status = action.status
            if not isinstance(status, WorkspaceStatus):
                raise WorldError(f"not a workspace status: {status!r}")
            self._observe_status(ws, status)
            ws = evolve(ws, status=status)
        elif isinstance(action, AddFinalizer):
            if ws.metadata.deleting:
                self.history.rejected.append((actor, action, "object is being deleted"))
                return
            if not ws.metadata.has_finalizer(action.finalizer):
                ws = _with_finalizers(ws, (*ws.metadata.finalizers, action.finalizer))
        elif isinstance(action, RemoveFinalizer):
            if action.finalizer == FINALIZER and ws.metadata.has_finalizer(FINALIZER):
                self._observe_finalizer_removal(ws, actor)
            remaining = tuple(f for f in ws.metadata.finalizers if f != action.finalizer)
            ws = _with_finalizers(ws, remaining)
        elif isinstance(action, DeleteObject):
            if ws.metadata.deletion_timestamp is None:
                meta = evolve(ws.metadata, deletion_timestamp=to_k8s_time(self.now))
                ws = evolve(ws, metadata=meta)
        else:
            raise WorldError(f"unexpected action {action!r}")
        ws = evolve(ws, metadata=evolve(ws.metadata, resource_version=self._version()))
        if ws.metadata.deleting and not ws.metadata.finalizers:
            self._vanish(ws)
        else:
            self.workspaces[key] = ws

    def _delete_directory(self, action: DeleteWorkspaceDirectory, actor: Actor) -> None:
        target = PodId(action.target.namespace, action.target.name, action.target.uid)
        pod = self.existing(target) if action.target.kind == Pod.KIND else None
        prefix = f"{PERSISTENT_ROOT}/"
        name = action.path[len(prefix) :] if action.path.startswith(prefix) else ""
        ws = self.workspaces.get((target.namespace, name)) if name else None
        disk = self.disks.get(target, set()) if pod is not None else set()
        self.history.directory_deletions.append(
            DirectoryDeletion(
                at=self.now,
                actor=actor,
                target=target,
                path=action.path,
                workspace_uid=ws.metadata.uid if ws else None,
                workspace_bound_to=bound_pod_of(ws.status, target.namespace) if ws else None,
                workspace_deleting=ws.metadata.deleting if ws else False,
                local_active_runs=tuple(
                    run.metadata.name
                    for run in self.runs_on(target)
                    if run.active and run.workspace_name == name
                ),
                existed=action.path in disk,
            )
        )
        if pod is None:
            self.history.rejected.append((actor, action, "pod not found or uid mismatch"))
            return
        disk.discard(action.path)

    def _observe_finalizer_removal(self, ws: PersistentWorkspace, actor: Actor) -> None:
        bound = bound_pod_of(ws.status, ws.metadata.namespace)
        self.history.finalizer_removals.append(
            FinalizerRemoval(
                at=self.now,
                actor=actor,
                workspace_uid=ws.metadata.uid,
                bound_to=bound,
                pod_exists=self.existing(bound) is not None,
                directory_present=self.directory_present(bound, ws.metadata.name),
            )
        )

    def _vanish(self, ws: PersistentWorkspace) -> None:
        del self.workspaces[ws.metadata.key]
        bound = bound_pod_of(ws.status, ws.metadata.namespace)
        self.history.vanished.append(
            Vanished(
                at=self.now,
                workspace_uid=ws.metadata.uid,
                bound_to=bound,
                pod_exists=self.existing(bound) is not None,
                directory_present=self.directory_present(bound, ws.metadata.name),
            )
        )
        self._active_since_last_used.pop(ws.metadata.uid, None)

    def _observe_status(self, ws: PersistentWorkspace, new: WorkspaceStatus) -> None:
        old = ws.status
        meta = ws.metadata
        uid = meta.uid
        history = self.history
        old_bound = bound_pod_of(old, meta.namespace)
        new_bound = bound_pod_of(new, meta.namespace)
        if new_bound != history.bound_pods[uid][-1]:
            history.bound_pods[uid].append(new_bound)
        if old_bound is None and new_bound is not None:
            ready = self.ready_pods(meta.namespace, ws.spec.runtime)
            history.bindings.append(
                Binding(self.now, uid, new_bound, ready, expected_binding(ws, ready))
            )
            history.bound_at.setdefault(uid, self.now)
            if new.phase is not WorkspacePhase.BOUND:
                # The write that binds may start cleanup at once (ttl 0): the
                # workspace passed through Bound inside one decision.
                history.phases[uid].append(WorkspacePhase.BOUND)
        history.status_writes.append(
            StatusWrite(self.now, uid, new != old, _misdated_conditions(old, new, self.now))
        )
        if new.phase != history.phases[uid][-1]:
            history.phases[uid].append(new.phase)
        if new.phase is WorkspacePhase.RELEASED and old.phase is not WorkspacePhase.RELEASED:
            history.releases.append(
                Release(
                    at=self.now,
                    workspace_uid=uid,
                    deleting=meta.deleting,
                    policy=ws.spec.cleanup_policy,
                    ttl_seconds=ws.spec.ttl_seconds_after_unused,
                    last_used_time=new.last_used_time,
                    active_runs=self._active_runs_naming(meta.namespace, meta.name),
                    bound_at=history.bound_at.get(uid),
                    last_seen_active=history.last_seen_active.get(uid),
                )
            )
        if new.last_used_time != old.last_used_time:
            if old.last_used_time is not None:
                history.last_used_moves.append(
                    LastUsedMove(
                        at=self.now,
                        workspace_uid=uid,
                        before=old.last_used_time,
                        after=new.last_used_time,
                        active_since_before=self._active_since_last_used.get(uid, False),
                    )
                )
            self._active_since_last_used[uid] = bool(
                self._active_runs_naming(meta.namespace, meta.name)
            )


def _misdated_conditions(
    old: WorkspaceStatus, new: WorkspaceStatus, now: datetime
) -> tuple[str, ...]:
    misdated = []
    for condition in new.conditions:
        before = find_condition(old.conditions, condition.type)
        kept = before is not None and before.status is condition.status
        expected = before.last_transition_time if kept and before else to_k8s_time(now)
        if condition.last_transition_time != expected:
            misdated.append(condition.type)
    return tuple(misdated)


def _ref(ws: PersistentWorkspace) -> ObjectRef:
    return ObjectRef.to(ws.API_VERSION, ws.KIND, ws.metadata)


def _with_finalizers(ws: PersistentWorkspace, finalizers: tuple[str, ...]) -> PersistentWorkspace:
    return evolve(ws, metadata=evolve(ws.metadata, finalizers=finalizers))


def _assigned(run: Run) -> PodId | None:
    if not run.status.assigned_pod:
        return None
    return PodId(run.metadata.namespace, run.status.assigned_pod, run.status.assigned_pod_uid)
