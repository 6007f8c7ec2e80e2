"""Stable hashes: FNV-1a 32 (Go's hash/fnv.New32a) and SHA-256 prefixes."""

from __future__ import annotations

import pytest

from kruntimes_core.core.errors import ValidationError
from kruntimes_core.core.hashing import fnv1a_32, sha256_hex

SHA256_ABC = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
SHA256_EMPTY = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param(b"", 0x811C9DC5, id="empty-is-offset-basis"),
        pytest.param(b"a", 0xE40C292C, id="a"),
        pytest.param(b"foobar", 0xBF9CF968, id="foobar"),
        pytest.param("", 0x811C9DC5, id="empty-text"),
        pytest.param("a", 0xE40C292C, id="a-text"),
        pytest.param("foobar", 0xBF9CF968, id="foobar-text"),
    ],
)
def test_fnv1a_32_known_vectors(data: bytes | str, expected: int) -> None:
    assert fnv1a_32(data) == expected


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("default/data", id="ascii"),
        pytest.param("ünïcødé/数据", id="non-ascii"),
        pytest.param("3f2b8c1e-0a4d-4e5f-9b6a-7c8d9e0f1a2b", id="uid"),
    ],
)
def test_text_hashes_as_utf8(text: str) -> None:
    assert fnv1a_32(text) == fnv1a_32(text.encode("utf-8"))
    assert sha256_hex(text) == sha256_hex(text.encode("utf-8"))


def test_fnv1a_32_fits_in_32_bits() -> None:
    for size in range(0, 200, 7):
        assert 0 <= fnv1a_32(b"\xff" * size) <= 0xFFFFFFFF


def test_fnv1a_32_is_order_sensitive() -> None:
    assert fnv1a_32("ab") != fnv1a_32("ba")


@pytest.mark.parametrize(
    ("data", "length", "expected"),
    [
        pytest.param(b"abc", 64, SHA256_ABC, id="full"),
        pytest.param(b"abc", 8, SHA256_ABC[:8], id="eight"),
        pytest.param(b"abc", 1, SHA256_ABC[:1], id="one"),
        pytest.param("abc", 12, SHA256_ABC[:12], id="text"),
        pytest.param(b"", 64, SHA256_EMPTY, id="empty"),
    ],
)
def test_sha256_hex_prefix(data: bytes | str, length: int, expected: str) -> None:
    assert sha256_hex(data, length) == expected


def test_sha256_hex_default_is_the_full_digest() -> None:
    assert sha256_hex(b"abc") == SHA256_ABC


@pytest.mark.parametrize("length", [0, -1, 65, 1000])
def test_sha256_hex_length_out_of_range(length: int) -> None:
    with pytest.raises(ValidationError, match=r"1\.\.64"):
        sha256_hex(b"abc", length)
