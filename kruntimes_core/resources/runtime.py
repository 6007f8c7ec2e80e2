"""Runtimes (spec workspaces.md section 1, "Runtime")."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from attrs import field, frozen

from kruntimes_core.core.errors import ValidationError
from kruntimes_core.core.meta import ObjectMeta
from kruntimes_core.core.validate import at_least
from kruntimes_core.resources.jsonvalue import JSONObject

API_VERSION = "kruntimes.io/v1alpha1"
DEFAULT_RUN_SLOTS = 2


def _check_resources(_instance: object, _attribute: object, value: Mapping[str, int]) -> None:
    for name in sorted(value):
        if value[name] < 0:
            raise ValidationError(f"must be >= 0 (got {value[name]})", ("resources", name))


@frozen
class RuntimeCapacity:
    resources: Mapping[str, int] = field(factory=dict, validator=_check_resources)


@frozen
class RuntimeSpec:
    replicas: int = field(default=1, validator=at_least(0))
    capacity: RuntimeCapacity = RuntimeCapacity()
    template: JSONObject = field(factory=dict)
    workspace: JSONObject = field(factory=dict)
    """An inlined ``corev1.VolumeSource``; empty means ``emptyDir: {}``."""


@frozen
class Runtime:
    API_VERSION: ClassVar[str] = API_VERSION
    KIND: ClassVar[str] = "Runtime"

    metadata: ObjectMeta
    spec: RuntimeSpec = RuntimeSpec()

    @property
    def run_slots(self) -> int:
        """Run slots per pod when a pod advertises none itself."""
        return self.spec.capacity.resources.get("runs", DEFAULT_RUN_SLOTS)
