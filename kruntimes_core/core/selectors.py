"""Kubernetes label selectors (spec workspaces.md section 4, "Placement").

The shape and the meaning are Kubernetes' own (apimachinery
``metav1.LabelSelector`` read through ``metav1.LabelSelectorAsSelector``):

- A selector is ``matchLabels`` AND every one of ``matchExpressions``; a
  ``matchLabels`` entry ``k: v`` means "key ``k`` present with value ``v``".
- ``In``: the key is present and its value is one of ``values``.
- ``NotIn``: the key is absent, OR its value is not one of ``values``.
- ``Exists``: the key is present (any value). ``DoesNotExist``: it is absent.
- ``In``/``NotIn`` need at least one value; ``Exists``/``DoesNotExist`` take
  none. Keys are qualified names, values are label values.

Nil and empty differ, as in Kubernetes: a *missing* selector (``None``)
matches nothing, while an *empty* one (``LabelSelector()``, no labels and no
expressions) matches everything. Callers keep ``LabelSelector | None`` for
an optional selector field and pass it to :func:`matches` as it is.

Speed. The scheduler evaluates selectors millions of times, so each value is
compiled once, in ``__attrs_post_init__``, into private ``init=False``
fields (``eq=False, repr=False``, so equality, ``repr`` and hashing still see
only the public fields). Every rule becomes one triple ``(key, accepted,
negate)`` and fails exactly when ``(labels.get(key) in accepted) is negate``:

=============  ===================  ======
rule           ``accepted``         negate
=============  ===================  ======
``k: v``       ``{v}``              False
In             ``set(values)``      False
NotIn          ``set(values)``      True
Exists         ``{None}``           True
DoesNotExist   ``{None}``           False
=============  ===================  ======

(``None`` stands for "key absent": label values are strings, never None.)
:func:`matches` is then one loop of dict lookups and frozenset membership
tests, with no branching on operators. The selector also precomputes its
canonical :func:`selector_key` once; its ``__hash__`` is that key's hash, so
selectors are hashable even though ``matchLabels`` is a dict.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from attrs import field, frozen

from kruntimes_core.core.errors import ValidationError
from kruntimes_core.core.names import label_value_problem, qualified_name_problem


class SelectorOperator(StrEnum):
    IN = "In"
    NOT_IN = "NotIn"
    EXISTS = "Exists"
    DOES_NOT_EXIST = "DoesNotExist"


# One compiled rule: it fails when ``(labels.get(key) in accepted) is negate``.
_Check = tuple[str, frozenset[str | None], bool]
_ABSENT: frozenset[str | None] = frozenset({None})

RequirementKey = tuple[str, str, tuple[str, ...]]
SelectorKey = tuple[tuple[tuple[str, str], ...], tuple[RequirementKey, ...]]


def _operator(value: str) -> SelectorOperator:
    """Accept the operator's wire spelling too; anything else is invalid."""
    try:
        return SelectorOperator(value)
    except ValueError:
        raise ValidationError(
            f"not a valid selector operator (got {value!r})", ("operator",)
        ) from None


def _check_key(_instance: object, _attribute: object, key: str) -> None:
    problem = qualified_name_problem(key)
    if problem is not None:
        raise ValidationError(f"{problem} (got {key!r})", ("key",))


def _check_values(
    instance: LabelSelectorRequirement, _attribute: object, values: tuple[str, ...]
) -> None:
    # attrs runs validators after every field is set, so ``operator`` is final here.
    if instance.operator in (SelectorOperator.IN, SelectorOperator.NOT_IN):
        if not values:
            raise ValidationError(
                "must be specified when `operator` is 'In' or 'NotIn'", ("values",)
            )
    elif values:
        raise ValidationError(
            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'", ("values",)
        )
    for index, value in enumerate(values):
        problem = label_value_problem(value)
        if problem is not None:
            raise ValidationError(f"{problem} (got {value!r})", ("values", index))


@frozen
class LabelSelectorRequirement:
    """One of ``matchExpressions``: ``key``, ``operator`` and ``values``."""

    key: str = field(validator=_check_key)
    operator: SelectorOperator = field(converter=_operator)
    values: tuple[str, ...] = field(default=(), validator=_check_values)
    _check: _Check = field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        if self.operator in (SelectorOperator.IN, SelectorOperator.NOT_IN):
            accepted: frozenset[str | None] = frozenset(self.values)
        else:
            accepted = _ABSENT
        negate = self.operator in (SelectorOperator.NOT_IN, SelectorOperator.EXISTS)
        object.__setattr__(self, "_check", (self.key, accepted, negate))

    @property
    def canonical(self) -> RequirementKey:
        """``(key, operator, sorted distinct values)``: order-free identity."""
        return (self.key, self.operator.value, tuple(sorted(set(self.values))))


def _sorted_labels(value: Mapping[str, str]) -> dict[str, str]:
    """A private copy in key order: repr and wire output are then canonical."""
    return dict(sorted(value.items()))


def _check_match_labels(_instance: object, _attribute: object, labels: Mapping[str, str]) -> None:
    for key, value in labels.items():
        problem = qualified_name_problem(key)
        if problem is not None:
            raise ValidationError(f"{problem} (got {key!r})", ("matchLabels", key))
        problem = label_value_problem(value)
        if problem is not None:
            raise ValidationError(f"{problem} (got {value!r})", ("matchLabels", key))


@frozen
class LabelSelector:
    """``matchLabels`` AND ``matchExpressions``; empty matches every label set.

    A missing selector is ``None``, not an empty one (see the module docstring).
    """

    match_labels: Mapping[str, str] = field(
        factory=dict, converter=_sorted_labels, validator=_check_match_labels
    )
    match_expressions: tuple[LabelSelectorRequirement, ...] = ()
    _checks: tuple[_Check, ...] = field(init=False, eq=False, repr=False)
    _key: SelectorKey = field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        labels = tuple((k, frozenset({v}), False) for k, v in self.match_labels.items())
        expressions = tuple(requirement._check for requirement in self.match_expressions)
        object.__setattr__(self, "_checks", labels + expressions)
        canonical = tuple(sorted({r.canonical for r in self.match_expressions}))
        object.__setattr__(self, "_key", (tuple(self.match_labels.items()), canonical))

    def __hash__(self) -> int:
        # Equal selectors have equal keys, so this agrees with the generated __eq__.
        return hash(self._key)


def matches(selector: LabelSelector | None, labels: Mapping[str, str]) -> bool:
    """Whether ``labels`` satisfy ``selector``; a missing selector matches nothing."""
    if selector is None:
        return False
    get = labels.get
    # A plain loop: about twice as fast as all() over a generator (SIM110).
    for key, accepted, negate in selector._checks:  # noqa: SIM110
        if (get(key) in accepted) is negate:
            return False
    return True


def selector_key(selector: LabelSelector) -> SelectorKey:
    """A canonical, hashable, deterministic identity for grouping selectors.

    Sorted ``matchLabels`` items, then the distinct requirements sorted, each
    with its distinct values sorted. Selectors that differ only in the order
    (or repetition) of expressions or values get the same key, and selectors
    with the same key match exactly the same label sets. Precomputed: O(1).
    """
    return selector._key
