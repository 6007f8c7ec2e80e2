"""Timestamps as Kubernetes writes them: RFC 3339, UTC, whole seconds.

Decisions take ``now`` as an argument; this module only converts. Kubernetes
stores ``metav1.Time`` with second precision, so every time a decision writes
is truncated first: a status read back from the API server then equals the
status we wrote, and "write only when changed" stays a fixpoint.
"""

from __future__ import annotations

from datetime import UTC, datetime

from kruntimes_core.core.errors import ValidationError


def utc(moment: datetime) -> datetime:
    """Return ``moment`` in UTC; a naive datetime is refused, never guessed."""
    if moment.tzinfo is None:
        raise ValidationError("timestamp must carry a time zone")
    return moment.astimezone(UTC)


def to_k8s_time(moment: datetime) -> datetime:
    """Truncate to whole seconds in UTC, as the API server would store it."""
    if moment.tzinfo is UTC and not moment.microsecond:
        return moment  # already there; the common case inside a batch
    return utc(moment).replace(microsecond=0)


def parse_rfc3339(text: str) -> datetime:
    """Parse an RFC 3339 timestamp such as ``2026-07-06T12:00:00Z``.

    Raises ValidationError when the text is not RFC 3339 with a zone.
    """
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise ValidationError(f"invalid RFC 3339 timestamp {text!r}") from None
    if parsed.tzinfo is None:
        raise ValidationError(f"timestamp {text!r} has no time zone")
    return parsed.astimezone(UTC)


def format_rfc3339(moment: datetime) -> str:
    """Format in UTC with a ``Z`` suffix; fractions only when present."""
    moment = utc(moment)
    if moment.microsecond:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
