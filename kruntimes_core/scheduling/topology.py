"""Counting Runs per topology domain, once per batch (spec workspaces.md 4).

Like kube-scheduler's InterPodAffinity PreFilter: for each distinct term
(namespace, selector, topology key) the placed Runs that match it are
counted per domain the first time the term is asked about, and the counts
are then updated as the batch places Runs. A Run's affinity checks are
dictionary lookups per candidate pod instead of a scan over placed Runs.
Existing Runs' required anti-affinity terms are grouped the same way, so
the symmetric rule costs one selector match per distinct term.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping

from kruntimes_core.core.selectors import LabelSelector, matches, selector_key
from kruntimes_core.resources.affinity import RUNTIME_POD_TOPOLOGY, RunAffinityTerm
from kruntimes_core.resources.pod import Pod
from kruntimes_core.resources.run import Run

TermKey = tuple[str, object, str]  # namespace, selector identity, topology key


def domain(pod: Pod, topology_key: str) -> str | None:
    """The pod's domain under ``topology_key``; None when the pod has no such label."""
    if topology_key == RUNTIME_POD_TOPOLOGY:
        return pod.metadata.name
    return pod.metadata.labels.get(topology_key)


def term_key(namespace: str, term: RunAffinityTerm) -> TermKey:
    selector = term.label_selector
    return (namespace, None if selector is None else selector_key(selector), term.topology_key)


class TermCounts:
    """Placed Runs matching one term, per domain; ``total`` over all domains."""

    __slots__ = ("by_domain", "selector", "topology_key", "total")

    def __init__(self, selector: LabelSelector | None, topology_key: str) -> None:
        self.selector = selector
        self.topology_key = topology_key
        self.by_domain: dict[str, int] = defaultdict(int)
        self.total = 0

    def add(self, run: Run, pod: Pod) -> None:
        if not matches(self.selector, run.metadata.labels):
            return
        self.total += 1
        where = domain(pod, self.topology_key)
        if where is not None:
            self.by_domain[where] += 1

    def at(self, pod: Pod) -> int:
        where = domain(pod, self.topology_key)
        return 0 if where is None else self.by_domain.get(where, 0)


class CarrierCounts:
    """Placed Runs *carrying* one required anti-affinity term, per domain.

    An incoming Run that ``selector`` matches may not join those domains.
    """

    __slots__ = ("by_domain", "selector", "topology_key")

    def __init__(self, selector: LabelSelector | None, topology_key: str) -> None:
        self.selector = selector
        self.topology_key = topology_key
        self.by_domain: dict[str, int] = defaultdict(int)

    def carry(self, pod: Pod) -> None:
        where = domain(pod, self.topology_key)
        if where is not None:
            self.by_domain[where] += 1

    def excludes(self, pod: Pod) -> bool:
        where = domain(pod, self.topology_key)
        return where is not None and self.by_domain.get(where, 0) > 0


class TopologyIndex:
    """Counts for the terms a batch asks about, kept current as Runs are placed."""

    def __init__(self, placed: Iterable[tuple[Run, Pod]]) -> None:
        self._placed: dict[str, list[tuple[Run, Pod]]] = defaultdict(list)
        self._terms: dict[TermKey, TermCounts] = {}
        self._anti: dict[str, dict[TermKey, CarrierCounts]] = defaultdict(dict)
        for run, pod in placed:
            self._record(run, pod)

    def counts(self, namespace: str, term: RunAffinityTerm) -> TermCounts:
        key = term_key(namespace, term)
        found = self._terms.get(key)
        if found is None:
            found = self._terms[key] = TermCounts(term.label_selector, term.topology_key)
            for run, pod in self._placed[namespace]:
                found.add(run, pod)
        return found

    def existing_anti_affinity(self, namespace: str) -> Mapping[TermKey, CarrierCounts]:
        """Required anti-affinity terms of placed Runs, counting the Runs that carry them."""
        return self._anti[namespace]

    def place(self, run: Run, pod: Pod) -> None:
        """Account for a Run the batch just placed."""
        namespace = run.metadata.namespace
        for key, counts in self._terms.items():
            if key[0] == namespace:
                counts.add(run, pod)
        self._record(run, pod)

    def _record(self, run: Run, pod: Pod) -> None:
        namespace = run.metadata.namespace
        self._placed[namespace].append((run, pod))
        for term in run.spec.affinity.run_anti_affinity.required:
            key = term_key(namespace, term)
            group = self._anti[namespace].get(key)
            if group is None:
                group = CarrierCounts(term.label_selector, term.topology_key)
                self._anti[namespace][key] = group
            group.carry(pod)
