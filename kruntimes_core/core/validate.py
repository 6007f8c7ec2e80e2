"""attrs validators that raise ValidationError with the field's wire name.

Input types validate in their constructors (spec README, rule 4), so decisions
only ever see valid values; the converter prefixes the enclosing path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from kruntimes_core.core.errors import ValidationError
from kruntimes_core.core.meta import ObjectMeta
from kruntimes_core.core.names import dns1123_subdomain_problem
from kruntimes_core.core.wire import wire_name

Validator = Callable[[Any, "attrs.Attribute[Any]", Any], None]


def syntax(problem_of: Callable[[str], str | None]) -> Validator:
    """Validate a string with one of the ``*_problem`` checks of core.names."""

    def check(_instance: object, attribute: attrs.Attribute[Any], value: str) -> None:
        problem = problem_of(value)
        if problem is not None:
            raise ValidationError(f"{problem} (got {value!r})", (wire_name(attribute),))

    return check


def non_empty(_instance: object, attribute: attrs.Attribute[Any], value: str) -> None:
    if not value:
        raise ValidationError("is required", (wire_name(attribute),))


def at_least(minimum: int) -> Validator:
    def check(_instance: object, attribute: attrs.Attribute[Any], value: int | None) -> None:
        if value is not None and value < minimum:
            raise ValidationError(f"must be >= {minimum} (got {value})", (wire_name(attribute),))

    return check


def one_of(*allowed: str) -> Validator:
    def check(_instance: object, attribute: attrs.Attribute[Any], value: str) -> None:
        if value not in allowed:
            raise ValidationError(
                f"must be one of {', '.join(allowed)} (got {value!r})",
                (wire_name(attribute),),
            )

    return check


def subdomain_name(_instance: object, _attribute: object, meta: ObjectMeta) -> None:
    """``metadata.name`` must be a DNS-1123 subdomain (Runs, workspaces, WorkflowRuns)."""
    problem = dns1123_subdomain_problem(meta.name)
    if problem is not None:
        raise ValidationError(f"{problem} (got {meta.name!r})", ("metadata", "name"))
