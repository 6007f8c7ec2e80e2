"""The WorkflowRun's snapshot: a ControllerRevision holding the accepted spec (spec 5).

The reconciler plans from the snapshot, never from a mutable template; a
snapshot is used only by the WorkflowRun that owns it.
"""

from __future__ import annotations

from typing import ClassVar

from attrs import frozen

from kruntimes_core.core.meta import ObjectMeta
from kruntimes_core.workflows.naming import (
    WORKFLOWRUN_UID_LABEL,
    controller_reference,
    snapshot_name,
)
from kruntimes_core.workflows.spec import WorkflowRunSpec
from kruntimes_core.workflows.status import WorkflowRun


@frozen
class RevisionData:
    spec: WorkflowRunSpec


@frozen
class ControllerRevision:
    API_VERSION: ClassVar[str] = "apps/v1"
    KIND: ClassVar[str] = "ControllerRevision"

    metadata: ObjectMeta
    data: RevisionData
    revision: int = 1


def new_snapshot(run: WorkflowRun) -> ControllerRevision:
    meta = run.metadata
    return ControllerRevision(
        metadata=ObjectMeta(
            name=snapshot_name(meta.name, meta.uid),
            namespace=meta.namespace,
            labels={WORKFLOWRUN_UID_LABEL: meta.uid},
            owner_references=(
                controller_reference(run.API_VERSION, run.KIND, meta.name, meta.uid),
            ),
        ),
        data=RevisionData(spec=run.spec),
    )


def owned_by(meta: ObjectMeta, uid: str) -> bool:
    """Whether ``uid`` is the controller owner of the object with ``meta``."""
    owner = meta.controller_owner()
    return owner is not None and owner.uid == uid
