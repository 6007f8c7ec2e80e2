"""Kubernetes JSON <-> our frozen objects, through one private cattrs converter.

Field names are camelCase on the wire (core.wire), unknown fields are
tolerated on input (Kubernetes adds many we do not model), and scalars are
strict: ``"5"`` is not an integer and ``5`` is not a string, as the API
server would say. Every failure comes out as one ValidationError naming the
field path.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime
from enum import StrEnum
from functools import cache
from typing import Any, TypeVar

import attrs
import cattrs
from cattrs.errors import (
    AttributeValidationNote,
    ClassValidationError,
    IterableValidationNote,
)
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from kruntimes_core.core.errors import InvalidInputError, PathPart, ValidationError
from kruntimes_core.core.timeutil import format_rfc3339, parse_rfc3339, utc
from kruntimes_core.core.wire import ALWAYS_WRITTEN, wire_name
from kruntimes_core.resources.jsonvalue import JSONObject, JSONValue

T = TypeVar("T")

_JSON_NAMES = {bool: "a boolean", int: "an integer", float: "a number", str: "a string"}


def _strict(kind: type[T]) -> Callable[[object, type[T]], T]:
    def structure(value: object, _type: type[T]) -> T:
        # bool is an int in Python but never in JSON.
        if isinstance(value, kind) and not (kind is not bool and isinstance(value, bool)):
            return value
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            return value  # type: ignore[return-value]  # JSON numbers: an int is a float
        raise ValidationError(f"must be {_JSON_NAMES[kind]} (got {value!r})")

    return structure


def _structure_time(value: object, _type: type[datetime]) -> datetime:
    if isinstance(value, datetime) and value.tzinfo is not None:
        return utc(value)  # PyYAML reads unquoted timestamps itself
    if not isinstance(value, str):
        raise ValidationError(f"must be an RFC 3339 timestamp string (got {value!r})")
    return parse_rfc3339(value)


def _structure_enum(value: object, enum: type[StrEnum]) -> StrEnum:
    allowed = [member.value for member in enum]
    if isinstance(value, str) and value in allowed:
        return enum(value)
    raise ValidationError(f"must be one of {', '.join(allowed)} (got {value!r})")


def _structure_json_object(value: object, _type: object) -> JSONObject:
    if not isinstance(value, dict):
        raise ValidationError(f"must be an object (got {value!r})")
    return value


def _renames(cl: type[Any]) -> dict[str, Any]:
    # Typed as Any: cattrs' keyword overrides share **kwargs with its bool flags.
    return {a.name: override(rename=wire_name(a)) for a in attrs.fields(cl)}


def make_converter() -> cattrs.Converter:
    """A fresh converter for Kubernetes JSON; never the global one."""
    conv = cattrs.Converter(detailed_validation=True, forbid_extra_keys=False)
    for scalar in (bool, int, float, str):
        conv.register_structure_hook(scalar, _strict(scalar))
    # More specific than str for singledispatch, so enums never take the str hook.
    conv.register_structure_hook(StrEnum, _structure_enum)
    conv.register_unstructure_hook(StrEnum, lambda member: str(member.value))
    conv.register_structure_hook(datetime, _structure_time)
    conv.register_unstructure_hook(datetime, format_rfc3339)
    conv.register_structure_hook_func(lambda t: t == JSONObject, _structure_json_object)
    conv.register_unstructure_hook_func(lambda t: t == JSONObject, lambda v: v)

    def structure_factory(cl: type[Any]) -> Callable[[Any, type[Any]], Any]:
        structure_fields = make_dict_structure_fn(cl, conv, **_renames(cl))

        def structure(value: Any, type_: type[Any]) -> Any:
            if not isinstance(value, dict):
                raise ValidationError(f"must be an object (got {value!r})")
            return structure_fields(value, type_)

        return structure

    def unstructure_factory(cl: type[Any]) -> Callable[[Any], dict[str, Any]]:
        overrides: dict[str, Any] = {  # Any: see _renames
            a.name: override(
                rename=wire_name(a), omit_if_default=not a.metadata.get(ALWAYS_WRITTEN, False)
            )
            for a in attrs.fields(cl)
        }
        return make_dict_unstructure_fn(cl, conv, _cattrs_omit_if_default=True, **overrides)

    conv.register_structure_hook_factory(attrs.has, structure_factory)
    conv.register_unstructure_hook_factory(attrs.has, unstructure_factory)
    return conv


@cache
def default_converter() -> cattrs.Converter:
    return make_converter()


def from_json(cls: type[T], value: JSONValue, *, location: str = "") -> T:
    """Structure ``value`` as ``cls``.

    Raises ValidationError naming the first failing field's path.
    """
    try:
        return default_converter().structure(value, cls)
    except Exception as exc:  # translated at the edge, in one place
        raise _translate(exc, location) from None


def to_json(value: object) -> JSONValue:
    """Unstructure any of our objects to Kubernetes JSON (defaults omitted).

    Top-level kinds (Pod, Runtime, ...) get their ``apiVersion`` and ``kind``.
    """
    result: JSONValue = default_converter().unstructure(value)
    api_version = getattr(type(value), "API_VERSION", None)
    kind = getattr(type(value), "KIND", None)
    if isinstance(result, dict) and isinstance(api_version, str) and isinstance(kind, str):
        return {"apiVersion": api_version, "kind": kind, **result}
    return result


def _translate(exc: BaseException, location: str) -> InvalidInputError:
    path, leaf = next(_leaves(exc, ()))
    if isinstance(leaf, InvalidInputError):
        return leaf.within(*path, location=location)
    if isinstance(leaf, KeyError):
        return ValidationError("is required", path, location=location)
    return ValidationError(str(leaf) or type(leaf).__name__, path, location=location)


def _leaves(
    exc: BaseException, path: tuple[PathPart, ...]
) -> Iterator[tuple[tuple[PathPart, ...], BaseException]]:
    if not isinstance(exc, BaseExceptionGroup):
        yield path, exc
        return
    for sub in exc.exceptions:
        yield from _leaves(sub, path + _step(sub, exc))


def _step(sub: BaseException, group: BaseExceptionGroup[BaseException]) -> tuple[PathPart, ...]:
    for note in getattr(sub, "__notes__", ()):
        if isinstance(note, AttributeValidationNote) and isinstance(group, ClassValidationError):
            field = attrs.fields_dict(group.cl).get(note.name)
            return (wire_name(field) if field is not None else note.name,)
        if isinstance(note, IterableValidationNote):
            index = note.index
            return (index if isinstance(index, int | str) else repr(index),)
    return ()
