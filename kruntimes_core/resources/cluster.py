"""A snapshot of the objects of a cluster that decisions may read."""

from __future__ import annotations

from attrs import frozen

from kruntimes_core.resources.pod import Pod
from kruntimes_core.resources.run import Run
from kruntimes_core.resources.runtime import Runtime
from kruntimes_core.resources.workspace import PersistentWorkspace


@frozen
class ClusterSnapshot:
    """Every object a batch decision may look at; order carries no meaning."""

    runtimes: tuple[Runtime, ...] = ()
    pods: tuple[Pod, ...] = ()
    workspaces: tuple[PersistentWorkspace, ...] = ()
    runs: tuple[Run, ...] = ()
