"""Run slots per Runtime Pod (spec workspaces.md sections 1 and 4).

A pod advertises its slots in ``kruntimes.io/capacity.runs``; without it the
Runtime's ``spec.capacity.resources.runs`` applies, then 2. An annotation
that is not a non-negative integer is ignored as if absent (a state of the
world, not an error).
"""

from __future__ import annotations

from kruntimes_core.resources.pod import Pod
from kruntimes_core.resources.runtime import DEFAULT_RUN_SLOTS, Runtime

CAPACITY_ANNOTATION = "kruntimes.io/capacity.runs"


def pod_slots(pod: Pod, runtime: Runtime | None) -> int:
    advertised = pod.metadata.annotations.get(CAPACITY_ANNOTATION, "")
    if advertised.isdigit():
        return int(advertised)
    return runtime.run_slots if runtime is not None else DEFAULT_RUN_SLOTS
