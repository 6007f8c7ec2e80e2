"""Deciding many workspaces at once (spec workspaces.md sections 2-3).

The cluster is indexed once: pods by (namespace, Runtime), Runs by the
workspace they name. Each Runtime's pods are sorted once and shared by all
of its workspaces, so a batch costs O(pods log pods + workspaces + Runs).
Results come back sorted by namespace and name, whatever the input order.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import TypeVar

from attrs import frozen

from kruntimes_core.core.decision import Decision
from kruntimes_core.resources.cluster import ClusterSnapshot
from kruntimes_core.resources.pod import Pod
from kruntimes_core.resources.run import Run
from kruntimes_core.resources.runtime import Runtime
from kruntimes_core.resources.workspace import PersistentWorkspace, WorkspaceStatus
from kruntimes_core.workspaces.controller import decide_workspace
from kruntimes_core.workspaces.pods import RuntimePods, by_name
from kruntimes_core.workspaces.runtimed import decide_local_cleanup

_Key = tuple[str, str]
_PodKey = tuple[str, str, str]
_Sortable = TypeVar("_Sortable", Runtime, PersistentWorkspace)


@frozen
class WorkspaceDecisions:
    """The controller's decision for one workspace, and its bound runtimed's."""

    workspace: PersistentWorkspace
    controller: Decision[WorkspaceStatus]
    runtimed: Decision[None] | None
    """None when the bound pod does not exist (no runtimed can act)."""


def decide_for_runtime(
    pods: RuntimePods,
    workspaces: Iterable[PersistentWorkspace],
    runs_by_workspace: Mapping[_Key, Sequence[Run]],
    now: datetime,
) -> tuple[Decision[WorkspaceStatus], ...]:
    """Controller decisions for workspaces of one Runtime, pods indexed once.

    ``runs_by_workspace`` maps ``(namespace, workspace name)`` to the Runs
    naming it. Decisions come back in the order of ``workspaces``.
    """
    return tuple(
        decide_workspace(ws, pods, runs_by_workspace.get(ws.metadata.key, ()), now)
        for ws in workspaces
    )


def decide_cluster(snapshot: ClusterSnapshot, now: datetime) -> tuple[WorkspaceDecisions, ...]:
    """Both halves of the protocol for every workspace, sorted by namespace/name."""
    return tuple(iter_decisions(snapshot, now))


def iter_decisions(snapshot: ClusterSnapshot, now: datetime) -> Iterator[WorkspaceDecisions]:
    """``decide_cluster`` one workspace at a time, for callers that apply and move on.

    Holding 100,000 decisions at once is what makes a batch costly (the
    garbage collector re-scans them); a stream keeps memory flat.
    """
    runtimes = {rt.metadata.key: rt for rt in _sorted(snapshot.runtimes)}
    pods_by_runtime: dict[_Key, list[Pod]] = defaultdict(list)
    pods_by_namespace: dict[str, list[Pod]] = defaultdict(list)
    for pod in snapshot.pods:
        pods_by_namespace[pod.metadata.namespace].append(pod)
        if pod.runtime:
            pods_by_runtime[(pod.metadata.namespace, pod.runtime)].append(pod)
    named = {namespace: by_name(pods) for namespace, pods in pods_by_namespace.items()}
    runs_by_workspace: dict[_Key, list[Run]] = defaultdict(list)
    runs_by_pod: dict[_PodKey, list[Run]] = defaultdict(list)
    for run in snapshot.runs:
        if run.workspace_name:
            runs_by_workspace[(run.metadata.namespace, run.workspace_name)].append(run)
        placed = (run.metadata.namespace, run.status.assigned_pod, run.status.assigned_pod_uid)
        runs_by_pod[placed].append(run)

    indexes: dict[_Key, RuntimePods] = {}
    for ws in _sorted(snapshot.workspaces):
        key = (ws.metadata.namespace, ws.spec.runtime)
        pods = indexes.get(key)
        if pods is None:
            pods = indexes[key] = RuntimePods.index(
                runtimes.get(key), pods_by_runtime[key], named.get(key[0], {})
            )
        decision = decide_workspace(ws, pods, runs_by_workspace.get(ws.metadata.key, ()), now)
        yield WorkspaceDecisions(ws, decision, _local_cleanup(ws, pods, runs_by_pod))


def _local_cleanup(
    ws: PersistentWorkspace, pods: RuntimePods, runs_by_pod: Mapping[_PodKey, Sequence[Run]]
) -> Decision[None] | None:
    pod = pods.live(ws.status.bound_pod, ws.status.bound_pod_uid)
    if pod is None:
        return None
    local = runs_by_pod.get((pod.metadata.namespace, pod.metadata.name, pod.metadata.uid), ())
    return decide_local_cleanup(pod, ws, local)


def _sorted(objects: Iterable[_Sortable]) -> list[_Sortable]:
    return sorted(objects, key=lambda obj: (obj.metadata.key, obj.metadata.uid))
