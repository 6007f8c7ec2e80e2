"""The workspace controller's decision (spec workspaces.md sections 2 and 3).

Theory of operation. One pass over a workspace, in the order the spec tells
the story: accept the spec, bind or check the binding (binding.py), track
usage and the TTL (usage.py), turn a deletion or an expired TTL into
``Released``, and finally derive the actions from the difference between the
observed and the desired object. Phases only move along this table:

    Pending  -> Pending | Bound
    Bound    -> Bound | Lost | Released
    Released -> Released | Lost
    Lost     -> Lost

The finalizer guards bytes: it is added with the binding (and kept on a
Bound or Released workspace) and removed by the controller only when no
bytes can remain (the bound pod is gone, or the
workspace was never bound and is being deleted). While the bound pod lives,
only its runtimed removes it (runtimed.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from kruntimes_core.core.actions import (
    Action,
    AddFinalizer,
    DeleteObject,
    Event,
    EventType,
    ObjectRef,
    PatchStatus,
    RemoveFinalizer,
)
from kruntimes_core.core.conditions import ConditionStatus, set_condition
from kruntimes_core.core.decision import Decision
from kruntimes_core.resources.run import Run
from kruntimes_core.resources.workspace import (
    FINALIZER,
    PersistentWorkspace,
    WorkspacePhase,
    WorkspaceStatus,
    workspace_path,
)
from kruntimes_core.workspaces import usage
from kruntimes_core.workspaces.binding import (
    BoundReason,
    loss_message,
    loss_reason,
    select_pod,
)
from kruntimes_core.workspaces.pods import RuntimePods

ACCEPTED = "Accepted"
RUNTIME_READY = "RuntimeReady"
BOUND = "Bound"

TRUE = ConditionStatus.TRUE
FALSE = ConditionStatus.FALSE


class _Draft:
    """The decision under construction: private, local, discarded after the call.

    Mutable on purpose: one decision touches the status a handful of times,
    and rebuilding a frozen status at each step dominated the cost at scale.
    """

    __slots__ = (
        "bound_pod",
        "bound_pod_uid",
        "conditions",
        "events",
        "last_used_time",
        "now",
        "path",
        "phase",
        "requeue_after",
        "runtime",
        "workspace",
    )

    def __init__(self, workspace: PersistentWorkspace, now: datetime) -> None:
        status = workspace.status
        self.workspace = workspace
        self.now = now
        self.phase = status.phase or WorkspacePhase.PENDING
        self.runtime = status.runtime
        self.bound_pod = status.bound_pod
        self.bound_pod_uid = status.bound_pod_uid
        self.path = status.path
        self.last_used_time = status.last_used_time
        self.conditions = status.conditions
        self.events: tuple[Event, ...] = ()
        self.requeue_after: timedelta | None = None

    def condition(self, type_: str, status: ConditionStatus, reason: str, message: str) -> None:
        self.conditions = set_condition(
            self.conditions,
            type_,
            status,
            reason,
            message,
            now=self.now,
            observed_generation=self.workspace.metadata.generation,
        )

    def event(self, type_: EventType, reason: str, message: str) -> None:
        self.events = (*self.events, Event(type_, reason, message))

    def status(self) -> WorkspaceStatus:
        """The desired status; the observed object itself when nothing changed."""
        observed = self.workspace.status
        desired = WorkspaceStatus(
            phase=self.phase,
            runtime=self.runtime,
            bound_pod=self.bound_pod,
            bound_pod_uid=self.bound_pod_uid,
            path=self.path,
            last_used_time=self.last_used_time,
            conditions=self.conditions,
        )
        return observed if desired == observed else desired


def decide_workspace(
    workspace: PersistentWorkspace,
    pods: RuntimePods,
    runs: Sequence[Run],
    now: datetime,
) -> Decision[WorkspaceStatus]:
    """Decide one workspace given its Runtime's pods and the Runs naming it.

    ``pods`` are the pods labelled with the workspace's Runtime in its
    namespace; ``runs`` are the Runs of that namespace whose
    ``spec.workspace.name`` is the workspace (others are ignored). Never
    raises for a state of the world.
    """
    meta = workspace.metadata
    active = any(
        run.active and run.workspace_name == meta.name and run.metadata.namespace == meta.namespace
        for run in runs
    )
    draft = _Draft(workspace, now)
    draft.condition(ACCEPTED, TRUE, "Accepted", "spec is valid")
    _bind_or_check(draft, pods)
    if draft.phase is WorkspacePhase.BOUND and not meta.deleting:
        _track_usage(draft, active=active)
    if draft.phase is WorkspacePhase.BOUND and meta.deleting:
        _release(draft, "DeletionRequested", "deletion was requested")
    return _finish(draft, pods)


def _bind_or_check(draft: _Draft, pods: RuntimePods) -> None:
    if draft.phase is WorkspacePhase.PENDING:
        _bind(draft, pods)
        return
    reason = loss_reason(draft.workspace.status, pods)
    if reason is not None:
        _lose(draft, reason, pods)
    elif draft.phase is WorkspacePhase.LOST:
        _runtime_readiness(draft, pods)
    elif pods.by_name[draft.bound_pod].ready:
        draft.condition(RUNTIME_READY, TRUE, "BoundPodReady", "bound pod is ready")
    else:
        draft.condition(
            RUNTIME_READY,
            FALSE,
            "BoundPodNotReady",
            f"bound pod {draft.bound_pod!r} is not ready; Runs using the workspace wait",
        )


def _runtime_readiness(draft: _Draft, pods: RuntimePods) -> None:
    runtime = draft.workspace.spec.runtime
    if pods.runtime is None:
        draft.condition(RUNTIME_READY, FALSE, "RuntimeNotFound", f"runtime {runtime!r} not found")
    elif not pods.ready:
        draft.condition(
            RUNTIME_READY, FALSE, "NoReadyRuntimePods", f"runtime {runtime!r} has no ready pods"
        )
    else:
        draft.condition(
            RUNTIME_READY, TRUE, "ReadyRuntimePods", f"runtime {runtime!r} has ready pods"
        )


def _bind(draft: _Draft, pods: RuntimePods) -> None:
    meta = draft.workspace.metadata
    runtime = draft.workspace.spec.runtime
    pod = select_pod(meta, pods.ready)
    if pods.runtime is None:
        _runtime_readiness(draft, pods)
        draft.condition(
            BOUND, FALSE, BoundReason.RUNTIME_NOT_FOUND, f"runtime {runtime!r} not found"
        )
    elif meta.deleting:
        _runtime_readiness(draft, pods)
        draft.condition(
            BOUND,
            FALSE,
            BoundReason.DELETED_BEFORE_BINDING,
            "the workspace is being deleted and will not be bound",
        )
    elif pod is None:
        _runtime_readiness(draft, pods)
        draft.condition(
            BOUND,
            FALSE,
            BoundReason.NO_READY_RUNTIME_PODS,
            f"waiting for a ready pod of runtime {runtime!r}",
        )
    else:
        message = f"bound to pod {pod.metadata.name!r} (uid {pod.metadata.uid})"
        draft.phase = WorkspacePhase.BOUND
        draft.runtime = runtime
        draft.bound_pod = pod.metadata.name
        draft.bound_pod_uid = pod.metadata.uid
        draft.path = workspace_path(meta.name)
        draft.condition(RUNTIME_READY, TRUE, "BoundPodReady", "bound pod is ready")
        draft.condition(BOUND, TRUE, BoundReason.BOUND, message)
        draft.event(EventType.NORMAL, "Bound", message)


def _lose(draft: _Draft, reason: BoundReason, pods: RuntimePods) -> None:
    message = loss_message(reason, draft.workspace.status)
    if draft.phase is not WorkspacePhase.LOST:
        draft.event(EventType.WARNING, "WorkspaceLost", message)
    draft.phase = WorkspacePhase.LOST
    _runtime_readiness(draft, pods)
    draft.condition(BOUND, FALSE, reason, message)


def _track_usage(draft: _Draft, *, active: bool) -> None:
    observed = draft.workspace.status
    draft.last_used_time = usage.last_used_time(observed, active=active, now=draft.now)
    if active:
        draft.condition(usage.IN_USE, TRUE, usage.ACTIVE_RUNS, usage.ACTIVE_MESSAGE)
    else:
        draft.condition(usage.IN_USE, FALSE, usage.UNUSED, usage.UNUSED_MESSAGE)
    verdict = usage.ttl_verdict(
        draft.workspace.spec, draft.last_used_time, active=active, now=draft.now
    )
    if verdict.expired:
        _release(draft, "TTLExpired", verdict.message)
    else:
        draft.requeue_after = verdict.remaining


def _release(draft: _Draft, reason: str, message: str) -> None:
    draft.phase = WorkspacePhase.RELEASED
    draft.event(EventType.NORMAL, "Released", f"{message}; cleanup started ({reason})")


def _finish(draft: _Draft, pods: RuntimePods) -> Decision[WorkspaceStatus]:
    workspace = draft.workspace
    meta = workspace.metadata
    target = ObjectRef.to(workspace.API_VERSION, workspace.KIND, meta)
    status = draft.status()
    bytes_may_remain = pods.live(status.bound_pod, status.bound_pod_uid) is not None
    has_finalizer = meta.has_finalizer(FINALIZER)
    events = draft.events
    actions: list[Action] = []
    holds_bytes = status.phase in (WorkspacePhase.BOUND, WorkspacePhase.RELEASED)
    if bytes_may_remain and holds_bytes and not has_finalizer and not meta.deleting:
        actions.append(AddFinalizer(target, FINALIZER))
    released = WorkspacePhase.RELEASED
    wants_delete = not meta.deleting and released in (status.phase, workspace.status.phase)
    # Observed Released but not deleting: a crash came between the two steps of
    # starting cleanup. The delete goes first, so a status that moves on (to
    # Lost) can never be written without the delete having been requested.
    overdue = wants_delete and workspace.status.phase is released
    if overdue:
        actions.append(DeleteObject(target))
    if status != workspace.status:
        actions.append(PatchStatus(target, meta.resource_version, status))
    if wants_delete and not overdue:
        actions.append(DeleteObject(target))
    releasable = meta.deleting or status.phase is WorkspacePhase.LOST
    if has_finalizer and not bytes_may_remain and releasable:
        actions.append(RemoveFinalizer(target, FINALIZER))
        events = (
            *events,
            Event(EventType.NORMAL, "FinalizerRemoved", _why_no_bytes(status)),
        )
    return Decision(
        status=status,
        actions=tuple(actions),
        requeue_after=draft.requeue_after,
        events=events,
    )


def _why_no_bytes(status: WorkspaceStatus) -> str:
    if not status.bound_pod_uid:
        return "the workspace was never bound; nothing to clean up"
    return f"bound pod {status.bound_pod!r} is gone; no bytes remain to delete"
