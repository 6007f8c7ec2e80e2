"""The ``${{ ... }}`` expression language (spec workflows.md section 3).

Grammar (whitespace is the ASCII set of ``string.whitespace``)::

    expression := "${{" whitespace* reference whitespace* "}}"
    reference  := "inputs." key
                | "steps." label ".outputs." key
                | "jobs." label ".outputs." key
    key        := [A-Za-z_][A-Za-z0-9_-]*
    label      := a Kubernetes label value, 1..63 characters

Everything outside an expression is literal, including a lone ``$``, ``{{``
or ``}}``; there is no escape syntax. Step and job names may contain dots, so
the name is everything between the scope and the *last* ``.outputs.`` (keys
never contain dots, so the split is unambiguous).

Choices:
- Scanning is two ``str.find`` calls per expression, so parsing is linear in
  the text and no regular expression ever sees more than one name.
- An expression ends at the first ``}}``. A ``${{`` without one, or a body
  that is not exactly one reference, raises ExpressionSyntaxError.
- Rendering is one pass: inserted values are never scanned again. A value
  that is missing raises MissingValueError (never an empty string). A step or
  job with no outputs at all reads the same as one without that key (``no
  output "k" in step "s"``): to the user both mean the step wrote no ``k``.
- ``render(..., scopes=...)`` replaces only the listed scopes and leaves the
  others verbatim in canonical form, ``${{ <ref.text> }}``, for a later stage
  (the trigger renders ``inputs`` and the reconciler ``steps``/``jobs``).
  Caveat (there is no escape syntax): a later stage scans what an earlier
  one inserted. An input value holding ``${{ steps.s.outputs.k }}`` is
  expanded by the reconciler, and one holding a lone ``${{`` (or forming one
  with its neighbours, as ``$`` + ``""`` + ``{{``) makes that render fail.
- Errors carry no field path; callers add theirs with ``error.within(...)``.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Mapping
from typing import Any, ClassVar, TypeAlias

import attrs
from attrs import field, frozen

from kruntimes_core.core.errors import InvalidInputError, ValidationError
from kruntimes_core.core.names import label_value_problem

OPEN = "${{"
CLOSE = "}}"
OUTPUTS = ".outputs."
INPUTS = "inputs"
STEPS = "steps"
JOBS = "jobs"
ALL_SCOPES = frozenset({INPUTS, STEPS, JOBS})

_WHITESPACE = string.whitespace
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_SHOWN_MAX = 60  # long bodies are cut in messages so a stray "${{" cannot quote a whole script


class ExpressionSyntaxError(ValidationError):
    """A ``${{ ... }}`` expression does not parse."""


class MissingValueError(InvalidInputError):
    """A well-formed reference has no value in the rendering context."""


def _shown(text: str) -> str:
    """Quote ``text`` for a message: JSON escapes keep newlines on one line."""
    if len(text) > _SHOWN_MAX:
        text = text[: _SHOWN_MAX - 3] + "..."
    return json.dumps(text, ensure_ascii=False)


def _check_key(_instance: object, attribute: attrs.Attribute[Any], value: str) -> None:
    if not _KEY.fullmatch(value):
        what = "input name" if attribute.name == "name" else "output key"
        raise ExpressionSyntaxError(f"{what} {_shown(value)} must match {_KEY.pattern}")


def _check_label(_instance: object, attribute: attrs.Attribute[Any], value: str) -> None:
    problem = "must not be empty" if not value else label_value_problem(value)
    if problem is not None:
        raise ExpressionSyntaxError(f"{attribute.name} name {_shown(value)} {problem}")


@frozen
class InputRef:
    """``inputs.<name>``."""

    scope: ClassVar[str] = INPUTS
    name: str = field(validator=_check_key)

    @property
    def text(self) -> str:
        return f"{INPUTS}.{self.name}"

    def resolve(self, context: Context) -> str:
        """The input's value; raises MissingValueError when there is none."""
        value = context.inputs.get(self.name)
        if value is None:
            raise MissingValueError(f"no input {_shown(self.name)}")
        return value


@frozen
class StepOutputRef:
    """``steps.<step>.outputs.<key>``: an output of an earlier step of the same job."""

    scope: ClassVar[str] = STEPS
    step: str = field(validator=_check_label)
    key: str = field(validator=_check_key)

    @property
    def text(self) -> str:
        return f"{STEPS}.{self.step}{OUTPUTS}{self.key}"

    def resolve(self, context: Context) -> str:
        """The step output's value; raises MissingValueError when there is none."""
        value = context.steps.get(self.step, {}).get(self.key)
        if value is None:
            raise MissingValueError(f"no output {_shown(self.key)} in step {_shown(self.step)}")
        return value


