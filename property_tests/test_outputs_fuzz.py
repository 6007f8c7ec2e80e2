"""Properties of the $KRUNTIME_OUTPUTS parser and writer (spec workflows.md section 3)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kruntimes_core.workflows.outputs import (
    OutputLimits,
    OutputsInvalid,
    OutputsTooLarge,
    format_outputs,
    parse_outputs,
)

_UNLIMITED = OutputLimits(
    max_keys=10**9, max_key_bytes=10**9, max_value_bytes=10**9, max_total_bytes=10**9
)
_KEY_HEAD = "ABCXYZabcxyz_"
_KEY_TAIL = _KEY_HEAD + "0189-"

keys = st.builds(str.__add__, st.sampled_from(_KEY_HEAD), st.text(alphabet=_KEY_TAIL, max_size=8))

# Lines that stress the writer: its own delimiters, blanks, CRs, comment and pair look-alikes.
_TRICKY_LINES = st.sampled_from(
    [
        "",
        " ",
        "\t",
        "\r",
        "x\r",
        "\r\r",
        "EOF",
        "EOF_1",
        "EOF_2",
        " EOF",
        "EOF\r",
        "#",
        "A=b",
        "B<<EOF",
    ]
)
values = st.one_of(
    st.text(max_size=40),
    st.lists(st.one_of(_TRICKY_LINES, st.text(max_size=10)), max_size=6).map("\n".join),
)

# Fragments that reach every branch of the parser, including bytes that are not UTF-8.
_FRAGMENTS = st.sampled_from(
    [
        *(b"A", b"b_1", b"-", b"=", b"<<", b"EOF", b"#", b" ", b"\t", b"\r", b"\n", b"\r\n"),
        *(b"\xc3\xa9", b"\xe2\x82\xac", b"\xff", b"\xc3", b"\xed\xa0\x80", b"x" * 20),
    ]
)
# Whole lines of every kind, so that valid files, heredocs and limit errors are common too.
_LINES = st.one_of(
    st.builds("{}={}".format, keys, st.text(max_size=12)).map(str.encode),
    st.builds("{}<<{}".format, keys, st.sampled_from(["EOF", "X", " ", ""])).map(str.encode),
    st.sampled_from([b"EOF", b"X", b"EOF\r", b" EOF", b"# c", b"", b"  ", b"\xff", b"A", b"=x"]),
)
_LINE_FILES = st.builds(
    bytes.join, st.sampled_from([b"\n", b"\r\n"]), st.lists(_LINES, max_size=12)
)
files = st.one_of(
    st.binary(max_size=200), st.lists(_FRAGMENTS, max_size=60).map(b"".join), _LINE_FILES
)
small_limits = st.builds(
    OutputLimits,
    max_keys=st.integers(0, 4),
    max_key_bytes=st.integers(0, 8),
    max_value_bytes=st.integers(0, 30),
    max_total_bytes=st.integers(0, 60),
)


@settings(max_examples=1000, deadline=None)
@given(data=files, limits=st.one_of(st.just(OutputLimits()), small_limits))
def test_any_bytes_parse_or_fail_with_a_reason(data: bytes, limits: OutputLimits) -> None:
    try:
        result = parse_outputs(data, limits)
    except OutputsInvalid as error:
        assert error.line is not None
        assert error.rule.startswith(f"line {error.line}: ")
        assert 1 <= error.line <= data.count(b"\n") + 1
    except OutputsTooLarge as error:
        assert error.reason == "OutputsTooLarge"
    else:
        assert list(result) == sorted(result)
        assert len(result) <= limits.max_keys


@settings(max_examples=500, deadline=None)
@given(st.dictionaries(keys, values, max_size=8))
def test_format_then_parse_is_identity(outputs: dict[str, str]) -> None:
    assert parse_outputs(format_outputs(outputs), _UNLIMITED) == outputs


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(keys, values.map(lambda value: value.replace("\r", "")), max_size=8))
def test_crlf_files_read_like_lf_files(outputs: dict[str, str]) -> None:
    # A line the writer ended in "\r" would gain a second one; CR-free values never do.
    written = format_outputs(outputs)
    assert parse_outputs(written.replace(b"\n", b"\r\n"), _UNLIMITED) == outputs


@settings(max_examples=500, deadline=None)
@given(files)
def test_parse_then_format_is_stable(data: bytes) -> None:
    try:
        parsed = parse_outputs(data, _UNLIMITED)
    except OutputsInvalid:
        return
    assert parse_outputs(format_outputs(parsed), _UNLIMITED) == parsed


def _bytes(outputs: dict[str, str]) -> tuple[int, int, int, int]:
    """Keys, longest key, longest value and total, all in UTF-8 bytes."""
    key_sizes = [len(key.encode()) for key in outputs]
    value_sizes = [len(value.encode()) for value in outputs.values()]
    total = sum(key_sizes) + sum(value_sizes)
    return len(outputs), max(key_sizes, default=0), max(value_sizes, default=0), total


@settings(max_examples=300, deadline=None)
@given(outputs=st.dictionaries(keys, values, min_size=1, max_size=8), which=st.integers(0, 3))
def test_limits_are_exact_to_the_byte(outputs: dict[str, str], which: int) -> None:
    data = format_outputs(outputs)
    exact = _bytes(outputs)
    assert parse_outputs(data, OutputLimits(*exact)) == outputs
    below = list(exact)
    below[which] -= 1
    try:
        parse_outputs(data, OutputLimits(*below))
    except OutputsTooLarge as error:
        # Key and value errors name the key at fault; count and total errors name none.
        expected_path_length = 1 if which in (1, 2) else 0
        assert len(error.path) == expected_path_length
        assert ("bytes in total" in error.rule) == (which == 3)
    else:
        raise AssertionError(f"limit {which} one byte short of {exact[which]} was accepted")
