"""The ``$KRUNTIME_OUTPUTS`` file a step writes its outputs to (spec workflows.md section 3).

Theory of operation. The file is bytes; it must be UTF-8 as a whole (checked
first, so an invalid byte is reported even after an earlier syntax error).
It is split on ``"\\n"`` and one trailing ``"\\r"`` is removed from every line,
so CRLF files read like LF files. "Blank" below means ASCII space, tab, CR,
FF or VT; other Unicode spaces are ordinary characters. The grammar, line by
line::

    file     = { line }
    line     = blank-only | comment | pair | heredoc
    comment  = blanks "#" anything          (no trailing comments: "A=b # c" is "b # c")
    pair     = KEY "=" VALUE                (both trimmed of blanks; VALUE may hold "=")
    heredoc  = KEY "<<" DELIM  { raw-line }  DELIM-line
    KEY      = [A-Za-z_][A-Za-z0-9_-]*      (trimmed of blanks)
    DELIM    = any non-empty text           (trimmed of blanks)

A line holding both ``=`` and ``<<`` takes the form of whichever comes
first: ``A=x<<y`` is the pair ``A`` = ``x<<y``, ``A<<E=F`` opens a heredoc
closed by ``E=F``. A heredoc body is raw: comments, blank lines and pairs
inside it are text, and its value is the body lines joined with ``"\\n"``,
untrimmed. It ends at the first line exactly equal to DELIM (an indented
DELIM does not close it); a file that ends first is invalid and the error
names the opening line. The last definition of a key wins.

Limits apply to the final mapping (after last-wins), in bytes of UTF-8:
the number of keys first, then each key in sorted order (its name, then its
value), then the total of key and value bytes over all entries. Keys come
back sorted so equal files give equal mappings whatever the order of lines.

``format_outputs`` is the inverse: ``KEY=VALUE`` when that reads back
unchanged, else a heredoc whose delimiter (``EOF``, ``EOF_1``, ...) is not a
line of the value. A value line ending in ``"\\r"`` is written with one more
``"\\r"``, which the reader removes again, so every string survives.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import ClassVar, Self

from attrs import frozen

from kruntimes_core.core.errors import InvalidInputError, PathPart

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_BLANKS = " \t\r\f\v"
_DELIMITER = "EOF"


@frozen
class OutputLimits:
    """Size limits of one step's outputs, in UTF-8 bytes (spec workflows.md section 3)."""

    max_keys: int = 64
    max_key_bytes: int = 128
    max_value_bytes: int = 8192
    max_total_bytes: int = 65536
    """The sum over all final entries of the bytes of key and value."""


DEFAULT_OUTPUT_LIMITS = OutputLimits()


class OutputsError(InvalidInputError):
    """The outputs file breaks the format or the limits; ``reason`` fails the step."""

    reason: ClassVar[str]

    def __init__(
        self,
        rule: str,
        path: Sequence[PathPart] = (),
        *,
        location: str = "",
        line: int | None = None,
    ) -> None:
        self.line = line  # 1-based; the rule text names it too
        super().__init__(rule, path, location=location)

    @classmethod
    def at(cls, line: int, problem: str, path: Sequence[PathPart] = ()) -> Self:
        """The error for ``problem`` on ``line``, named in the rule text."""
        return cls(f"line {line}: {problem}", path, line=line)

    def within(self, *outer: PathPart, location: str = "") -> Self:
        path = (*outer, *self.path)
        return type(self)(self.rule, path, location=location or self.location, line=self.line)


class OutputsTooLarge(OutputsError):
    """Too many keys, or a key, a value or the whole over its byte limit."""

    reason = "OutputsTooLarge"


class OutputsInvalid(OutputsError):
    """A malformed line, a bad key, an unclosed heredoc, or bytes that are not UTF-8."""

    reason = "OutputsInvalid"


def parse_outputs(data: bytes, limits: OutputLimits = DEFAULT_OUTPUT_LIMITS) -> dict[str, str]:
    """Read an outputs file into a mapping with sorted keys.

    Raises OutputsInvalid (with the line) for a malformed file and
    OutputsTooLarge when the final mapping exceeds ``limits``.
    """
    lines = _decode(data).split("\n")
    entries = {key: (value, line) for key, value, line in _entries(lines)}
    _check_limits(entries, limits)
    return {key: entries[key][0] for key in sorted(entries)}


