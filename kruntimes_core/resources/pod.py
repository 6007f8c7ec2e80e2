"""Runtime Pods (spec workspaces.md section 1, "Runtime Pod")."""

from __future__ import annotations

from typing import ClassVar

from attrs import frozen

from kruntimes_core.core.conditions import ConditionStatus
from kruntimes_core.core.meta import ObjectMeta

RUNTIME_LABEL = "runtime"
"""Label naming the Runtime a Runtime Pod belongs to."""

RUNTIMED_READY = "kruntimes.io/RuntimedReady"
"""Pod condition kept True by runtimed's heartbeat."""

POD_RUNNING = "Running"


@frozen
class PodCondition:
    type: str
    status: ConditionStatus


@frozen
class PodStatus:
    phase: str = ""
    conditions: tuple[PodCondition, ...] = ()

    def condition_true(self, type_: str) -> bool:
        return any(c.type == type_ and c.status is ConditionStatus.TRUE for c in self.conditions)


@frozen
class Pod:
    API_VERSION: ClassVar[str] = "v1"
    KIND: ClassVar[str] = "Pod"

    metadata: ObjectMeta
    status: PodStatus = PodStatus()

    @property
    def runtime(self) -> str:
        """The Runtime this pod serves ("" for a pod that is no Runtime Pod)."""
        return self.metadata.labels.get(RUNTIME_LABEL, "")

    @property
    def ready(self) -> bool:
        """Not being deleted, Running, Ready=True and RuntimedReady=True."""
        return (
            not self.metadata.deleting
            and self.status.phase == POD_RUNNING
            and self.status.condition_true("Ready")
            and self.status.condition_true(RUNTIMED_READY)
        )
