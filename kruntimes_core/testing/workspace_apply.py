"""How decisions' actions change the workspace world, with Kubernetes semantics.

``ActionApplier.apply`` applies the actions a decision returned as the API
server and runtimed would:

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
While applying, it records in ``History`` (workspace_history.py) the facts
invariants need: bindings, phases, releases, ``lastUsedTime`` moves, status
writes, directory deletions, finalizer removals and vanished workspaces.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from attrs import evolve

from kruntimes_core.core.actions import (
    Action,
    AddFinalizer,
    DeleteObject,
    DeleteWorkspaceDirectory,
    PatchStatus,
    RemoveFinalizer,
)
from kruntimes_core.core.conditions import find_condition
from kruntimes_core.core.timeutil import to_k8s_time
from kruntimes_core.resources.pod import Pod
from kruntimes_core.resources.workspace import (
    FINALIZER,
    PERSISTENT_ROOT,
    PersistentWorkspace,
    WorkspacePhase,
    WorkspaceStatus,
)
from kruntimes_core.testing.workspace_history import (
    Binding,
    DirectoryDeletion,
    FinalizerRemoval,
    LastUsedMove,
    Release,
    StatusWrite,
    Vanished,
    expected_binding,
)
from kruntimes_core.testing.workspace_world_pods import Actor, PodId, bound_pod_of
from kruntimes_core.testing.workspace_world_state import WorldError, WorldState


class ActionApplier(WorldState):
    """The world's state plus ``apply``: decisions' actions, recorded in ``history``."""

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
                local_active_runs=self.local_active_runs(target, name),
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


def _with_finalizers(ws: PersistentWorkspace, finalizers: tuple[str, ...]) -> PersistentWorkspace:
    return evolve(ws, metadata=evolve(ws.metadata, finalizers=finalizers))
