"""Properties of the ``${{ ... }}`` expression language (spec workflows.md section 3)."""

from __future__ import annotations

from hypothesis import assume, given
from hypothesis import strategies as st

from kruntimes_core.workflows.expressions import (
    ALL_SCOPES,
    Context,
    ExpressionSyntaxError,
    InputRef,
    JobOutputRef,
    MissingValueError,
    Ref,
    StepOutputRef,
    parse_template,
    render,
)

# Characters that take part in the syntax are drawn often, so pieces touch
# expressions in every way ("$" right before "${{", "}" right after "}}").
_TRICKY = st.sampled_from(["$", "{", "}", "{{", "}}", "${", ".", " ", "\n", "inputs", "steps"])
_LITERAL = st.lists(_TRICKY | st.characters(), max_size=12).map("".join)
literals = _LITERAL.filter(lambda text: "${{" not in text)

keys = st.from_regex(r"[A-Za-z_][A-Za-z0-9_-]{0,10}", fullmatch=True)
labels = st.from_regex(r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,10}[A-Za-z0-9])?", fullmatch=True)
refs: st.SearchStrategy[Ref] = st.one_of(
    st.builds(InputRef, keys),
    st.builds(StepOutputRef, labels, keys),
    st.builds(JobOutputRef, labels, keys),
)
_SPACE = st.text(alphabet=" \t\n", max_size=3)
values = st.text(max_size=8)


@st.composite
def expressions(draw: st.DrawFn, ref: Ref) -> str:
    """``ref`` written with random whitespace inside the braces."""
    return f"${{{{{draw(_SPACE)}{ref.text}{draw(_SPACE)}}}}}"


@st.composite
def templates(draw: st.DrawFn) -> tuple[list[str], list[Ref], str]:
    """Literal pieces, the refs between them, and the joined text."""
    chosen = draw(st.lists(refs, max_size=6))
    pieces = [draw(literals) for _ in range(len(chosen) + 1)]
    text = pieces[0]
    for ref, piece in zip(chosen, pieces[1:], strict=True):
        text += draw(expressions(ref)) + piece
    return pieces, chosen, text


def _context(mapping: dict[Ref, str]) -> Context:
    """A context holding exactly the values of ``mapping``."""
    inputs: dict[str, str] = {}
    steps: dict[str, dict[str, str]] = {}
    jobs: dict[str, dict[str, str]] = {}
    for ref, value in mapping.items():
        if isinstance(ref, InputRef):
            inputs[ref.name] = value
        elif isinstance(ref, StepOutputRef):
            steps.setdefault(ref.step, {})[ref.key] = value
        else:
            jobs.setdefault(ref.job, {})[ref.key] = value
    return Context(inputs=inputs, steps=steps, jobs=jobs)


def _markers(chosen: list[Ref]) -> dict[Ref, str]:
    # One distinct marker per distinct ref, so a swapped or dropped ref shows.
    return {ref: f"\x00{index}\x00" for index, ref in enumerate(dict.fromkeys(chosen))}


@given(templates())
def test_parse_round_trips_literals_and_references(
    template: tuple[list[str], list[Ref], str],
) -> None:
    pieces, chosen, text = template
    markers = _markers(chosen)

    parsed = parse_template(text)
    rendered = render(text, _context(markers))

    assert parsed.references == tuple(chosen)
    assert parsed.is_literal == (not chosen)
    expected = pieces[0] + "".join(markers[r] + p for r, p in zip(chosen, pieces[1:], strict=True))
    assert rendered == expected
    assert [part for part in parsed.parts if isinstance(part, str)] == [p for p in pieces if p]


def _kept_references(staged: str) -> tuple[Ref, ...] | None:
    try:
        return parse_template(staged).references
    except ExpressionSyntaxError:
        return None


@given(templates(), st.data())
def test_staged_rendering_equals_one_pass(
    template: tuple[list[str], list[Ref], str], data: st.DataObject
) -> None:
    _pieces, chosen, text = template
    context = _context({ref: data.draw(values) for ref in chosen})
    inputs_only = frozenset({"inputs"})

    staged = render(text, context, scopes=inputs_only)

    # Staging is exact only when no inserted value forms a new "${{", on its
    # own or with the text around it ("$" + "" + "{{ ..."): the module caveat.
    kept = tuple(ref for ref in chosen if not isinstance(ref, InputRef))
    assume(_kept_references(staged) == kept)
    assert render(staged, context, scopes=inputs_only) == staged
    assert render(staged, context) == render(text, context)
    assert render(render(text, context, scopes=frozenset()), context) == render(text, context)


@given(templates(), st.data())
def test_render_fails_exactly_when_a_value_is_missing(
    template: tuple[list[str], list[Ref], str], data: st.DataObject
) -> None:
    _pieces, chosen, text = template
    known = {ref: data.draw(values) for ref in chosen if data.draw(st.booleans())}

    try:
        render(text, _context(known))
    except MissingValueError:
        assert not set(chosen) <= set(known)
    else:
        assert set(chosen) <= set(known)


# Fragments of the grammar, so arbitrary text often comes close to an expression.
_FRAGMENTS = st.sampled_from(
    ["${{", "}}", " ", "inputs.x", "inputs.", "steps.s", ".outputs.", "k", "jobs.j", "-", "."]
)
arbitrary = st.lists(_FRAGMENTS | _TRICKY | st.characters(), max_size=20).map("".join)


@given(arbitrary, st.sampled_from([ALL_SCOPES, frozenset({"inputs"}), frozenset()]))
def test_render_raises_only_expression_errors_on_arbitrary_text(
    text: str, scopes: frozenset[str]
) -> None:
    context = Context(inputs={"x": "1"}, steps={"s": {"k": "2"}}, jobs={"j": {"k": "3"}})
    try:
        result = render(text, context, scopes=scopes)
    except (ExpressionSyntaxError, MissingValueError):
        return
    if "${{" not in text:
        assert result == text
