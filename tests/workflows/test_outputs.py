"""The $KRUNTIME_OUTPUTS file format and its limits (spec workflows.md section 3)."""

from __future__ import annotations

import pytest

from kruntimes_core.core.errors import InvalidInputError
from kruntimes_core.workflows.outputs import (
    OutputLimits,
    OutputsError,
    OutputsInvalid,
    OutputsTooLarge,
    format_outputs,
    parse_outputs,
)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param(b"", {}, id="empty-file"),
        pytest.param(b"\n \n\t\n", {}, id="blank-lines-only"),
        pytest.param(b"A=1", {"A": "1"}, id="no-final-newline"),
        pytest.param(b"# note\nA=1\n  # indented\n\nB=2\n", {"A": "1", "B": "2"}, id="comments"),
        pytest.param(b"A=b # c\n", {"A": "b # c"}, id="no-trailing-comment"),
        pytest.param(b"A=#x\n", {"A": "#x"}, id="hash-value"),
        pytest.param(b"  A  =  b c  \n", {"A": "b c"}, id="trimmed"),
        pytest.param(b"\tA\t=\tb\t\n", {"A": "b"}, id="trimmed-tabs"),
        pytest.param(b"A=\xc2\xa0b\xc2\xa0\n", {"A": "\xa0b\xa0"}, id="nbsp-is-not-blank"),
        pytest.param(b"A=1\r\nB=2\r\n", {"A": "1", "B": "2"}, id="crlf"),
        pytest.param(b"A=\n", {"A": ""}, id="empty-value"),
        pytest.param(b"A=   \n", {"A": ""}, id="blank-value"),
        pytest.param(b"A=b=c\n", {"A": "b=c"}, id="equals-in-value"),
        pytest.param(b"A=x<<y\n", {"A": "x<<y"}, id="equals-before-heredoc"),
        pytest.param(b"A=<<EOF\n", {"A": "<<EOF"}, id="equals-then-angles"),
        pytest.param(b"A=1\nB=2\nA=3\n", {"A": "3", "B": "2"}, id="last-wins"),
        pytest.param(b"_a=1\na-b=2\nZ9=3\n", {"Z9": "3", "_a": "1", "a-b": "2"}, id="key-syntax"),
        pytest.param("A=é€\n".encode(), {"A": "é€"}, id="utf-8-value"),
        pytest.param(b"A=a\x00b\n", {"A": "a\x00b"}, id="nul-is-text"),
        pytest.param(b"A<<EOF\none\ntwo\nEOF\n", {"A": "one\ntwo"}, id="heredoc"),
        pytest.param(b"A<<EOF\r\none\r\ntwo\r\nEOF\r\n", {"A": "one\ntwo"}, id="heredoc-crlf"),
        pytest.param(b"A<<EOF\nEOF\n", {"A": ""}, id="heredoc-empty"),
        pytest.param(b"A<<EOF\n\nEOF\n", {"A": ""}, id="heredoc-one-empty-line"),
        pytest.param(b"A<<EOF\n\n\nEOF\n", {"A": "\n"}, id="heredoc-newline"),
        pytest.param(b"A<<EOF\n  x  \nEOF", {"A": "  x  "}, id="heredoc-untrimmed"),
        pytest.param(
            b"A<<EOF\n# not a comment\n\nB=2\nC<<X\nEOF\n",
            {"A": "# not a comment\n\nB=2\nC<<X"},
            id="heredoc-body-is-raw",
        ),
        pytest.param(b"A<<EOF\n EOF\nEOF \nEOF\n", {"A": " EOF\nEOF "}, id="only-exact-closes"),
        pytest.param(b"A<<EOF\nx\r\r\nEOF\n", {"A": "x\r"}, id="heredoc-one-cr-removed"),
        pytest.param(b"  A  <<  END  \nx\nEND\n", {"A": "x"}, id="heredoc-opener-trimmed"),
        pytest.param(b"A<<E=F\nx\nE=F\n", {"A": "x"}, id="angles-before-equals"),
        pytest.param(b"A<<EOF\nx\nEOF\nB=2\n", {"A": "x", "B": "2"}, id="after-heredoc"),
        pytest.param(b"A<<EOF\nx\nEOF\nA=y\n", {"A": "y"}, id="last-wins-over-heredoc"),
        pytest.param(b"A=y\nA<<EOF\nx\nEOF\n", {"A": "x"}, id="heredoc-wins-when-last"),
    ],
)
def test_parse(data: bytes, expected: dict[str, str]) -> None:
    assert parse_outputs(data) == expected


