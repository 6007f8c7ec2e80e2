"""Properties of Kubernetes label selectors (spec workspaces.md section 4).

Keys and values come from a tiny alphabet so that random label sets hit and
miss random selectors about equally often.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs
from hypothesis import event, given, settings
from hypothesis import strategies as st

from kruntimes_core.adapters.kubernetes.convert import from_json, to_json
from kruntimes_core.core.selectors import (
    LabelSelector,
    LabelSelectorRequirement,
    SelectorOperator,
    matches,
    selector_key,
)

KEYS = ("a", "b", "c", "x.io/a")
VALUES = ("", "1", "2")

keys = st.sampled_from(KEYS)
values = st.sampled_from(VALUES)
label_sets = st.dictionaries(keys, values, max_size=len(KEYS))


@st.composite
def requirements(draw: st.DrawFn) -> LabelSelectorRequirement:
    operator = draw(st.sampled_from(SelectorOperator))
    if operator in (SelectorOperator.IN, SelectorOperator.NOT_IN):
        chosen = tuple(draw(st.lists(values, min_size=1, max_size=4)))  # repeats allowed
    else:
        chosen = ()
    return LabelSelectorRequirement(draw(keys), operator, chosen)


selectors = st.builds(
    LabelSelector,
    st.dictionaries(keys, values, max_size=2),
    st.lists(requirements(), max_size=3).map(tuple),
)


@st.composite
def cases(draw: st.DrawFn) -> tuple[LabelSelector | None, dict[str, str]]:
    """A selector (sometimes missing) and labels that often satisfy its matchLabels."""
    selector = draw(st.none() | selectors)
    labels = draw(label_sets)
    if selector is not None and draw(st.booleans()):
        labels.update(selector.match_labels)
    return selector, labels


def oracle(selector: LabelSelector | None, labels: Mapping[str, str]) -> bool:
    """The semantics, transcribed plainly from the spec and Kubernetes."""
    if selector is None:
        return False  # a missing selector matches nothing
    for key, value in selector.match_labels.items():
        if key not in labels or labels[key] != value:
            return False
    for requirement in selector.match_expressions:
        key, present = requirement.key, requirement.key in labels
        match requirement.operator:
            case SelectorOperator.IN:
                holds = present and labels[key] in requirement.values
            case SelectorOperator.NOT_IN:
                holds = not present or labels[key] not in requirement.values
            case SelectorOperator.EXISTS:
                holds = present
            case SelectorOperator.DOES_NOT_EXIST:
                holds = not present
        if not holds:
            return False
    return True


@settings(max_examples=1000, deadline=None)
@given(cases())
def test_matches_agrees_with_the_oracle(case: tuple[LabelSelector | None, dict[str, str]]) -> None:
    selector, labels = case
    expected = oracle(selector, labels)
    event("missing selector" if selector is None else f"matches={expected}")
    assert matches(selector, labels) is expected


@settings(max_examples=300, deadline=None)
@given(selectors, label_sets)
def test_the_compiled_form_survives_evolve_and_the_wire(
    selector: LabelSelector, labels: dict[str, str]
) -> None:
    rebuilt = attrs.evolve(selector, match_expressions=selector.match_expressions[::-1])
    again = from_json(LabelSelector, to_json(selector))
    assert again == selector
    assert hash(again) == hash(selector)
    assert matches(rebuilt, labels) is matches(again, labels) is oracle(selector, labels)


@st.composite
def shuffled(draw: st.DrawFn, selector: LabelSelector) -> LabelSelector:
    """``selector`` with expressions, each one's values and matchLabels reordered."""
    expressions = [
        attrs.evolve(r, values=tuple(draw(st.permutations(r.values))))
        for r in draw(st.permutations(selector.match_expressions))
    ]
    labels = dict(draw(st.permutations(list(selector.match_labels.items()))))
    return LabelSelector(labels, tuple(expressions))


@settings(max_examples=500, deadline=None)
@given(st.data(), selectors, label_sets)
def test_selector_key_ignores_order(
    data: st.DataObject, selector: LabelSelector, labels: dict[str, str]
) -> None:
    other = data.draw(shuffled(selector))
    assert selector_key(other) == selector_key(selector)
    assert hash(selector_key(other)) == hash(selector_key(selector))
    assert matches(other, labels) is matches(selector, labels)


@settings(max_examples=500, deadline=None)
@given(selectors, selectors, label_sets)
def test_equal_keys_mean_equal_meaning(
    one: LabelSelector, two: LabelSelector, labels: dict[str, str]
) -> None:
    if selector_key(one) == selector_key(two):
        assert matches(one, labels) is matches(two, labels)
    if one == two:
        assert hash(one) == hash(two)
        assert selector_key(one) == selector_key(two)
