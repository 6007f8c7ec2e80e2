"""The ``${{ ... }}`` expression language (spec workflows.md section 3)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kruntimes_core.core.errors import InvalidInputError, ValidationError
from kruntimes_core.workflows.expressions import (
    ALL_SCOPES,
    Context,
    ExpressionSyntaxError,
    InputRef,
    JobOutputRef,
    MissingValueError,
    Part,
    Ref,
    StepOutputRef,
    Template,
    parse_template,
    references,
    render,
)

INPUTS_ONLY = frozenset({"inputs"})

CONTEXT = Context(
    inputs={"x": "X", "name": "world", "empty": ""},
    steps={"test": {"tests": "passed"}, "a.b": {"k": "dotted"}, "quiet": {}},
    jobs={"build": {"image": "img:1"}, "lint": {}},
)


@pytest.mark.parametrize(
    ("text", "ref", "canonical"),
    [
        pytest.param("${{ inputs.x }}", InputRef("x"), "inputs.x", id="input"),
        pytest.param(
            "${{ steps.s.outputs.k }}", StepOutputRef("s", "k"), "steps.s.outputs.k", id="step"
        ),
        pytest.param(
            "${{ jobs.j.outputs.k }}", JobOutputRef("j", "k"), "jobs.j.outputs.k", id="job"
        ),
        pytest.param("${{ inputs._a-1_ }}", InputRef("_a-1_"), "inputs._a-1_", id="input-chars"),
        pytest.param(
            "${{ steps.a.b.outputs.k }}",
            StepOutputRef("a.b", "k"),
            "steps.a.b.outputs.k",
            id="dotted-step",
        ),
        pytest.param(
            "${{ jobs.x.outputs.y.outputs.k }}",
            JobOutputRef("x.outputs.y", "k"),
            "jobs.x.outputs.y.outputs.k",
            id="last-outputs-splits",
        ),
        pytest.param(
            "${{ steps.outputs.outputs.k }}",
            StepOutputRef("outputs", "k"),
            "steps.outputs.outputs.k",
            id="step-named-outputs",
        ),
        pytest.param(
            "${{ jobs.A_b-9.outputs.Key_1 }}",
            JobOutputRef("A_b-9", "Key_1"),
            "jobs.A_b-9.outputs.Key_1",
            id="job-label-chars",
        ),
        pytest.param(
            "${{ jobs." + "a" * 63 + ".outputs.k }}",
            JobOutputRef("a" * 63, "k"),
            "jobs." + "a" * 63 + ".outputs.k",
            id="job-name-63",
        ),
    ],
)
def test_each_reference_form_parses(text: str, ref: Ref, canonical: str) -> None:
    template = parse_template(text)

    assert template == Template((ref,))
    assert template.references == (ref,)
    assert not template.is_literal
    assert ref.text == canonical


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("${{inputs.x}}", id="none"),
        pytest.param("${{ inputs.x }}", id="single"),
        pytest.param("${{   inputs.x   }}", id="many"),
        pytest.param("${{inputs.x   }}", id="right-only"),
        pytest.param("${{\tinputs.x\n}}", id="tab-newline"),
        pytest.param("${{\r\n inputs.x \x0b\x0c}}", id="all-ascii-whitespace"),
    ],
)
def test_whitespace_inside_the_braces_is_ignored(text: str) -> None:
    assert references(text) == (InputRef("x"),)
    assert render(text, CONTEXT) == "X"


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        pytest.param("", (), id="empty"),
        pytest.param("plain text", ("plain text",), id="plain"),
        pytest.param("echo $HOME ${PATH}", ("echo $HOME ${PATH}",), id="shell-dollars"),
        pytest.param("$", ("$",), id="lone-dollar"),
        pytest.param("{{", ("{{",), id="lone-open-braces"),
        pytest.param("}}", ("}}",), id="lone-close-braces"),
        pytest.param("${ inputs.x }", ("${ inputs.x }",), id="single-brace"),
        pytest.param("$ {{ inputs.x }}", ("$ {{ inputs.x }}",), id="space-after-dollar"),
        pytest.param("{{ inputs.x }}", ("{{ inputs.x }}",), id="no-dollar"),
        pytest.param("${", ("${",), id="dollar-brace"),
        pytest.param("a }} b {{ c $", ("a }} b {{ c $",), id="mixed"),
    ],
)
def test_text_outside_expressions_is_literal(text: str, parts: tuple[Part, ...]) -> None:
    template = parse_template(text)

    assert template.parts == parts
    assert template.is_literal
    assert template.references == ()
    assert render(text, Context()) == text


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        pytest.param(
            "a ${{ inputs.x }} b ${{ steps.test.outputs.tests }}${{ jobs.build.outputs.image }}!",
            (
                "a ",
                InputRef("x"),
                " b ",
                StepOutputRef("test", "tests"),
                JobOutputRef("build", "image"),
                "!",
            ),
            id="mixed-scopes",
        ),
        pytest.param(
            "${{ inputs.x }}${{ inputs.x }}", (InputRef("x"), InputRef("x")), id="repeated"
        ),
        pytest.param("$${{ inputs.x }}", ("$", InputRef("x")), id="dollar-before"),
        pytest.param("${${{ inputs.x }}", ("${", InputRef("x")), id="dollar-brace-before"),
        pytest.param("${{ inputs.x }}}", (InputRef("x"), "}"), id="brace-after"),
        pytest.param(
            "x=${{inputs.x}}\ny=${{ inputs.name }}\n",
            ("x=", InputRef("x"), "\ny=", InputRef("name"), "\n"),
            id="multi-line-script",
        ),
    ],
)
def test_several_references_in_one_string(text: str, parts: tuple[Part, ...]) -> None:
    template = parse_template(text)

    assert template.parts == parts
    assert template.references == tuple(p for p in parts if not isinstance(p, str))


def test_mixed_scopes_render_in_order() -> None:
    text = "a ${{ inputs.x }} b ${{ steps.test.outputs.tests }}${{ jobs.build.outputs.image }}!"

    assert render(text, CONTEXT) == "a X b passedimg:1!"


def test_empty_value_is_a_value() -> None:
    assert render("[${{ inputs.empty }}]", CONTEXT) == "[]"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("${{}}", 'invalid expression "${{}}": empty reference', id="empty"),
        pytest.param("${{   }}", 'invalid expression "${{   }}": empty reference', id="blank"),
        pytest.param(
            "${{ foo.x }}",
            'invalid expression "${{ foo.x }}": unknown scope "foo"; '
            "expected inputs, steps or jobs",
            id="unknown-scope",
        ),
        pytest.param(
            "${{ Inputs.x }}",
            'invalid expression "${{ Inputs.x }}": unknown scope "Inputs"; '
            "expected inputs, steps or jobs",
            id="scope-is-case-sensitive",
        ),
        pytest.param(
            "${{ outputs.x }}",
            'invalid expression "${{ outputs.x }}": unknown scope "outputs"; '
            "expected inputs, steps or jobs",
            id="outputs-scope",
        ),
        pytest.param(
            "${{ inputs }}",
            'invalid expression "${{ inputs }}": expected inputs.<name>',
            id="input-without-name",
        ),
        pytest.param(
            "${{ inputs. }}",
            'invalid expression "${{ inputs. }}": expected inputs.<name>',
            id="input-empty-name",
        ),
        pytest.param(
            "${{ inputs.1x }}",
            'invalid expression "${{ inputs.1x }}": input name "1x" must match '
            "[A-Za-z_][A-Za-z0-9_-]*",
            id="input-name-digit-first",
        ),
        pytest.param(
            "${{ inputs.a.b }}",
            'invalid expression "${{ inputs.a.b }}": input name "a.b" must match '
            "[A-Za-z_][A-Za-z0-9_-]*",
            id="input-name-dot",
        ),
        pytest.param(
            "${{ inputs. x }}",
            'invalid expression "${{ inputs. x }}": input name " x" must match '
            "[A-Za-z_][A-Za-z0-9_-]*",
            id="inner-whitespace",
        ),
        pytest.param(
            "${{ inputs.x y }}",
            'invalid expression "${{ inputs.x y }}": input name "x y" must match '
            "[A-Za-z_][A-Za-z0-9_-]*",
            id="two-words",
        ),
        pytest.param(
            "${{ steps }}",
            'invalid expression "${{ steps }}": expected steps.<step>.outputs.<key>',
            id="steps-alone",
        ),
        pytest.param(
            "${{ steps.s }}",
            'invalid expression "${{ steps.s }}": expected steps.<step>.outputs.<key>',
            id="step-without-outputs",
        ),
        pytest.param(
            "${{ steps.s.outputs }}",
            'invalid expression "${{ steps.s.outputs }}": expected steps.<step>.outputs.<key>',
            id="step-without-key",
        ),
        pytest.param(
            "${{ steps.outputs.k }}",
            'invalid expression "${{ steps.outputs.k }}": expected steps.<step>.outputs.<key>',
            id="step-without-name",
        ),
        pytest.param(
            "${{ jobs.j.artifacts.k }}",
            'invalid expression "${{ jobs.j.artifacts.k }}": expected jobs.<job>.outputs.<key>',
            id="job-artifacts",
        ),
        pytest.param(
            "${{ steps..outputs.k }}",
            'invalid expression "${{ steps..outputs.k }}": step name "" must not be empty',
            id="step-empty-name",
        ),
        pytest.param(
            "${{ steps.s.outputs. }}",
            'invalid expression "${{ steps.s.outputs. }}": output key "" must match '
            "[A-Za-z_][A-Za-z0-9_-]*",
            id="step-empty-key",
        ),
        pytest.param(
            "${{ jobs.j.outputs.k.x }}",
            'invalid expression "${{ jobs.j.outputs.k.x }}": output key "k.x" must match '
            "[A-Za-z_][A-Za-z0-9_-]*",
            id="job-key-dot",
        ),
        pytest.param(
            "${{ jobs.-j.outputs.k }}",
            'invalid expression "${{ jobs.-j.outputs.k }}": job name "-j" must be a label '
            "value (alphanumerics, '-', '_' or '.', alphanumeric at both ends)",
            id="job-name-leading-dash",
        ),
        pytest.param(
            "${{ steps.a..outputs.k }}",
            'invalid expression "${{ steps.a..outputs.k }}": step name "a." must be a label '
            "value (alphanumerics, '-', '_' or '.', alphanumeric at both ends)",
            id="step-name-trailing-dot",
        ),
        pytest.param(
            "${{ steps.a/b.outputs.k }}",
            'invalid expression "${{ steps.a/b.outputs.k }}": step name "a/b" must be a label '
            "value (alphanumerics, '-', '_' or '.', alphanumeric at both ends)",
            id="step-name-slash",
        ),
        pytest.param(
            "${{ jobs." + "a" * 64 + ".outputs.k }}",
            'invalid expression "${{ jobs.'
            + "a" * 48
            + '...": job name "'
            + "a" * 57
            + '..." must be no more than 63 characters',
            id="job-name-64-long-message-cut",
        ),
        pytest.param(
            'x ${{ inputs."a" }}',
            'invalid expression "${{ inputs.\\"a\\" }}": input name "\\"a\\"" must match '
            "[A-Za-z_][A-Za-z0-9_-]*",
            id="quotes-escaped",
        ),
        pytest.param(
            "echo ${{ inputs.x",
            'unterminated expression "${{ inputs.x": no closing "}}"',
            id="unterminated",
        ),
        pytest.param(
            "${{ inputs.x } }",
            'unterminated expression "${{ inputs.x } }": no closing "}}"',
            id="split-close",
        ),
        pytest.param(
            "ok ${{ inputs.x }} then ${{",
            'unterminated expression "${{": no closing "}}"',
            id="unterminated-after-valid",
        ),
        pytest.param(
            "${{ inputs.x\n" + "y" * 100,
            'unterminated expression "${{ inputs.x\\n' + "y" * 44 + '...": no closing "}}"',
            id="unterminated-cut-and-escaped",
        ),
        pytest.param(
            "${{ inputs.a ${{ inputs.b }}",
            'invalid expression "${{ inputs.a ${{ inputs.b }}": "${{" inside an expression',
            id="nested-open",
        ),
        pytest.param(
            "${{ ${{ inputs.b }} }}",
            'invalid expression "${{ ${{ inputs.b }}": "${{" inside an expression',
            id="nested",
        ),
    ],
)
def test_syntax_errors(text: str, message: str) -> None:
    with pytest.raises(ExpressionSyntaxError) as caught:
        parse_template(text)

    assert str(caught.value) == message
    assert caught.value.path == ()
    assert isinstance(caught.value, ValidationError)
    with pytest.raises(ExpressionSyntaxError):
        render(text, CONTEXT)
    with pytest.raises(ExpressionSyntaxError):
        references(text)


def test_syntax_error_takes_the_callers_path() -> None:
    with pytest.raises(ExpressionSyntaxError) as caught:
        references("${{ nope }}")

    moved = caught.value.within("spec", "jobs", "build", "steps", 0, "run")

    assert isinstance(moved, ExpressionSyntaxError)
    assert str(moved) == (
        'spec.jobs.build.steps[0].run: invalid expression "${{ nope }}": '
        'unknown scope "nope"; expected inputs, steps or jobs'
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("${{ inputs.y }}", 'no input "y"', id="input"),
        pytest.param(
            "${{ steps.test.outputs.other }}", 'no output "other" in step "test"', id="step-key"
        ),
        pytest.param(
            "${{ steps.quiet.outputs.k }}", 'no output "k" in step "quiet"', id="step-no-outputs"
        ),
        pytest.param(
            "${{ steps.ghost.outputs.tests }}",
            'no output "tests" in step "ghost"',
            id="step-absent",
        ),
        pytest.param("${{ jobs.build.outputs.k }}", 'no output "k" in job "build"', id="job-key"),
        pytest.param("${{ jobs.lint.outputs.k }}", 'no output "k" in job "lint"', id="job-empty"),
        pytest.param(
            "${{ jobs.ghost.outputs.k }}", 'no output "k" in job "ghost"', id="job-absent"
        ),
        pytest.param(
            "${{ steps.a.outputs.k }}", 'no output "k" in step "a"', id="dotted-prefix-is-not-a"
        ),
        pytest.param(
            "${{ inputs.x }} ${{ inputs.y }} ${{ inputs.z }}",
            'no input "y"',
            id="first-missing-wins",
        ),
    ],
)
def test_missing_values_raise(text: str, message: str) -> None:
    with pytest.raises(MissingValueError) as caught:
        render(text, CONTEXT)

    assert str(caught.value) == message
    assert caught.value.rule == message
    assert isinstance(caught.value, InvalidInputError)
    assert not isinstance(caught.value, ValidationError)


def test_missing_output_message_nests_as_the_spec_shows() -> None:
    with pytest.raises(MissingValueError) as caught:
        render("${{ steps.test.outputs.tests }}", Context(steps={"test": {}}))

    assert str(caught.value.within("outputs", "tests")) == (
        'outputs.tests: no output "tests" in step "test"'
    )


PARTIAL = (
    "run ${{ inputs.x }} with ${{ steps.test.outputs.tests }} "
    "and ${{jobs.build.outputs.image}} for ${{inputs.name}}"
)


@pytest.mark.parametrize(
    ("scopes", "expected"),
    [
        pytest.param(
            INPUTS_ONLY,
            "run X with ${{ steps.test.outputs.tests }} "
            "and ${{ jobs.build.outputs.image }} for world",
            id="inputs",
        ),
        pytest.param(
            frozenset({"steps", "jobs"}),
            "run ${{ inputs.x }} with passed and img:1 for ${{ inputs.name }}",
            id="steps-and-jobs",
        ),
        pytest.param(
            frozenset({"jobs"}),
            "run ${{ inputs.x }} with ${{ steps.test.outputs.tests }} "
            "and img:1 for ${{ inputs.name }}",
            id="jobs",
        ),
        pytest.param(
            frozenset(),
            "run ${{ inputs.x }} with ${{ steps.test.outputs.tests }} "
            "and ${{ jobs.build.outputs.image }} for ${{ inputs.name }}",
            id="none-canonicalises",
        ),
        pytest.param(ALL_SCOPES, "run X with passed and img:1 for world", id="all"),
    ],
)
def test_partial_rendering_leaves_other_scopes_verbatim(
    scopes: frozenset[str], expected: str
) -> None:
    once = render(PARTIAL, CONTEXT, scopes=scopes)

    assert once == expected
    assert render(once, CONTEXT, scopes=scopes) == once
    assert render(once, CONTEXT) == render(PARTIAL, CONTEXT)


def test_partial_rendering_does_not_look_up_other_scopes() -> None:
    text = "${{ inputs.x }} ${{ steps.nowhere.outputs.k }} ${{ jobs.nowhere.outputs.k }}"

    assert render(text, Context(inputs={"x": "1"}), scopes=INPUTS_ONLY) == (
        "1 ${{ steps.nowhere.outputs.k }} ${{ jobs.nowhere.outputs.k }}"
    )


def test_partial_rendering_still_rejects_bad_syntax_in_any_scope() -> None:
    with pytest.raises(ExpressionSyntaxError):
        render("${{ inputs.x }} ${{ steps.s }}", CONTEXT, scopes=INPUTS_ONLY)


def test_unknown_scope_names_are_rejected() -> None:
    with pytest.raises(ValidationError) as caught:
        render("${{ inputs.x }}", CONTEXT, scopes=frozenset({"input", "steps"}))

    assert str(caught.value) == 'unknown scope "input"; expected inputs, steps or jobs'


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("${{ inputs.x }}", id="expression"),
        pytest.param("${{ steps.test.outputs.tests }}", id="other-scope"),
        pytest.param("${{", id="unterminated"),
        pytest.param("${{ nonsense }}", id="invalid"),
    ],
)
def test_inserted_values_are_not_expanded_again(value: str) -> None:
    context = Context(inputs={"v": value, "x": "X"}, steps={"s": {"k": value}})

    assert render("<${{ inputs.v }}>", context) == f"<{value}>"
    assert render("<${{ steps.s.outputs.k }}>", context) == f"<{value}>"
    assert render("${{ inputs.v }}${{ inputs.x }}", context) == f"{value}X"


def test_template_renders_many_times() -> None:
    template = parse_template("hello ${{ inputs.name }}")

    assert template.render(Context(inputs={"name": "a"})) == "hello a"
    assert template.render(Context(inputs={"name": "b"})) == "hello b"


def test_references_are_values() -> None:
    assert InputRef("x") == InputRef("x")
    assert hash(StepOutputRef("s", "k")) == hash(StepOutputRef("s", "k"))
    step: Ref = StepOutputRef("s", "k")
    job: Ref = JobOutputRef("s", "k")
    assert step != job
    assert {InputRef("x").scope, StepOutputRef("s", "k").scope, JobOutputRef("j", "k").scope} == (
        ALL_SCOPES
    )


@pytest.mark.parametrize(
    ("build", "message"),
    [
        pytest.param(lambda: InputRef("a b"), 'input name "a b" must match', id="input"),
        pytest.param(lambda: StepOutputRef("", "k"), 'step name "" must not be empty', id="step"),
        pytest.param(lambda: JobOutputRef("j", "9"), 'output key "9" must match', id="job-key"),
    ],
)
def test_references_validate_in_their_constructors(build: Callable[[], Ref], message: str) -> None:
    with pytest.raises(ExpressionSyntaxError, match=message):
        build()


def test_long_text_parses_in_linear_time() -> None:
    # Quadratic scanning would take minutes here; linear takes milliseconds.
    many_dollars = "${" * 200_000 + "{ inputs.x }}"
    many_refs = "${{ inputs.x }}" * 50_000

    assert references(many_dollars) == (InputRef("x"),)
    assert len(references(many_refs)) == 50_000
    with pytest.raises(ExpressionSyntaxError):
        parse_template("${{" + " " * 500_000)
    with pytest.raises(ExpressionSyntaxError):
        parse_template("${{ steps." + "a." * 200_000 + "outputs.k }}")


def test_a_later_stage_scans_what_an_earlier_one_inserted() -> None:
    # Documented caveat: with no escape syntax, an empty value between "$"
    # and "{{" forms an expression the next stage will evaluate.
    context = Context(inputs={"v": ""}, steps={"s": {"k": "K"}})

    staged = render("$${{ inputs.v }}{{ steps.s.outputs.k }}", context, scopes=INPUTS_ONLY)

    assert staged == "${{ steps.s.outputs.k }}"
    assert render(staged, context) == "K"
