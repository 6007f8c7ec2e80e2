"""``set_condition``: Kubernetes ``meta.SetStatusCondition`` semantics."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from enum import StrEnum

import pytest

from kruntimes_core.core.conditions import (
    Condition,
    ConditionStatus,
    find_condition,
    is_condition_true,
    set_condition,
)
from kruntimes_core.core.errors import ValidationError

TRUE = ConditionStatus.TRUE
FALSE = ConditionStatus.FALSE
UNKNOWN = ConditionStatus.UNKNOWN

T0 = datetime(2026, 7, 6, 12, 0, 0, tzinfo=UTC)
LATER = T0 + timedelta(minutes=5, microseconds=250_000)
LATER_STORED = T0 + timedelta(minutes=5)

READY = Condition("Ready", TRUE, "Up", T0, "all good", 3)
FOREIGN_A = Condition("Alpha", FALSE, "Nope", T0 - timedelta(days=1), "", 1)
FOREIGN_Z = Condition("Zulu", UNKNOWN, "Hmm", T0 - timedelta(days=2), "", 2)
EXISTING = (FOREIGN_Z, READY, FOREIGN_A)


def test_unchanged_returns_the_identical_tuple() -> None:
    result = set_condition(
        EXISTING, "Ready", TRUE, "Up", "all good", now=LATER, observed_generation=3
    )

    assert result is EXISTING


@pytest.mark.parametrize(
    ("status", "reason", "message", "generation", "moves"),
    [
        pytest.param(FALSE, "Up", "all good", 3, True, id="flip-to-false"),
        pytest.param(UNKNOWN, "Up", "all good", 3, True, id="flip-to-unknown"),
        pytest.param(FALSE, "Down", "broken", 4, True, id="flip-and-everything-else"),
        pytest.param(TRUE, "StillUp", "all good", 3, False, id="reason-only"),
        pytest.param(TRUE, "Up", "all very good", 3, False, id="message-only"),
        pytest.param(TRUE, "Up", "all good", 4, False, id="generation-only"),
        pytest.param(TRUE, "Other", "other", 9, False, id="all-but-status"),
    ],
)
def test_transition_time_moves_only_when_status_flips(
    status: ConditionStatus, reason: str, message: str, generation: int, moves: bool
) -> None:
    result = set_condition(
        EXISTING, "Ready", status, reason, message, now=LATER, observed_generation=generation
    )

    assert result is not EXISTING
    assert [c.type for c in result] == ["Zulu", "Ready", "Alpha"]  # stays in place
    assert result[0] is FOREIGN_Z
    assert result[2] is FOREIGN_A
    updated = result[1]
    assert updated == Condition(
        "Ready", status, reason, LATER_STORED if moves else T0, message, generation
    )
    assert EXISTING[1] is READY  # the input is not touched


def test_new_condition_is_appended_at_the_end() -> None:
    result = set_condition(EXISTING, "Bound", TRUE, "Bound", "bound", now=LATER)

    assert result[:3] == EXISTING
    assert all(a is b for a, b in zip(result[:3], EXISTING, strict=True))
    assert result[3] == Condition("Bound", TRUE, "Bound", LATER_STORED, "bound", 0)


def test_first_condition_on_an_empty_tuple() -> None:
    result = set_condition((), "Accepted", TRUE, "Accepted", "ok", now=T0, observed_generation=7)

    assert result == (Condition("Accepted", TRUE, "Accepted", T0, "ok", 7),)


def test_written_times_are_whole_seconds_in_utc() -> None:
    plus_two = timezone(timedelta(hours=2))
    now = datetime(2026, 7, 6, 14, 0, 1, 999_999, tzinfo=plus_two)

    (created,) = set_condition((), "X", TRUE, "R", "", now=now)

    assert created.last_transition_time == datetime(2026, 7, 6, 12, 0, 1, tzinfo=UTC)
    assert created.last_transition_time.utcoffset() == timedelta(0)
    assert created.last_transition_time.microsecond == 0


def test_naive_time_is_refused_when_a_time_is_written() -> None:
    with pytest.raises(ValidationError):
        set_condition((), "X", TRUE, "R", "", now=datetime(2026, 7, 6, 12, 0, 0))


class _Reason(StrEnum):
    BOUND = "Bound"


def test_reason_is_stored_as_plain_text() -> None:
    (created,) = set_condition((), "Bound", TRUE, _Reason.BOUND, "", now=T0)

    assert type(created.reason) is str
    assert created == Condition("Bound", TRUE, "Bound", T0, "", 0)
    again = set_condition((created,), "Bound", TRUE, _Reason.BOUND, "", now=LATER)
    assert again[0] is created


def test_repeated_identical_sets_are_a_fixpoint() -> None:
    conditions: tuple[Condition, ...] = ()
    for minute in range(5):
        now = T0 + timedelta(minutes=minute, seconds=0.5)
        conditions = set_condition(conditions, "A", TRUE, "R", "m", now=now)
        conditions = set_condition(conditions, "B", FALSE, "R", "m", now=now)
    assert conditions == (
        Condition("A", TRUE, "R", T0, "m", 0),
        Condition("B", FALSE, "R", T0, "m", 0),
    )


@pytest.mark.parametrize(
    ("type_", "found", "true"),
    [
        pytest.param("Ready", READY, True, id="true"),
        pytest.param("Alpha", FOREIGN_A, False, id="false"),
        pytest.param("Zulu", FOREIGN_Z, False, id="unknown"),
        pytest.param("Missing", None, False, id="missing"),
    ],
)
def test_find_and_is_true(type_: str, found: Condition | None, true: bool) -> None:
    assert find_condition(EXISTING, type_) is found
    assert is_condition_true(EXISTING, type_) is true
