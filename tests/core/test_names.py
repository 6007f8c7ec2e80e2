"""Kubernetes name and label syntax, and deterministic child names."""

from __future__ import annotations

import pytest

from kruntimes_core.core.errors import ValidationError
from kruntimes_core.core.hashing import sha256_hex
from kruntimes_core.core.names import (
    DNS1123_LABEL_MAX,
    DNS1123_SUBDOMAIN_MAX,
    LABEL_VALUE_MAX,
    child_name,
    dns1123_label_problem,
    dns1123_subdomain_problem,
    label_value_problem,
    qualified_name_problem,
    require,
)


def test_limits_are_kubernetes_limits() -> None:
    assert (DNS1123_LABEL_MAX, DNS1123_SUBDOMAIN_MAX, LABEL_VALUE_MAX) == (63, 253, 63)


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        pytest.param("a", True, id="one-char"),
        pytest.param("0", True, id="digit"),
        pytest.param("my-pod-0", True, id="dashes"),
        pytest.param("0abc", True, id="leading-digit"),
        pytest.param("a" * 63, True, id="max-length"),
        pytest.param("a" * 64, False, id="too-long"),
        pytest.param("", False, id="empty"),
        pytest.param("A", False, id="uppercase"),
        pytest.param("-a", False, id="leading-dash"),
        pytest.param("a-", False, id="trailing-dash"),
        pytest.param("a.b", False, id="dot"),
        pytest.param("a_b", False, id="underscore"),
        pytest.param("a b", False, id="space"),
        pytest.param("a\n", False, id="trailing-newline"),
    ],
)
def test_dns1123_label(value: str, valid: bool) -> None:
    assert (dns1123_label_problem(value) is None) is valid


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        pytest.param("a", True, id="one-char"),
        pytest.param("a.b", True, id="dotted"),
        pytest.param("kruntimes.io", True, id="domain"),
        pytest.param("my-ws.team-a.0", True, id="dashes-and-digits"),
        pytest.param("a" * 253, True, id="max-length"),
        pytest.param(".".join(["a" * 63] * 4)[:253], True, id="max-length-dotted"),
        pytest.param("a" * 254, False, id="too-long"),
        pytest.param("", False, id="empty"),
        pytest.param(".a", False, id="leading-dot"),
        pytest.param("a.", False, id="trailing-dot"),
        pytest.param("a..b", False, id="empty-label"),
        pytest.param("a.-b", False, id="label-leading-dash"),
        pytest.param("a-.b", False, id="label-trailing-dash"),
        pytest.param("A.b", False, id="uppercase"),
        pytest.param("a_b", False, id="underscore"),
        pytest.param("a/b", False, id="slash"),
    ],
)
def test_dns1123_subdomain(value: str, valid: bool) -> None:
    assert (dns1123_subdomain_problem(value) is None) is valid


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        pytest.param("", True, id="empty-allowed"),
        pytest.param("bash", True, id="simple"),
        pytest.param("A.b_c-D", True, id="mixed"),
        pytest.param("0", True, id="digit"),
        pytest.param("a" * 63, True, id="max-length"),
        pytest.param("a" * 64, False, id="too-long"),
        pytest.param("-a", False, id="leading-dash"),
        pytest.param("a_", False, id="trailing-underscore"),
        pytest.param(".a", False, id="leading-dot"),
        pytest.param("a b", False, id="space"),
        pytest.param("a/b", False, id="slash"),
        pytest.param("ä", False, id="non-ascii"),
    ],
)
def test_label_value(value: str, valid: bool) -> None:
    assert (label_value_problem(value) is None) is valid


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        pytest.param("runtime", True, id="name-only"),
        pytest.param("kruntimes.io/runtime-pod", True, id="prefixed"),
        pytest.param("app.kubernetes.io/Name_x.y", True, id="mixed-case-name"),
        pytest.param("a" * 63, True, id="name-max"),
        pytest.param(f"{'a' * 253}/x", True, id="prefix-max"),
        pytest.param("a" * 64, False, id="name-too-long"),
        pytest.param(f"{'a' * 254}/x", False, id="prefix-too-long"),
        pytest.param("", False, id="empty"),
        pytest.param("/name", False, id="empty-prefix"),
        pytest.param("example.com/", False, id="empty-name"),
        pytest.param("Example.com/name", False, id="uppercase-prefix"),
        pytest.param("a/b/c", False, id="two-slashes"),
        pytest.param("-name", False, id="leading-dash"),
        pytest.param("name.", False, id="trailing-dot"),
        pytest.param("na me", False, id="space"),
    ],
)
def test_qualified_name(value: str, valid: bool) -> None:
    assert (qualified_name_problem(value) is None) is valid


def test_require_raises_at_the_field() -> None:
    require(None, "name")
    with pytest.raises(ValidationError) as caught:
        require(dns1123_label_problem("Bad"), "name")
    assert caught.value.path == ("name",)
    assert "DNS-1123 label" in caught.value.rule


# --------------------------------------------------------------------------- child_name


@pytest.mark.parametrize(
    ("parts", "limit", "expected"),
    [
        pytest.param(("wf", "job"), 253, "wf-job", id="joined"),
        pytest.param(("single",), 253, "single", id="one-part"),
        pytest.param(("a" * 60, "bc"), 63, "a" * 60 + "-bc", id="exactly-at-limit"),
    ],
)
def test_child_name_short_names_are_joined(
    parts: tuple[str, ...], limit: int, expected: str
) -> None:
    assert child_name(*parts, limit=limit) == expected


LONG_CASES = [
    pytest.param(("a" * 200, "b" * 100), 253, id="subdomain-limit"),
    pytest.param(("workflow-" + "x" * 60, "job"), 63, id="label-limit"),
    pytest.param(("a" * 53, "b" * 20), 63, id="cut-on-dash"),
    pytest.param(("a" * 52, "b" * 20), 63, id="cut-just-after-dash"),
    pytest.param(("run.v1", "c" * 300), 253, id="dotted"),
    pytest.param(("p" * 30, "q" * 30), 20, id="small-limit"),
]


@pytest.mark.parametrize(("parts", "limit"), LONG_CASES)
def test_child_name_truncates_with_a_stable_hash(parts: tuple[str, ...], limit: int) -> None:
    joined = "-".join(parts)
    assert len(joined) > limit

    name = child_name(*parts, limit=limit)

    assert len(name) <= limit
    assert name.endswith("-" + sha256_hex(joined, 8))
    head = name[: -len("-" + sha256_hex(joined, 8))]
    assert joined.startswith(head)
    assert head == head.rstrip("-.")
    assert dns1123_subdomain_problem(name) is None
    assert child_name(*parts, limit=limit) == name


def test_child_name_differs_for_long_names_sharing_a_prefix() -> None:
    common = "shared-" + "x" * 300
    first = child_name(common, "one")
    second = child_name(common, "two")

    assert first != second
    assert first[:200] == second[:200]
    assert len(first) <= DNS1123_SUBDOMAIN_MAX
    assert len(second) <= DNS1123_SUBDOMAIN_MAX


def test_child_name_default_limit_is_the_subdomain_limit() -> None:
    assert len(child_name("a" * 300)) == DNS1123_SUBDOMAIN_MAX
    assert child_name("a" * 253) == "a" * 253


@pytest.mark.parametrize("limit", [0, 9, 15])
def test_child_name_refuses_a_limit_too_small_for_the_hash_suffix(limit: int) -> None:
    with pytest.raises(ValidationError, match="name limit must be >= 16"):
        child_name("a" * 40, limit=limit)
