"""Kubernetes label selectors (spec workspaces.md section 4)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pytest

from kruntimes_core.adapters.kubernetes.convert import from_json, to_json
from kruntimes_core.core.errors import ValidationError
from kruntimes_core.core.selectors import (
    LabelSelector,
    LabelSelectorRequirement,
    SelectorOperator,
    matches,
    selector_key,
)
from kruntimes_core.resources.jsonvalue import JSONValue

IN, NOT_IN = SelectorOperator.IN, SelectorOperator.NOT_IN
EXISTS, DOES_NOT_EXIST = SelectorOperator.EXISTS, SelectorOperator.DOES_NOT_EXIST

LABEL_VALUE_RULE = (
    "must be a label value (alphanumerics, '-', '_' or '.', alphanumeric at both ends)"
)
NAME_PART_RULE = "name part must be alphanumerics, '-', '_' or '.', alphanumeric at both ends"
NEEDS_VALUES = "must be specified when `operator` is 'In' or 'NotIn'"
TAKES_NO_VALUES = "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"


def req(key: str, operator: SelectorOperator, *values: str) -> LabelSelectorRequirement:
    return LabelSelectorRequirement(key, operator, values)


def test_operator_wire_spellings() -> None:
    assert [op.value for op in SelectorOperator] == ["In", "NotIn", "Exists", "DoesNotExist"]


# --- nil versus empty -------------------------------------------------------


@pytest.mark.parametrize(
    ("selector", "labels", "expected"),
    [
        pytest.param(None, {}, False, id="nil-no-labels"),
        pytest.param(None, {"app": "web"}, False, id="nil-labels"),
        pytest.param(LabelSelector(), {}, True, id="empty-no-labels"),
        pytest.param(LabelSelector(), {"app": "web"}, True, id="empty-labels"),
        pytest.param(LabelSelector({}, ()), {"app": "web"}, True, id="empty-explicit"),
    ],
)
def test_nil_matches_nothing_and_empty_matches_everything(
    selector: LabelSelector | None, labels: Mapping[str, str], expected: bool
) -> None:
    assert matches(selector, labels) is expected


def test_nil_and_empty_differ_through_the_wire() -> None:
    empty = from_json(LabelSelector, {})
    assert empty == LabelSelector()
    assert matches(empty, {"anything": "at-all"}) is True
    assert matches(None, {"anything": "at-all"}) is False


# --- each operator, key present or absent -----------------------------------


@pytest.mark.parametrize(
    ("requirement", "labels", "expected"),
    [
        # In: key present and value among values.
        pytest.param(req("k", IN, "x", "y"), {"k": "x"}, True, id="in-first-value"),
        pytest.param(req("k", IN, "x", "y"), {"k": "y"}, True, id="in-second-value"),
        pytest.param(req("k", IN, "x", "y"), {"k": "z"}, False, id="in-other-value"),
        pytest.param(req("k", IN, "x", "y"), {}, False, id="in-missing-key"),
        pytest.param(req("k", IN, "x", "y"), {"j": "x"}, False, id="in-value-under-other-key"),
        pytest.param(req("k", IN, "x"), {"k": ""}, False, id="in-empty-value-not-listed"),
        pytest.param(req("k", IN, ""), {"k": ""}, True, id="in-empty-value-listed"),
        pytest.param(req("k", IN, ""), {}, False, id="in-empty-value-missing-key"),
        pytest.param(req("k", IN, "x"), {"k": "X"}, False, id="in-case-sensitive"),
        # NotIn: key absent, or value not among values.
        pytest.param(req("k", NOT_IN, "x", "y"), {"k": "x"}, False, id="notin-listed"),
        pytest.param(req("k", NOT_IN, "x", "y"), {"k": "y"}, False, id="notin-listed-second"),
        pytest.param(req("k", NOT_IN, "x", "y"), {"k": "z"}, True, id="notin-other-value"),
        pytest.param(req("k", NOT_IN, "x", "y"), {}, True, id="notin-missing-key"),
        pytest.param(req("k", NOT_IN, "x"), {"j": "x"}, True, id="notin-value-under-other-key"),
        pytest.param(req("k", NOT_IN, ""), {"k": ""}, False, id="notin-empty-value-listed"),
        pytest.param(req("k", NOT_IN, ""), {}, True, id="notin-empty-value-missing-key"),
        # Exists: key present, whatever the value.
        pytest.param(req("k", EXISTS), {"k": "x"}, True, id="exists-present"),
        pytest.param(req("k", EXISTS), {"k": ""}, True, id="exists-empty-value"),
        pytest.param(req("k", EXISTS), {}, False, id="exists-missing-key"),
        pytest.param(req("k", EXISTS), {"j": "k"}, False, id="exists-other-key"),
        # DoesNotExist: key absent.
        pytest.param(req("k", DOES_NOT_EXIST), {"k": "x"}, False, id="dne-present"),
        pytest.param(req("k", DOES_NOT_EXIST), {"k": ""}, False, id="dne-empty-value"),
        pytest.param(req("k", DOES_NOT_EXIST), {}, True, id="dne-missing-key"),
        pytest.param(req("k", DOES_NOT_EXIST), {"j": "k"}, True, id="dne-other-key"),
        # Prefixed keys are whole keys: the prefix is not matched on its own.
        pytest.param(req("a.io/k", EXISTS), {"a.io/k": "v"}, True, id="prefixed-present"),
        pytest.param(req("a.io/k", EXISTS), {"k": "v"}, False, id="prefixed-vs-bare"),
    ],
)
def test_each_operator(
    requirement: LabelSelectorRequirement, labels: Mapping[str, str], expected: bool
) -> None:
    assert matches(LabelSelector(match_expressions=(requirement,)), labels) is expected


@pytest.mark.parametrize(
    ("match_labels", "labels", "expected"),
    [
        pytest.param({"a": "1"}, {"a": "1"}, True, id="equal"),
        pytest.param({"a": "1"}, {"a": "1", "b": "2"}, True, id="extra-labels-ignored"),
        pytest.param({"a": "1"}, {"a": "2"}, False, id="other-value"),
        pytest.param({"a": "1"}, {}, False, id="missing-key"),
        pytest.param({"a": ""}, {"a": ""}, True, id="empty-value-present"),
        pytest.param({"a": ""}, {}, False, id="empty-value-missing-key"),
        pytest.param({"a": "1", "b": "2"}, {"a": "1", "b": "2"}, True, id="all-of-two"),
        pytest.param({"a": "1", "b": "2"}, {"a": "1"}, False, id="one-of-two-missing"),
        pytest.param({"a": "1", "b": "2"}, {"a": "1", "b": "3"}, False, id="one-of-two-differs"),
    ],
)
def test_match_labels_are_all_required(
    match_labels: Mapping[str, str], labels: Mapping[str, str], expected: bool
) -> None:
    assert matches(LabelSelector(match_labels), labels) is expected


WEB_IN_PROD = LabelSelector({"app": "web"}, (req("env", IN, "prod", "staging"),))
THREE_EXPRESSIONS = LabelSelector(
    match_expressions=(req("a", EXISTS), req("b", DOES_NOT_EXIST), req("c", NOT_IN, "x"))
)
CONTRADICTION = LabelSelector({"a": "1"}, (req("a", NOT_IN, "1"),))


@pytest.mark.parametrize(
    ("selector", "labels", "expected"),
    [
        # matchLabels AND matchExpressions.
        pytest.param(WEB_IN_PROD, {"app": "web", "env": "prod"}, True, id="and-both"),
        pytest.param(WEB_IN_PROD, {"app": "web", "env": "staging"}, True, id="and-both-second"),
        pytest.param(WEB_IN_PROD, {"app": "web", "env": "dev"}, False, id="and-expression-fails"),
        pytest.param(WEB_IN_PROD, {"app": "web"}, False, id="and-expression-key-missing"),
        pytest.param(WEB_IN_PROD, {"app": "db", "env": "prod"}, False, id="and-labels-fail"),
        pytest.param(WEB_IN_PROD, {"env": "prod"}, False, id="and-labels-key-missing"),
        # Several expressions, all ANDed.
        pytest.param(THREE_EXPRESSIONS, {"a": "1"}, True, id="exprs-all-hold"),
        pytest.param(THREE_EXPRESSIONS, {"a": "1", "c": "y"}, True, id="exprs-notin-other"),
        pytest.param(THREE_EXPRESSIONS, {}, False, id="exprs-exists-fails"),
        pytest.param(THREE_EXPRESSIONS, {"a": "1", "b": "2"}, False, id="exprs-dne-fails"),
        pytest.param(THREE_EXPRESSIONS, {"a": "1", "c": "x"}, False, id="exprs-notin-fails"),
        # The same key in matchLabels and an expression: both must hold.
        pytest.param(CONTRADICTION, {"a": "1"}, False, id="contradiction-value"),
        pytest.param(CONTRADICTION, {}, False, id="contradiction-missing"),
        pytest.param(CONTRADICTION, {"a": "2"}, False, id="contradiction-other"),
    ],
)
def test_everything_is_anded(
    selector: LabelSelector, labels: Mapping[str, str], expected: bool
) -> None:
    assert matches(selector, labels) is expected


def test_match_labels_are_a_private_sorted_copy() -> None:
    source = {"b": "2", "a": "1"}
    selector = LabelSelector(source)
    source["c"] = "3"
    source["a"] = "changed"
    assert dict(selector.match_labels) == {"a": "1", "b": "2"}
    assert list(selector.match_labels) == ["a", "b"]
    assert matches(selector, {"a": "1", "b": "2"}) is True


# --- validation -------------------------------------------------------------


@pytest.mark.parametrize(
    ("build", "path", "rule"),
    [
        pytest.param(lambda: req("k", IN), ("values",), NEEDS_VALUES, id="in-without-values"),
        pytest.param(
            lambda: req("k", NOT_IN), ("values",), NEEDS_VALUES, id="notin-without-values"
        ),
        pytest.param(
            lambda: req("k", EXISTS, "x"), ("values",), TAKES_NO_VALUES, id="exists-with-values"
        ),
        pytest.param(
            lambda: req("k", DOES_NOT_EXIST, "x"),
            ("values",),
            TAKES_NO_VALUES,
            id="dne-with-values",
        ),
        pytest.param(
            lambda: req("k", IN, "ok", "-bad"),
            ("values", 1),
            f"{LABEL_VALUE_RULE} (got '-bad')",
            id="bad-value-index",
        ),
        pytest.param(
            lambda: req("k", NOT_IN, "a" * 64),
            ("values", 0),
            f"must be no more than 63 characters (got {'a' * 64!r})",
            id="value-too-long",
        ),
        pytest.param(
            lambda: req("", EXISTS),
            ("key",),
            "name part must be 1..63 characters (got '')",
            id="empty-key",
        ),
        pytest.param(
            lambda: req("-k", EXISTS), ("key",), f"{NAME_PART_RULE} (got '-k')", id="bad-key"
        ),
        pytest.param(
            lambda: req("Bad_Prefix/k", EXISTS),
            ("key",),
            "prefix must be a DNS-1123 subdomain (got 'Bad_Prefix/k')",
            id="bad-key-prefix",
        ),
        pytest.param(
            lambda: LabelSelectorRequirement("k", "Equals", ("x",)),
            ("operator",),
            "not a valid selector operator (got 'Equals')",
            id="bad-operator",
        ),
        pytest.param(
            lambda: LabelSelector({"ok": "1", "a b": "1"}),
            ("matchLabels", "a b"),
            f"{NAME_PART_RULE} (got 'a b')",
            id="match-labels-bad-key",
        ),
        pytest.param(
            lambda: LabelSelector({"app": "web!"}),
            ("matchLabels", "app"),
            f"{LABEL_VALUE_RULE} (got 'web!')",
            id="match-labels-bad-value",
        ),
    ],
)
def test_validation_errors_from_the_constructors(
    build: Callable[[], object], path: tuple[str | int, ...], rule: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        build()
    assert (caught.value.path, caught.value.rule) == (path, rule)


@pytest.mark.parametrize(
    ("document", "where", "rule"),
    [
        pytest.param(
            {"matchExpressions": [{"key": "k", "operator": "In"}]},
            "matchExpressions[0].values",
            NEEDS_VALUES,
            id="in-without-values",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "k", "operator": "NotIn", "values": []}]},
            "matchExpressions[0].values",
            NEEDS_VALUES,
            id="notin-empty-values",
        ),
        pytest.param(
            {
                "matchExpressions": [
                    {"key": "k", "operator": "Exists"},
                    {"key": "k", "operator": "DoesNotExist", "values": ["x"]},
                ]
            },
            "matchExpressions[1].values",
            TAKES_NO_VALUES,
            id="dne-with-values-second",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "k", "operator": "In", "values": ["x", "y z"]}]},
            "matchExpressions[0].values[1]",
            f"{LABEL_VALUE_RULE} (got 'y z')",
            id="bad-value",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "k/", "operator": "Exists"}]},
            "matchExpressions[0].key",
            "name part must be 1..63 characters (got 'k/')",
            id="bad-key",
        ),
        pytest.param(
            {"matchExpressions": [{"operator": "Exists"}]},
            "matchExpressions[0].key",
            "is required",
            id="missing-key",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "k", "operator": "Equals", "values": ["x"]}]},
            "matchExpressions[0].operator",
            "must be one of In, NotIn, Exists, DoesNotExist (got 'Equals')",
            id="bad-operator",
        ),
        pytest.param(
            {"matchLabels": {"app": "-web"}},
            "matchLabels.app",
            f"{LABEL_VALUE_RULE} (got '-web')",
            id="match-labels-bad-value",
        ),
        pytest.param(
            {"matchLabels": {"/app": "web"}},
            "matchLabels./app",
            "prefix must be a DNS-1123 subdomain (got '/app')",
            id="match-labels-bad-key",
        ),
        pytest.param(
            {"matchLabels": {"app": 1}},
            "matchLabels.app",
            "must be a string (got 1)",
            id="match-labels-not-a-string",
        ),
    ],
)
def test_validation_errors_name_wire_paths(document: JSONValue, where: str, rule: str) -> None:
    with pytest.raises(ValidationError) as caught:
        from_json(LabelSelector, document)
    assert (str(caught.value), caught.value.rule) == (f"{where}: {rule}", rule)


def test_operator_accepts_its_wire_spelling() -> None:
    requirement = LabelSelectorRequirement("k", "NotIn", ("x",))
    assert requirement.operator is SelectorOperator.NOT_IN
    assert requirement == req("k", NOT_IN, "x")


# --- wire form, equality, repr ----------------------------------------------


def test_round_trip_through_the_wire_uses_camel_case() -> None:
    document: JSONValue = {
        "matchLabels": {"app": "web", "a.io/tier": "fe"},
        "matchExpressions": [
            {"key": "env", "operator": "In", "values": ["prod", "dev"]},
            {"key": "gpu", "operator": "DoesNotExist"},
        ],
    }
    selector = from_json(LabelSelector, document)
    assert selector == LabelSelector(
        {"app": "web", "a.io/tier": "fe"},
        (req("env", IN, "prod", "dev"), req("gpu", DOES_NOT_EXIST)),
    )
    assert to_json(selector) == {
        "matchLabels": {"a.io/tier": "fe", "app": "web"},
        "matchExpressions": [
            {"key": "env", "operator": "In", "values": ["prod", "dev"]},
            {"key": "gpu", "operator": "DoesNotExist"},
        ],
    }
    assert from_json(LabelSelector, to_json(selector)) == selector


def test_repr_and_equality_see_only_public_fields() -> None:
    one = LabelSelector({"b": "2", "a": "1"}, (req("k", IN, "x"),))
    two = LabelSelector({"a": "1", "b": "2"}, (req("k", IN, "x"),))
    assert one == two
    assert hash(one) == hash(two)
    assert (
        repr(one)
        == repr(two)
        == (
            "LabelSelector(match_labels={'a': '1', 'b': '2'}, match_expressions=("
            "LabelSelectorRequirement(key='k', operator=<SelectorOperator.IN: 'In'>, "
            "values=('x',)),))"
        )
    )
    assert hash(req("k", IN, "x")) == hash(req("k", IN, "x"))
    assert {one, two} == {one}


# --- selector_key -----------------------------------------------------------


@pytest.mark.parametrize(
    ("one", "two"),
    [
        pytest.param(LabelSelector(), LabelSelector({}, ()), id="empty"),
        pytest.param(
            LabelSelector({"a": "1", "b": "2"}),
            LabelSelector({"b": "2", "a": "1"}),
            id="match-labels-order",
        ),
        pytest.param(
            LabelSelector(match_expressions=(req("a", EXISTS), req("b", IN, "x"))),
            LabelSelector(match_expressions=(req("b", IN, "x"), req("a", EXISTS))),
            id="expression-order",
        ),
        pytest.param(
            LabelSelector(match_expressions=(req("a", NOT_IN, "x", "y", "z"),)),
            LabelSelector(match_expressions=(req("a", NOT_IN, "z", "x", "y"),)),
            id="value-order",
        ),
        pytest.param(
            LabelSelector(match_expressions=(req("a", IN, "x", "x", "y"),)),
            LabelSelector(match_expressions=(req("a", IN, "y", "x"),)),
            id="repeated-values",
        ),
        pytest.param(
            LabelSelector(match_expressions=(req("a", EXISTS), req("a", EXISTS))),
            LabelSelector(match_expressions=(req("a", EXISTS),)),
            id="repeated-expressions",
        ),
        pytest.param(
            LabelSelector({"app": "web"}, (req("k", IN, "b", "a"), req("j", DOES_NOT_EXIST))),
            from_json(
                LabelSelector,
                {
                    "matchExpressions": [
                        {"key": "j", "operator": "DoesNotExist"},
                        {"key": "k", "operator": "In", "values": ["a", "b"]},
                    ],
                    "matchLabels": {"app": "web"},
                },
            ),
            id="everything-reordered",
        ),
    ],
)
def test_selector_key_ignores_order(one: LabelSelector, two: LabelSelector) -> None:
    assert selector_key(one) == selector_key(two)
    assert hash(selector_key(one)) == hash(selector_key(two))


@pytest.mark.parametrize(
    ("one", "two"),
    [
        pytest.param(LabelSelector(), LabelSelector({"a": "1"}), id="empty-vs-labels"),
        pytest.param(LabelSelector({"a": "1"}), LabelSelector({"a": "2"}), id="label-value"),
        pytest.param(
            LabelSelector(match_expressions=(req("a", IN, "x"),)),
            LabelSelector(match_expressions=(req("a", NOT_IN, "x"),)),
            id="operator",
        ),
        pytest.param(
            LabelSelector(match_expressions=(req("a", IN, "x"),)),
            LabelSelector(match_expressions=(req("a", IN, "x", "y"),)),
            id="values",
        ),
        pytest.param(
            LabelSelector(match_expressions=(req("a", EXISTS),)),
            LabelSelector(match_expressions=(req("b", EXISTS),)),
            id="key",
        ),
    ],
)
def test_selector_key_tells_different_selectors_apart(
    one: LabelSelector, two: LabelSelector
) -> None:
    assert selector_key(one) != selector_key(two)


def test_selector_key_is_plain_sorted_data() -> None:
    selector = LabelSelector({"b": "2", "a": "1"}, (req("z", NOT_IN, "y", "x"), req("m", EXISTS)))
    assert selector_key(selector) == (
        (("a", "1"), ("b", "2")),
        (("m", "Exists", ()), ("z", "NotIn", ("x", "y"))),
    )