def test_keys_come_back_sorted() -> None:
    assert list(parse_outputs(b"b=1\nB=2\na=3\n_=4\n")) == ["B", "_", "a", "b"]


@pytest.mark.parametrize(
    ("data", "line", "rule"),
    [
        pytest.param(b"A\n", 1, "expected KEY=VALUE or KEY<<DELIMITER", id="bare-word"),
        pytest.param(b"A=1\n\nB\n", 3, "expected KEY=VALUE or KEY<<DELIMITER", id="third-line"),
        pytest.param(b"A<EOF\n", 1, "expected KEY=VALUE or KEY<<DELIMITER", id="single-angle"),
        pytest.param(b"=x\n", 1, "invalid key ''", id="empty-key"),
        pytest.param(b"1A=x\n", 1, "invalid key '1A'", id="leading-digit"),
        pytest.param(b"A B=x\n", 1, "invalid key 'A B'", id="inner-space"),
        pytest.param(b"A.b=x\n", 1, "invalid key 'A.b'", id="dot"),
        pytest.param("é=x\n".encode(), 1, "invalid key 'é'", id="non-ascii"),
        pytest.param(b"\xef\xbb\xbfA=x\n", 1, "invalid key '\\ufeffA'", id="bom"),
        pytest.param(b"<<EOF\nx\nEOF\n", 1, "invalid key ''", id="heredoc-empty-key"),
        pytest.param(b"A.b<<EOF\nx\nEOF\n", 1, "invalid key 'A.b'", id="heredoc-bad-key"),
        pytest.param(b"X=1\nA<<\n", 2, "empty heredoc delimiter after A<<", id="no-delimiter"),
        pytest.param(b"A<<  \r\n", 1, "empty heredoc delimiter after A<<", id="blank-delimiter"),
        pytest.param(b"X=1\nA<<EOF\nx\n", 2, "heredoc A<<EOF is never closed", id="unclosed"),
        pytest.param(b"A<<EOF", 1, "heredoc A<<EOF is never closed", id="unclosed-at-eof"),
        pytest.param(b"A<<EOF\n EOF\n", 1, "heredoc A<<EOF is never closed", id="indented-end"),
        pytest.param(b"A<<EOF\nEOF \n", 1, "heredoc A<<EOF is never closed", id="padded-end"),
        pytest.param(b"A<<EOF\neof\n", 1, "heredoc A<<EOF is never closed", id="case-matters"),
    ],
)
def test_parse_rejects_malformed_lines(data: bytes, line: int, rule: str) -> None:
    with pytest.raises(OutputsInvalid) as caught:
        parse_outputs(data)
    assert caught.value.line == line
    assert caught.value.rule.startswith(f"line {line}: {rule}")
    assert str(caught.value).endswith(caught.value.rule)
    assert caught.value.reason == "OutputsInvalid"


def test_unclosed_heredoc_names_its_key() -> None:
    with pytest.raises(OutputsInvalid) as caught:
        parse_outputs(b"A<<EOF\nx\n")
    assert caught.value.path == ("A",)
    assert str(caught.value) == "A: line 1: heredoc A<<EOF is never closed"