def format_outputs(values: Mapping[str, str]) -> bytes:
    """Write ``values`` so that ``parse_outputs`` reads them back, keys sorted.

    Limits are not checked (``parse_outputs`` does). Raises OutputsInvalid
    for a key that breaks the key syntax or a value that is not encodable.
    """
    return b"".join(_format_entry(key, values[key]) for key in sorted(values))


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        # b"\n" never occurs inside a multi-byte sequence, so counting it is exact.
        line = data.count(b"\n", 0, error.start) + 1
        raise OutputsInvalid.at(line, "not valid UTF-8") from error


def _chomp(line: str) -> str:
    return line[:-1] if line.endswith("\r") else line


def _entries(lines: Sequence[str]) -> Iterator[tuple[str, str, int]]:
    """Yield (key, value, line number) in file order; a heredoc yields its opening line."""
    index = 0
    while index < len(lines):
        number, text = index + 1, lines[index].strip(_BLANKS)
        index += 1
        if not text or text.startswith("#"):
            continue
        equals, heredoc = text.find("="), text.find("<<")
        if equals == -1 and heredoc == -1:
            raise OutputsInvalid.at(number, "expected KEY=VALUE or KEY<<DELIMITER")
        if heredoc == -1 or -1 < equals < heredoc:
            yield _key(text[:equals], number), text[equals + 1 :].strip(_BLANKS), number
            continue
        key = _key(text[:heredoc], number)
        delimiter = text[heredoc + 2 :].strip(_BLANKS)
        if not delimiter:
            raise OutputsInvalid.at(number, f"empty heredoc delimiter after {key}<<")
        value, index = _heredoc_body(lines, index, delimiter)
        if value is None:
            problem = f"heredoc {key}<<{delimiter} is never closed"
            raise OutputsInvalid.at(number, problem, (key,))
        yield key, value, number


def _key(text: str, number: int) -> str:
    key = text.strip(_BLANKS)
    if not _KEY.fullmatch(key):
        raise OutputsInvalid.at(number, f"invalid key {key!r}: expected [A-Za-z_][A-Za-z0-9_-]*")
    return key


def _heredoc_body(lines: Sequence[str], start: int, delimiter: str) -> tuple[str | None, int]:
    """The body from ``lines[start]`` to the closing line and the index after it (None if open)."""
    for end in range(start, len(lines)):
        if _chomp(lines[end]) == delimiter:
            return "\n".join(_chomp(line) for line in lines[start:end]), end + 1
    return None, len(lines)


def _check_limits(entries: Mapping[str, tuple[str, int]], limits: OutputLimits) -> None:
    if len(entries) > limits.max_keys:
        raise OutputsTooLarge(f"{len(entries)} keys, over the limit of {limits.max_keys}")
    total = 0
    for key in sorted(entries):
        value, number = entries[key]
        key_bytes, value_bytes = len(key.encode()), len(value.encode())
        if key_bytes > limits.max_key_bytes:
            problem = f"key is {key_bytes} bytes, over the limit of {limits.max_key_bytes}"
            raise OutputsTooLarge.at(number, problem, (key,))
        if value_bytes > limits.max_value_bytes:
            problem = f"value is {value_bytes} bytes, over the limit of {limits.max_value_bytes}"
            raise OutputsTooLarge.at(number, problem, (key,))
        total += key_bytes + value_bytes
    if total > limits.max_total_bytes:
        limit = limits.max_total_bytes
        raise OutputsTooLarge(f"outputs are {total} bytes in total, over the limit of {limit}")


def _format_entry(key: str, value: str) -> bytes:
    if not _KEY.fullmatch(key):
        raise OutputsInvalid(f"invalid key {key!r}: expected [A-Za-z_][A-Za-z0-9_-]*", (key,))
    if "\n" not in value and value == value.strip(_BLANKS):
        text = f"{key}={value}\n"
    else:
        body = value.split("\n")
        delimiter = _delimiter(set(body))
        # The reader drops one trailing "\r" per line; give it one to drop.
        raw = "\n".join(line + "\r" if line.endswith("\r") else line for line in body)
        text = f"{key}<<{delimiter}\n{raw}\n{delimiter}\n"
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise OutputsInvalid("value is not encodable as UTF-8", (key,)) from error


def _delimiter(lines: set[str]) -> str:
    """The first of ``EOF``, ``EOF_1``, ``EOF_2``, ... that is not a line of the value."""
    numbered = (f"{_DELIMITER}_{n}" for n in itertools.count(1))
    return next(name for name in itertools.chain([_DELIMITER], numbered) if name not in lines)
