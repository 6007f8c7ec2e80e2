"""The pods of one Runtime, indexed once per batch (spec workspaces.md 2.2).

Binding picks from the ready pods sorted by name; a batch of workspaces of
one Runtime shares one index, so the pods are sorted once, not per workspace.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from attrs import frozen

from kruntimes_core.resources.pod import Pod
from kruntimes_core.resources.runtime import Runtime


@frozen
class RuntimePods:
    runtime: Runtime | None
    ready: tuple[Pod, ...]
    """Ready pods sorted by ``metadata.name`` (uid breaks ties in odd snapshots)."""
    by_name: Mapping[str, Pod]

    @classmethod
    def index(cls, runtime: Runtime | None, pods: Iterable[Pod]) -> RuntimePods:
        ordered = sorted(pods, key=lambda pod: (pod.metadata.name, pod.metadata.uid))
        by_name: dict[str, Pod] = {}
        for pod in ordered:
            by_name.setdefault(pod.metadata.name, pod)
        return cls(
            runtime=runtime,
            ready=tuple(pod for pod in ordered if pod.ready),
            by_name=by_name,
        )

    def live(self, name: str, uid: str) -> Pod | None:
        """The pod with this name AND uid, if it still exists."""
        pod = self.by_name.get(name)
        return pod if pod is not None and uid and pod.metadata.uid == uid else None