@pytest.mark.parametrize(
    ("data", "line"),
    [
        pytest.param(b"\xff", 1, id="first-byte"),
        pytest.param(b"A=1\nB=\xff\n", 2, id="second-line"),
        pytest.param(b"A=1\n\nB=\xc3", 3, id="truncated-at-end"),
        pytest.param(b"A=\xc3\nB=1\n", 1, id="truncated-before-newline"),
        pytest.param(b"# \xfe comment\n", 1, id="in-comment"),
        pytest.param(b"A<<EOF\nok\n\x80\nEOF\n", 3, id="in-heredoc"),
        pytest.param(b"A\nB=\xed\xa0\x80\n", 2, id="surrogate-after-syntax-error"),
        pytest.param(b"A=\xc0\x80\n", 1, id="overlong"),
    ],
)
def test_parse_rejects_invalid_utf8(data: bytes, line: int) -> None:
    with pytest.raises(OutputsInvalid) as caught:
        parse_outputs(data)
    assert caught.value.line == line
    assert caught.value.rule == f"line {line}: not valid UTF-8"


def _pairs(count: int) -> bytes:
    return b"".join(b"K%d=v\n" % n for n in range(count))


@pytest.mark.parametrize(
    ("data", "fits"),
    [
        pytest.param(_pairs(64), True, id="64-keys"),
        pytest.param(_pairs(65), False, id="65-keys"),
        pytest.param(_pairs(64) + b"K0=again\n", True, id="duplicates-count-once"),
        pytest.param(b"A" * 128 + b"=v\n", True, id="key-128-bytes"),
        pytest.param(b"A" * 129 + b"=v\n", False, id="key-129-bytes"),
        pytest.param(b"A=" + b"x" * 8192, True, id="value-8192-bytes"),
        pytest.param(b"A=" + b"x" * 8193, False, id="value-8193-bytes"),
        pytest.param(b"A=" + "é".encode() * 4096, True, id="value-4096-two-byte-chars"),
        pytest.param(b"A=" + "é".encode() * 4096 + b"x", False, id="value-8193-utf8"),
        pytest.param(b"A=" + "€".encode() * 2731, False, id="value-2731-euros"),
        pytest.param(b"A=  " + b"x" * 8192 + b"  \r\n", True, id="trimmed-before-counting"),
        pytest.param(b"A<<EOF\r\n" + b"x" * 8192 + b"\r\nEOF\r\n", True, id="heredoc-8192"),
        pytest.param(b"A<<EOF\n" + b"x\n" * 4095 + b"xx\nEOF\n", True, id="heredoc-8192-lines"),
        pytest.param(b"A<<EOF\n" + b"x\n" * 4097 + b"EOF\n", False, id="heredoc-newlines-count"),
        pytest.param(b"A=" + b"x" * 9000 + b"\nA=short\n", True, id="last-wins-before-limits"),
    ],
)
def test_parse_limits_are_exact(data: bytes, fits: bool) -> None:
    if fits:
        parse_outputs(data)
    else:
        with pytest.raises(OutputsTooLarge):
            parse_outputs(data)


def _total(extra: int) -> bytes:
    # Eight entries of 2 key bytes and 8190 value bytes: 65536 bytes in all.
    data = b"".join(b"K%d=" % n + b"x" * 8190 + b"\n" for n in range(8))
    return data + b"Z=" + b"x" * (extra - 1) + b"\n" if extra else data


def test_total_of_exactly_the_limit_fits() -> None:
    assert sum(len(k) + len(v) for k, v in parse_outputs(_total(0)).items()) == 65536


def test_total_one_byte_over_the_limit() -> None:
    with pytest.raises(OutputsTooLarge) as caught:
        parse_outputs(_total(1))
    assert (caught.value.rule, caught.value.path, caught.value.line) == (
        "outputs are 65537 bytes in total, over the limit of 65536",
        (),
        None,
    )


