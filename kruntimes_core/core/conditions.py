"""Status conditions with Kubernetes ``meta.SetStatusCondition`` semantics.

``lastTransitionTime`` moves only when a condition's status flips; reason,
message and observedGeneration follow the latest decision. A condition that
is new is appended, so foreign conditions keep their place and order.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum
from functools import lru_cache

from attrs import frozen

from kruntimes_core.core.timeutil import to_k8s_time


class ConditionStatus(StrEnum):
    TRUE = "True"
    FALSE = "False"
    UNKNOWN = "Unknown"


@frozen
class Condition:
    type: str
    status: ConditionStatus
    reason: str
    last_transition_time: datetime
    message: str = ""
    observed_generation: int = 0


@lru_cache(maxsize=4096)
def _shared(
    type_: str,
    status: ConditionStatus,
    reason: str,
    last_transition_time: datetime,
    message: str,
    observed_generation: int,
) -> Condition:
    # A batch writes the same few conditions into thousands of statuses; one
    # shared frozen value each keeps the garbage collector's work linear.
    return Condition(type_, status, reason, last_transition_time, message, observed_generation)


def find_condition(conditions: Sequence[Condition], type_: str) -> Condition | None:
    return next((c for c in conditions if c.type == type_), None)


def is_condition_true(conditions: Sequence[Condition], type_: str) -> bool:
    found = find_condition(conditions, type_)
    return found is not None and found.status is ConditionStatus.TRUE


def set_condition(
    conditions: tuple[Condition, ...],
    type_: str,
    status: ConditionStatus,
    reason: str,
    message: str,
    *,
    now: datetime,
    observed_generation: int = 0,
) -> tuple[Condition, ...]:
    """Return ``conditions`` with ``type_`` set; the same tuple when nothing changed.

    A new or flipped condition gets ``now`` (truncated to whole seconds, as
    the API server stores it) as its lastTransitionTime.
    """
    reason = str(reason)  # plain text, so a status read back from JSON compares equal
    for index, current in enumerate(conditions):
        if current.type != type_:
            continue
        if (
            current.status is status
            and current.reason == reason
            and current.message == message
            and current.observed_generation == observed_generation
        ):
            return conditions
        moved = current.last_transition_time if current.status is status else to_k8s_time(now)
        updated = _shared(type_, status, reason, moved, message, observed_generation)
        return (*conditions[:index], updated, *conditions[index + 1 :])
    created = _shared(type_, status, reason, to_k8s_time(now), message, observed_generation)
    return (*conditions, created)