@frozen
class JobOutputRef:
    """``jobs.<job>.outputs.<key>``: an output of a job this one depends on."""

    scope: ClassVar[str] = JOBS
    job: str = field(validator=_check_label)
    key: str = field(validator=_check_key)

    @property
    def text(self) -> str:
        return f"{JOBS}.{self.job}{OUTPUTS}{self.key}"

    def resolve(self, context: Context) -> str:
        """The job output's value; raises MissingValueError when there is none."""
        value = context.jobs.get(self.job, {}).get(self.key)
        if value is None:
            raise MissingValueError(f"no output {_shown(self.key)} in job {_shown(self.job)}")
        return value


Ref: TypeAlias = InputRef | StepOutputRef | JobOutputRef
Part: TypeAlias = str | Ref


@frozen
class Context:
    """The values references resolve to: inputs, and outputs by step and by job."""

    inputs: Mapping[str, str] = field(factory=dict)
    steps: Mapping[str, Mapping[str, str]] = field(factory=dict)
    jobs: Mapping[str, Mapping[str, str]] = field(factory=dict)


@frozen
class Template:
    """A parsed string: non-empty literal pieces and references, in order."""

    parts: tuple[Part, ...]

    @property
    def references(self) -> tuple[Ref, ...]:
        return tuple(part for part in self.parts if not isinstance(part, str))

    @property
    def is_literal(self) -> bool:
        return all(isinstance(part, str) for part in self.parts)

    def render(self, context: Context, *, scopes: frozenset[str] = ALL_SCOPES) -> str:
        """See ``render``; for callers that parse once and render many times."""
        unknown = scopes - ALL_SCOPES
        if unknown:
            shown = ", ".join(_shown(scope) for scope in sorted(unknown))
            raise ValidationError(f"unknown scope {shown}; expected inputs, steps or jobs")
        pieces: list[str] = []
        for part in self.parts:
            if isinstance(part, str):
                pieces.append(part)
            elif part.scope in scopes:
                pieces.append(part.resolve(context))
            else:
                pieces.append(f"{OPEN} {part.text} {CLOSE}")
        return "".join(pieces)


def parse_template(text: str) -> Template:
    """Split ``text`` into literal pieces and references.

    Raises ExpressionSyntaxError for a ``${{`` without ``}}`` or a body that
    is not one reference.
    """
    parts: list[Part] = []
    position = 0
    while (start := text.find(OPEN, position)) >= 0:
        end = text.find(CLOSE, start + len(OPEN))
        if end < 0:
            raise ExpressionSyntaxError(
                f'unterminated expression {_shown(text[start:])}: no closing "{CLOSE}"'
            )
        if start > position:
            parts.append(text[position:start])
        parts.append(_parse_expression(text[start : end + len(CLOSE)]))
        position = end + len(CLOSE)
    if position < len(text):
        parts.append(text[position:])
    return Template(tuple(parts))


def _parse_expression(expression: str) -> Ref:
    """One ``${{ ... }}``, braces included; errors quote the whole expression."""
    body = expression[len(OPEN) : -len(CLOSE)].strip(_WHITESPACE)
    try:
        return _parse_reference(body)
    except ExpressionSyntaxError as error:
        raise ExpressionSyntaxError(
            f"invalid expression {_shown(expression)}: {error.rule}"
        ) from None


def _parse_reference(body: str) -> Ref:
    if not body:
        raise ExpressionSyntaxError("empty reference")
    if OPEN in body:
        # The first "${{" never closed before this one began.
        raise ExpressionSyntaxError(f'"{OPEN}" inside an expression')
    scope, _, rest = body.partition(".")
    if scope == INPUTS:
        if not rest:
            raise ExpressionSyntaxError("expected inputs.<name>")
        return InputRef(rest)
    if scope not in (STEPS, JOBS):
        raise ExpressionSyntaxError(
            f"unknown scope {_shown(scope)}; expected inputs, steps or jobs"
        )
    # The last ".outputs." splits: names may hold dots, keys never do.
    name, marker, key = rest.rpartition(OUTPUTS)
    if not marker:
        owner = "step" if scope == STEPS else "job"
        raise ExpressionSyntaxError(f"expected {scope}.<{owner}>.outputs.<key>")
    if scope == STEPS:
        return StepOutputRef(name, key)
    return JobOutputRef(name, key)


def render(text: str, context: Context, *, scopes: frozenset[str] = ALL_SCOPES) -> str:
    """Replace every reference in ``text`` whose scope is in ``scopes``.

    References of other scopes stay as ``${{ <ref.text> }}``. Inserted values
    are not scanned again. Raises ExpressionSyntaxError when ``text`` does not
    parse, MissingValueError when a replaced reference has no value, and
    ValidationError when ``scopes`` names an unknown scope.
    """
    return parse_template(text).render(context, scopes=scopes)


def references(text: str) -> tuple[Ref, ...]:
    """The references of ``text`` in order of appearance; raises ExpressionSyntaxError."""
    return parse_template(text).references