@pytest.mark.parametrize(
    ("data", "path", "line", "rule"),
    [
        pytest.param(_pairs(65), (), None, "65 keys, over the limit of 64", id="keys"),
        pytest.param(
            b"A=1\n" + b"B" * 129 + b"=v\n",
            ("B" * 129,),
            2,
            "line 2: key is 129 bytes, over the limit of 128",
            id="key",
        ),
        pytest.param(
            b"A=1\nB=" + b"x" * 8193 + b"\n",
            ("B",),
            2,
            "line 2: value is 8193 bytes, over the limit of 8192",
            id="value",
        ),
        pytest.param(
            b"A=1\nB<<EOF\n" + b"x" * 8193 + b"\nEOF\n",
            ("B",),
            2,
            "line 2: value is 8193 bytes, over the limit of 8192",
            id="heredoc-names-opening-line",
        ),
        pytest.param(
            b"B=" + b"x" * 8193 + b"\nA=" + b"x" * 8193 + b"\n",
            ("A",),
            2,
            "line 2: value is 8193 bytes, over the limit of 8192",
            id="first-key-in-sorted-order",
        ),
    ],
)
def test_too_large_names_the_key(
    data: bytes, path: tuple[str, ...], line: int | None, rule: str
) -> None:
    with pytest.raises(OutputsTooLarge) as caught:
        parse_outputs(data)
    error = caught.value
    assert (error.path, error.line, error.rule) == (path, line, rule)
    assert error.reason == "OutputsTooLarge"


def test_custom_limits() -> None:
    limits = OutputLimits(max_keys=1, max_key_bytes=1, max_value_bytes=2, max_total_bytes=3)
    assert parse_outputs(b"A=bc\n", limits) == {"A": "bc"}
    for data in (b"A=1\nB=2\n", b"AB=1\n", b"A=bcd\n"):
        with pytest.raises(OutputsTooLarge):
            parse_outputs(data, limits)


def test_errors_belong_to_the_hierarchy() -> None:
    assert issubclass(OutputsTooLarge, OutputsError)
    assert issubclass(OutputsInvalid, OutputsError)
    assert issubclass(OutputsError, InvalidInputError)


def test_within_keeps_the_line() -> None:
    error = OutputsInvalid.at(3, "boom").within("steps", "build", location="outputs")
    assert (type(error), error.line, error.path) == (OutputsInvalid, 3, ("steps", "build"))
    assert str(error) == "outputs: steps.build: line 3: boom"


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        pytest.param({}, b"", id="empty"),
        pytest.param({"b": "2", "a": "1"}, b"a=1\nb=2\n", id="sorted-pairs"),
        pytest.param({"A": ""}, b"A=\n", id="empty-value"),
        pytest.param({"A": "x=y<<z # c"}, b"A=x=y<<z # c\n", id="pair-keeps-symbols"),
        pytest.param({"A": "a\rb"}, b"A=a\rb\n", id="inner-cr-stays-a-pair"),
        pytest.param({"A": "one\ntwo"}, b"A<<EOF\none\ntwo\nEOF\n", id="multi-line"),
        pytest.param({"A": " x"}, b"A<<EOF\n x\nEOF\n", id="leading-blank"),
        pytest.param({"A": "x\t"}, b"A<<EOF\nx\t\nEOF\n", id="trailing-blank"),
        pytest.param({"A": "\n"}, b"A<<EOF\n\n\nEOF\n", id="lone-newline"),
        pytest.param({"A": "EOF\n"}, b"A<<EOF_1\nEOF\n\nEOF_1\n", id="delimiter-in-value"),
        pytest.param(
            {"A": "EOF_1\nEOF\n EOF_2"}, b"A<<EOF_2\nEOF_1\nEOF\n EOF_2\nEOF_2\n", id="skips-two"
        ),
        pytest.param({"A": "x\r"}, b"A<<EOF\nx\r\r\nEOF\n", id="trailing-cr-doubled"),
        pytest.param({"A": "é"}, "A=é\n".encode(), id="utf-8"),
    ],
)
def test_format(values: dict[str, str], expected: bytes) -> None:
    assert format_outputs(values) == expected
    assert parse_outputs(expected) == values


@pytest.mark.parametrize(
    ("values", "rule"),
    [
        pytest.param({"a.b": "x"}, "invalid key 'a.b'", id="bad-key"),
        pytest.param({"": "x"}, "invalid key ''", id="empty-key"),
        pytest.param({"A": "\ud800"}, "value is not encodable as UTF-8", id="surrogate"),
    ],
)
def test_format_rejects(values: dict[str, str], rule: str) -> None:
    with pytest.raises(OutputsInvalid) as caught:
        format_outputs(values)
    assert caught.value.rule.startswith(rule)
    assert caught.value.path == tuple(values)
    assert caught.value.line is None
