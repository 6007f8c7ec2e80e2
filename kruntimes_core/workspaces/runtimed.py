"""runtimed's half of the cleanup protocol (spec workspaces.md 3.4 and 3.6).

runtimed acts only for workspaces bound to its own pod, by name AND uid, and
only once the workspace is being deleted. It first confirms that none of its
local Runs still uses the workspace, then deletes exactly
``/workspace/persistent/<name>`` (derived from the name, never read from
status) and only then removes the finalizer. It never writes status.
"""

from __future__ import annotations

from collections.abc import Sequence

from kruntimes_core.core.actions import DeleteWorkspaceDirectory, ObjectRef, RemoveFinalizer
from kruntimes_core.core.decision import Decision
from kruntimes_core.resources.pod import Pod
from kruntimes_core.resources.run import Run
from kruntimes_core.resources.workspace import FINALIZER, PersistentWorkspace, workspace_path

# The answers that carry nothing but a reason are shared values.
_NOT_OURS: Decision[None] = Decision(message="workspace is not bound to this pod")
_NOT_DELETING: Decision[None] = Decision(message="workspace is not being deleted")
_DONE: Decision[None] = Decision(message="cleanup finalizer already removed")


def decide_local_cleanup(
    pod: Pod, workspace: PersistentWorkspace, local_runs: Sequence[Run]
) -> Decision[None]:
    """What runtimed on ``pod`` does about ``workspace``.

    ``local_runs`` are the Runs this runtimed executes (any workspace); the
    decision looks only at those naming the workspace in its namespace.
    """
    status = workspace.status
    meta = workspace.metadata
    own = pod.metadata
    if not own.uid or status.bound_pod != own.name or status.bound_pod_uid != own.uid:
        return _NOT_OURS
    if not meta.deleting:
        return _NOT_DELETING
    if not meta.has_finalizer(FINALIZER):
        return _DONE
    blocking = sorted(
        run.metadata.name
        for run in local_runs
        if run.active
        and run.workspace_name == meta.name
        and run.metadata.namespace == meta.namespace
    )
    if blocking:
        return Decision(message=f"waiting for local Runs to finish: {', '.join(blocking)}")
    return Decision(
        actions=(
            DeleteWorkspaceDirectory(
                ObjectRef.to(pod.API_VERSION, pod.KIND, own), workspace_path(meta.name)
            ),
            RemoveFinalizer(ObjectRef.to(workspace.API_VERSION, workspace.KIND, meta), FINALIZER),
        )
    )
