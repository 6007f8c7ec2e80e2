"""Stable hashes (spec README, rule 1): identical in every process.

Python's ``hash()`` is salted per process; these are not.
"""

from __future__ import annotations

import hashlib

from kruntimes_core.core.errors import ValidationError

_FNV32_OFFSET = 0x811C9DC5
_FNV32_PRIME = 0x01000193
_MASK32 = 0xFFFFFFFF


def fnv1a_32(data: bytes | str) -> int:
    """FNV-1a, 32 bits, as Go's ``hash/fnv.New32a``; text is hashed as UTF-8."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    value = _FNV32_OFFSET
    for byte in raw:
        value = ((value ^ byte) * _FNV32_PRIME) & _MASK32
    return value


def sha256_hex(data: bytes | str, length: int = 64) -> str:
    """The first ``length`` hex digits of SHA-256 (UTF-8 for text)."""
    if not 1 <= length <= 64:
        raise ValidationError(f"hash length must be within 1..64, got {length}")
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return hashlib.sha256(raw).hexdigest()[:length]
