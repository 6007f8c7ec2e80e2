"""What the workspace world remembers: the facts invariants judge.

While applying actions the world records (``History``) every binding, phase
and ``lastUsedTime`` a workspace ever had, every directory deletion with who
did it and which local Runs were active then, every removal of the cleanup
finalizer with whether bytes could remain, and every workspace that
disappeared. The records judge nothing; the invariants in
``workspace_invariants`` do. ``expected_binding`` writes spec 2.2 out
independently of the decision code, for the ``Binding`` record.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from attrs import define, field, frozen

from kruntimes_core.core.actions import Action
from kruntimes_core.core.hashing import fnv1a_32
from kruntimes_core.resources.workspace import CleanupPolicy, PersistentWorkspace, WorkspacePhase
from kruntimes_core.testing.workspace_world_pods import Actor, PodId


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


def expected_binding(workspace: PersistentWorkspace, ready: Sequence[PodId]) -> PodId | None:
    """Spec 2.2, written out independently of ``binding.select_pod``."""
    if not ready:
        return None
    meta = workspace.metadata
    key = meta.uid or f"{meta.namespace}/{meta.name}"
    ordered = sorted(ready, key=lambda pod: pod.name)
    return ordered[fnv1a_32(key.encode("utf-8")) % len(ordered)]
