"""Opaque JSON carried through unchanged (pod templates, volume sources)."""

from __future__ import annotations

from typing import TypeAlias

JSONValue: TypeAlias = bool | int | float | str | list["JSONValue"] | dict[str, "JSONValue"] | None

JSONObject: TypeAlias = dict[str, object]
"""A JSON object held as a field; not recursive, so type-hint resolution in
any module (attrs, cattrs) never has to chase a forward reference."""
