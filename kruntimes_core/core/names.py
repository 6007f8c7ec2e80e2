"""Kubernetes name and label syntax, and deterministic names for children.

The syntax rules are Kubernetes' (apimachinery validation): DNS-1123 labels
and subdomains, label values and qualified names (label keys).
"""

from __future__ import annotations

import re

from kruntimes_core.core.errors import ValidationError
from kruntimes_core.core.hashing import sha256_hex

DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
LABEL_VALUE_MAX = 63

_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_QUALIFIED_NAME_PART = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")


def dns1123_label_problem(value: str) -> str | None:
    """Why ``value`` is not a DNS-1123 label, or None when it is one."""
    if len(value) > DNS1123_LABEL_MAX:
        return f"must be no more than {DNS1123_LABEL_MAX} characters"
    if not _DNS1123_LABEL.fullmatch(value):
        return "must be a DNS-1123 label (lowercase alphanumerics and '-')"
    return None


def dns1123_subdomain_problem(value: str) -> str | None:
    """Why ``value`` is not a DNS-1123 subdomain, or None when it is one."""
    if len(value) > DNS1123_SUBDOMAIN_MAX:
        return f"must be no more than {DNS1123_SUBDOMAIN_MAX} characters"
    if not _DNS1123_SUBDOMAIN.fullmatch(value):
        return "must be a DNS-1123 subdomain (lowercase alphanumerics, '-' and '.')"
    return None


def label_value_problem(value: str) -> str | None:
    """Why ``value`` is not a valid label value, or None when it is one."""
    if len(value) > LABEL_VALUE_MAX:
        return f"must be no more than {LABEL_VALUE_MAX} characters"
    if not _LABEL_VALUE.fullmatch(value):
        return "must be a label value (alphanumerics, '-', '_' or '.', alphanumeric at both ends)"
    return None


def qualified_name_problem(value: str) -> str | None:
    """Why ``value`` is not a qualified name (a label key), or None."""
    prefix, slash, name = value.rpartition("/")
    if slash and (not prefix or dns1123_subdomain_problem(prefix)):
        return "prefix must be a DNS-1123 subdomain"
    if not name or len(name) > DNS1123_LABEL_MAX:
        return f"name part must be 1..{DNS1123_LABEL_MAX} characters"
    if not _QUALIFIED_NAME_PART.fullmatch(name):
        return "name part must be alphanumerics, '-', '_' or '.', alphanumeric at both ends"
    return None


def require(problem: str | None, field: str) -> None:
    """Raise ValidationError at ``field`` when a ``*_problem`` check found one."""
    if problem is not None:
        raise ValidationError(problem, (field,))


_CHILD_NAME_MIN = 16  # room for a head, "-" and the 8-digit hash suffix


def child_name(*parts: str, limit: int = DNS1123_SUBDOMAIN_MAX) -> str:
    """Join ``parts`` with '-'; when too long, truncate and add a stable hash.

    The suffix is the first 8 hex digits of SHA-256 over the full joined name,
    so two long names that share a prefix still differ.
    """
    if limit < _CHILD_NAME_MIN:
        raise ValidationError(f"name limit must be >= {_CHILD_NAME_MIN}, got {limit}")
    joined = "-".join(parts)
    if len(joined) <= limit:
        return joined
    suffix = sha256_hex(joined, 8)
    head = joined[: limit - len(suffix) - 1].rstrip("-.")
    return f"{head}-{suffix}"
