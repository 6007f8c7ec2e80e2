"""The state of the workspace world and every question tests ask of it.

``WorldState`` holds Runtime Pods, Runtimes, PersistentWorkspaces and Runs,
a virtual clock, per pod the set of workspace directories that exist on
that pod's ``workspace`` volume (an emptyDir: the directories vanish with
the pod), and the ``History`` of facts recorded while actions were applied.
Its methods only read: which pods exist or are ready, where a Run may be
scheduled or started, which Runs name a workspace or run on a pod, and the
inputs decisions take (snapshots, a Runtime's pods). Changing the world is
left to ``workspace_apply`` (decisions' actions) and ``workspace_world``
(what users, kubelets, the scheduler and runtimed do).
"""

from __future__ import annotations

from datetime import datetime

from kruntimes_core.core.timeutil import utc
from kruntimes_core.resources.cluster import ClusterSnapshot
from kruntimes_core.resources.pod import Pod
from kruntimes_core.resources.run import Run, RunPhase
from kruntimes_core.resources.runtime import Runtime
from kruntimes_core.resources.workspace import PersistentWorkspace, WorkspacePhase, workspace_path
from kruntimes_core.testing.workspace_history import History
from kruntimes_core.testing.workspace_world_pods import (
    PodId,
    WorldPod,
    assigned_pod_of,
    bound_pod_of,
)

_Key = tuple[str, str]


class WorldError(Exception):
    """A test drove the world into something its own rules forbid (a harness bug)."""


class WorldState:
    """Objects, a clock, disks and history; read here, changed by subclasses."""

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

    # ---- identity

    def _next(self, prefix: str) -> str:
        self._serial += 1
        return f"{prefix}-{self._serial}"

    def _version(self) -> str:
        self._serial += 1
        return str(self._serial)

    # ---- pods

    def pod(self, namespace: str, name: str) -> WorldPod | None:
        return self.pods.get((namespace, name))

    def existing(self, pod: PodId | None) -> WorldPod | None:
        """The pod with this name AND uid, deleting or not, if it exists."""
        if pod is None:
            return None
        found = self.pods.get((pod.namespace, pod.name))
        return found if found is not None and found.id == pod else None

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

    def startable_runs(self) -> list[_Key]:
        return [
            key
            for key, run in sorted(self.runs.items())
            if run.status.phase is RunPhase.SCHEDULED and self.existing(assigned_pod_of(run))
        ]

    def runs_naming(self, namespace: str, workspace: str) -> list[Run]:
        """The Runs of ``namespace`` naming ``workspace``, as batch.py groups them."""
        return [
            run
            for key, run in sorted(self.runs.items())
            if key[0] == namespace and run.workspace_name == workspace
        ]

    def runs_on(self, pod: PodId) -> list[Run]:
        """The Runs assigned to exactly this pod: what its runtimed executes."""
        return [run for _, run in sorted(self.runs.items()) if assigned_pod_of(run) == pod]

    def local_active_runs(self, pod: PodId, workspace: str) -> tuple[str, ...]:
        """The non-terminal Runs assigned to exactly this pod and naming ``workspace``."""
        return tuple(
            run.metadata.name
            for run in self.runs_on(pod)
            if run.active and run.workspace_name == workspace
        )

    def _active_runs_naming(self, namespace: str, workspace: str) -> tuple[str, ...]:
        return tuple(
            run.metadata.name for run in self.runs_naming(namespace, workspace) if run.active
        )

    # ---- snapshots and disks

    def snapshot(self) -> ClusterSnapshot:
        return ClusterSnapshot(
            runtimes=tuple(rt for _, rt in sorted(self.runtimes.items())),
            pods=tuple(pod.to_pod() for _, pod in sorted(self.pods.items())),
            workspaces=tuple(ws for _, ws in sorted(self.workspaces.items())),
            runs=tuple(run for _, run in sorted(self.runs.items())),
        )

    def directory_present(self, pod: PodId | None, workspace_name: str) -> bool:
        if pod is None or self.existing(pod) is None:
            return False
        return workspace_path(workspace_name) in self.disks.get(pod, set())
