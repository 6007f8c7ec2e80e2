"""Object metadata, the part of every Kubernetes object decisions read."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from attrs import field, frozen


@frozen
class OwnerReference:
    api_version: str
    kind: str
    name: str
    uid: str
    controller: bool = False
    block_owner_deletion: bool = False


def _frozen_mapping(value: Mapping[str, str] | None) -> Mapping[str, str]:
    return dict(value or {})


@frozen
class ObjectMeta:
    """``metadata`` as decisions see it; absent fields take Kubernetes' zero values."""

    name: str
    namespace: str = "default"
    uid: str = ""
    labels: Mapping[str, str] = field(factory=dict, converter=_frozen_mapping)
    annotations: Mapping[str, str] = field(factory=dict, converter=_frozen_mapping)
    owner_references: tuple[OwnerReference, ...] = ()
    finalizers: tuple[str, ...] = ()
    deletion_timestamp: datetime | None = None
    creation_timestamp: datetime | None = None
    generation: int = 0
    resource_version: str = ""

    @property
    def deleting(self) -> bool:
        return self.deletion_timestamp is not None

    @property
    def key(self) -> tuple[str, str]:
        """``(namespace, name)``: the identity Kubernetes indexes objects by."""
        return (self.namespace, self.name)

    def has_finalizer(self, finalizer: str) -> bool:
        return finalizer in self.finalizers

    def controller_owner(self) -> OwnerReference | None:
        for ref in self.owner_references:
            if ref.controller:
                return ref
        return None
