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
    """Ready pods of the Runtime sorted by ``metadata.name`` (uid breaks ties)."""
    by_name: Mapping[str, Pod]
    """Every pod of the namespace by name, labelled or not: a binding is checked
    against the pod itself, whatever happened to its labels or to the
    workspace's ``spec.runtime`` since."""

    @classmethod
    def index(
        cls,
        runtime: Runtime | None,
        pods: Iterable[Pod],
        namespace_pods: Mapping[str, Pod] | None = None,
    ) -> RuntimePods:
        """``pods`` are the Runtime's (labelled) pods; ``namespace_pods`` all pods of
        the namespace by name (``by_namespace``), defaulting to ``pods``."""
        ordered = sorted(pods, key=lambda pod: (pod.metadata.name, pod.metadata.uid))
        return cls(
            runtime=runtime,
            ready=tuple(pod for pod in ordered if pod.ready),
            by_name=namespace_pods if namespace_pods is not None else by_name(ordered),
        )

    def live(self, name: str, uid: str) -> Pod | None:
        """The pod with this name AND uid, if it still exists."""
        pod = self.by_name.get(name)
        return pod if pod is not None and uid and pod.metadata.uid == uid else None


def by_name(pods: Iterable[Pod]) -> dict[str, Pod]:
    """Pods by name; with duplicate names (odd snapshots) the smallest uid wins."""
    found: dict[str, Pod] = {}
    for pod in sorted(pods, key=lambda p: (p.metadata.name, p.metadata.uid)):
        found.setdefault(pod.metadata.name, pod)
    return found
