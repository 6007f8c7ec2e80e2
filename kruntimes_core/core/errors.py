"""The one exception hierarchy of kruntimes_core (spec README, rule 4).

Errors are split by who is at fault. Today every error is the caller's:
the input broke a rule of the spec. A state the world can be in never
raises; decisions turn it into a status, a condition or a message.
"""

from __future__ import annotations

from collections.abc import Sequence

PathPart = str | int


def format_path(path: Sequence[PathPart]) -> str:
    """Render a field path the way kubectl prints one: ``spec.items[2].name``."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else part
    return text


class KruntimesError(Exception):
    """Base of every error this library raises on purpose."""


class InvalidInputError(KruntimesError):
    """The caller handed us something that breaks a rule of the spec.

    ``path`` names the field (wire names, outermost first), ``rule`` says which
    rule failed, and ``location`` optionally names the source (``file`` or
    ``file:line:column``).
    """

    def __init__(self, rule: str, path: Sequence[PathPart] = (), *, location: str = "") -> None:
        self.rule = rule
        self.path: tuple[PathPart, ...] = tuple(path)
        self.location = location
        super().__init__(self.describe())

    def describe(self) -> str:
        parts = [p for p in (self.location, format_path(self.path)) if p]
        return ": ".join([*parts, self.rule])

    def within(self, *outer: PathPart, location: str = "") -> InvalidInputError:
        """The same error seen from an enclosing object (same class, longer path)."""
        return type(self)(self.rule, (*outer, *self.path), location=location or self.location)

    def __str__(self) -> str:
        return self.describe()


class ValidationError(InvalidInputError):
    """A value is present but breaks a field rule (type, range, syntax, enum)."""


class ParseError(InvalidInputError):
    """A document could not be read at all (malformed YAML or JSON)."""
