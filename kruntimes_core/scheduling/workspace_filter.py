"""The workspace filter (spec workspaces.md section 4, "Workspace filter").

A Run that names a workspace may only go to the one pod the workspace is
bound to, by name AND uid. Every other state (missing, another Runtime,
Pending, Lost, Released, being deleted) leaves the Run Pending with a
message naming the workspace and why; none of them fails the Run.
"""

from __future__ import annotations

from attrs import frozen

from kruntimes_core.resources.run import Run
from kruntimes_core.resources.workspace import PersistentWorkspace, WorkspacePhase


@frozen
class WorkspaceVerdict:
    """``pod``/``uid`` restrict the candidates; ``blocked`` says why there are none."""

    pod: str = ""
    uid: str = ""
    blocked: str = ""

    @property
    def restricts(self) -> bool:
        return bool(self.pod)


ANY_POD = WorkspaceVerdict()


def workspace_verdict(run: Run, workspace: PersistentWorkspace | None) -> WorkspaceVerdict:
    """What the Run's workspace allows; ``workspace`` is the one it names, if found."""
    name = run.workspace_name
    if not name:
        return ANY_POD
    quoted = f'workspace "{name}"'
    if workspace is None:
        return WorkspaceVerdict(blocked=f"{quoted} not found")
    if workspace.spec.runtime != run.spec.runtime:
        return WorkspaceVerdict(
            blocked=f'{quoted} belongs to runtime "{workspace.spec.runtime}", '
            f'not "{run.spec.runtime}"'
        )
    status = workspace.status
    phase = status.phase or WorkspacePhase.PENDING
    if phase is WorkspacePhase.RELEASED or workspace.metadata.deleting:
        return WorkspaceVerdict(blocked=f"{quoted} is released: no new Run may use it")
    if phase is WorkspacePhase.LOST:
        return WorkspaceVerdict(blocked=f'{quoted} is lost: its pod "{status.bound_pod}" is gone')
    if phase is WorkspacePhase.PENDING or not status.bound_pod_uid:
        return WorkspaceVerdict(blocked=f"{quoted} is not bound to a pod yet")
    return WorkspaceVerdict(pod=status.bound_pod, uid=status.bound_pod_uid)
