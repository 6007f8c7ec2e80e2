"""Field names on the wire: Kubernetes JSON spells fields in camelCase.

Validators name fields in error paths with these names, and the adapters'
converters use the same function, so a path in an error is the path a user
sees in ``kubectl get -o yaml``. Initialisms (``boundPodUID``) are declared
per field with ``wire("boundPodUID")``.
"""

from __future__ import annotations

from typing import Any

import attrs

WIRE_NAME = "kruntimes_core.wire_name"
ALWAYS_WRITTEN = "kruntimes_core.always_written"


def wire(name: str) -> dict[str, str]:
    """Field metadata declaring a wire name that camelCase would not produce."""
    return {WIRE_NAME: name}


def always_written() -> dict[str, bool]:
    """Field metadata: write the field even when it holds its default (e.g. a phase)."""
    return {ALWAYS_WRITTEN: True}


def camel_case(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def wire_name(attribute: attrs.Attribute[Any]) -> str:
    declared = attribute.metadata.get(WIRE_NAME)
    return declared if isinstance(declared, str) else camel_case(attribute.name)
