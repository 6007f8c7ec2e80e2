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

The finalizer guards bytes: it is added with the binding and removed by the
controller only when no bytes can remain (the bound pod is gone, or the
workspace was never bound and is being deleted). While the bound pod lives,
only its runtimed removes it (runtimed.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from attrs import evolve, frozen

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


@frozen
class _Draft:
    """The decision under construction; every step returns a new draft."""

    workspace: PersistentWorkspace
    status: WorkspaceStatus
    now: datetime
    events: tuple[Event, ...] = ()
    requeue_after: timedelta | None = None

    def condition(self, type_: str, status: ConditionStatus, reason: str, message: str) -> _Draft:
        conditions = set_condition(
            self.status.conditions,
            type_,
            status,
            str(reason),  # plain text, so a status read back from JSON compares equal
            message,
            now=self.now,
            observed_generation=self.workspace.metadata.generation,
        )
        return evolve(self, status=evolve(self.status, conditions=conditions))

    def event(self, type_: EventType, reason: str, message: str) -> _Draft:
        return evolve(self, events=(*self.events, Event(type_, reason, message)))

    @property
    def phase(self) -> WorkspacePhase:
        return self.status.phase or WorkspacePhase.PENDING


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
    active = any(
        run.active
        and run.workspace_name == workspace.metadata.name
        and run.metadata.namespace == workspace.metadata.namespace
        for run in runs
    )
    draft = _Draft(workspace, workspace.status, now)
    draft = draft.condition(ACCEPTED, TRUE, "Accepted", "spec is valid")
    draft = _bind_or_check(draft, pods)
    if draft.phase is WorkspacePhase.BOUND and not workspace.metadata.deleting:
        draft = _track_usage(draft, active=active)
    if draft.phase is WorkspacePhase.BOUND and workspace.metadata.deleting:
        draft = _release(draft, "DeletionRequested", "deletion was requested")
    return _finish(draft, pods)


def _bind_or_check(draft: _Draft, pods: RuntimePods) -> _Draft:
    if draft.phase is WorkspacePhase.PENDING:
        return _bind(draft, pods)
    reason = loss_reason(draft.status, pods)
    if reason is not None:
        return _lose(draft, reason, pods)
    if draft.phase is WorkspacePhase.LOST:
        return _runtime_readiness(draft, pods)
    pod = pods.by_name[draft.status.bound_pod]
    if pod.ready:
        return draft.condition(RUNTIME_READY, TRUE, "BoundPodReady", "bound pod is ready")
    return draft.condition(
        RUNTIME_READY,
        FALSE,
        "BoundPodNotReady",
        f"bound pod {pod.metadata.name!r} is not ready; Runs using the workspace wait",
    )


def _runtime_readiness(draft: _Draft, pods: RuntimePods) -> _Draft:
    runtime = draft.workspace.spec.runtime
    if pods.runtime is None:
        return draft.condition(
            RUNTIME_READY, FALSE, "RuntimeNotFound", f"runtime {runtime!r} not found"
        )
    if not pods.ready:
        return draft.condition(
            RUNTIME_READY,
            FALSE,
            "NoReadyRuntimePods",
            f"runtime {runtime!r} has no ready pods",
        )
    return draft.condition(
        RUNTIME_READY, TRUE, "ReadyRuntimePods", f"runtime {runtime!r} has ready pods"
    )


def _bind(draft: _Draft, pods: RuntimePods) -> _Draft:
    draft = evolve(draft, status=evolve(draft.status, phase=WorkspacePhase.PENDING))
    draft = _runtime_readiness(draft, pods)
    meta = draft.workspace.metadata
    runtime = draft.workspace.spec.runtime
    if pods.runtime is None:
        return draft.condition(
            BOUND, FALSE, BoundReason.RUNTIME_NOT_FOUND, f"runtime {runtime!r} not found"
        )
    if meta.deleting:
        return draft.condition(
            BOUND,
            FALSE,
            BoundReason.DELETED_BEFORE_BINDING,
            "the workspace is being deleted and will not be bound",
        )
    pod = select_pod(meta, pods.ready)
    if pod is None:
        return draft.condition(
            BOUND,
            FALSE,
            BoundReason.NO_READY_RUNTIME_PODS,
            f"waiting for a ready pod of runtime {runtime!r}",
        )
    bound = evolve(
        draft.status,
        phase=WorkspacePhase.BOUND,
        runtime=runtime,
        bound_pod=pod.metadata.name,
        bound_pod_uid=pod.metadata.uid,
        path=workspace_path(meta.name),
    )
    message = f"bound to pod {pod.metadata.name!r} (uid {pod.metadata.uid})"
    draft = evolve(draft, status=bound)
    draft = draft.condition(RUNTIME_READY, TRUE, "BoundPodReady", "bound pod is ready")
    draft = draft.condition(BOUND, TRUE, BoundReason.BOUND, message)
    return draft.event(EventType.NORMAL, "Bound", message)


def _lose(draft: _Draft, reason: BoundReason, pods: RuntimePods) -> _Draft:
    was = draft.phase
    message = loss_message(reason, draft.status)
    draft = evolve(draft, status=evolve(draft.status, phase=WorkspacePhase.LOST))
    draft = _runtime_readiness(draft, pods)
    draft = draft.condition(BOUND, FALSE, reason, message)
    if was is WorkspacePhase.LOST:
        return draft
    return draft.event(EventType.WARNING, "WorkspaceLost", message)


def _track_usage(draft: _Draft, *, active: bool) -> _Draft:
    draft = evolve(
        draft,
        status=usage.track(
            draft.status,
            active=active,
            now=draft.now,
            generation=draft.workspace.metadata.generation,
        ),
    )
    verdict = usage.ttl_verdict(draft.workspace.spec, draft.status, active=active, now=draft.now)
    if verdict.expired:
        return _release(draft, "TTLExpired", verdict.message)
    return evolve(draft, requeue_after=verdict.remaining)


def _release(draft: _Draft, reason: str, message: str) -> _Draft:
    draft = evolve(draft, status=evolve(draft.status, phase=WorkspacePhase.RELEASED))
    return draft.event(EventType.NORMAL, "Released", f"{message}; cleanup started ({reason})")


def _finish(draft: _Draft, pods: RuntimePods) -> Decision[WorkspaceStatus]:
    workspace = draft.workspace
    meta = workspace.metadata
    target = ObjectRef.to(workspace.API_VERSION, workspace.KIND, meta)
    status = draft.status
    bytes_may_remain = pods.live(status.bound_pod, status.bound_pod_uid) is not None
    has_finalizer = meta.has_finalizer(FINALIZER)
    events = draft.events
    actions: list[Action] = []
    if bytes_may_remain and not has_finalizer and not meta.deleting:
        actions.append(AddFinalizer(target, FINALIZER))
    if status != workspace.status:
        actions.append(PatchStatus(target, meta.resource_version, status))
    if status.phase is WorkspacePhase.RELEASED and not meta.deleting:
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
