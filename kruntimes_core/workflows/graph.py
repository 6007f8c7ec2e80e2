"""The job dependency graph (spec workflows.md sections 2 and 4).

Built once per decision in O(jobs + edges): adjacency in both directions,
a cycle check that names the first cycle met by a depth-first search in
sorted order (so the message is the same in every process), and a
topological order used by every later pass (Skipped propagation, starting
ready jobs) instead of a fixpoint loop.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from kruntimes_core.core.errors import PathPart, ValidationError

_WHITE, _GREY, _BLACK = 0, 1, 2


class JobGraph:
    """Immutable after ``build``; holds sorted tuples only."""

    __slots__ = ("_ancestors", "_dependents", "_needs", "order")

    def __init__(
        self,
        needs: dict[str, tuple[str, ...]],
        dependents: dict[str, tuple[str, ...]],
        order: tuple[str, ...],
    ) -> None:
        self._needs = needs
        self._dependents = dependents
        self.order = order
        """Every job, each after all of its needs; ties broken by name."""
        self._ancestors: dict[str, frozenset[str]] = {}

    @classmethod
    def build(
        cls, needs: Mapping[str, Iterable[str]], *, path: tuple[PathPart, ...] = ()
    ) -> JobGraph:
        """Raises ValidationError for an unknown need or a cycle (named in order)."""
        sorted_needs = {job: tuple(sorted(set(needs[job]))) for job in sorted(needs)}
        dependents: dict[str, list[str]] = {job: [] for job in sorted_needs}
        for job, wanted in sorted_needs.items():
            for need in wanted:
                if need not in dependents:
                    raise ValidationError(f"needs unknown job {need!r}", (*path, job, "needs"))
                dependents[need].append(job)
        order = _topological_order(sorted_needs, path)
        return cls(sorted_needs, {j: tuple(d) for j, d in dependents.items()}, order)

    def needs(self, job: str) -> tuple[str, ...]:
        return self._needs[job]

    def dependents(self, job: str) -> tuple[str, ...]:
        return self._dependents[job]

    def depends_on(self, job: str, other: str) -> bool:
        """Whether ``other`` is a transitive dependency of ``job``."""
        return other in self.ancestors(job)

    def ancestors(self, job: str) -> frozenset[str]:
        found = self._ancestors.get(job)
        if found is None:
            seen: set[str] = set()
            stack = list(self._needs[job])
            while stack:
                current = stack.pop()
                if current not in seen:
                    seen.add(current)
                    stack.extend(self._needs[current])
            found = self._ancestors[job] = frozenset(seen)
        return found


def _topological_order(
    needs: dict[str, tuple[str, ...]], path: tuple[PathPart, ...]
) -> tuple[str, ...]:
    """Depth-first post-order over needs, roots and needs in sorted order."""
    color = dict.fromkeys(needs, _WHITE)
    order: list[str] = []
    for root in needs:
        if color[root] != _WHITE:
            continue
        color[root] = _GREY
        stack: list[tuple[str, int]] = [(root, 0)]
        while stack:
            job, index = stack[-1]
            wanted = needs[job]
            if index == len(wanted):
                stack.pop()
                color[job] = _BLACK
                order.append(job)
                continue
            stack[-1] = (job, index + 1)
            nxt = wanted[index]
            if color[nxt] == _GREY:
                trail = [j for j, _ in stack]
                cycle = [*trail[trail.index(nxt) :], nxt]
                # Edges point from a job to what it needs; print them the way users
                # read "a needs b": a -> b.
                raise ValidationError(f"job dependency cycle: {' -> '.join(cycle)}", path)
            if color[nxt] == _WHITE:
                color[nxt] = _GREY
                stack.append((nxt, 0))
    return tuple(order)
