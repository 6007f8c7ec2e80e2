"""Job graph validation (spec workflows.md section 2)."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from kruntimes_core.adapters.kubernetes.convert import from_json
from kruntimes_core.core.errors import ValidationError
from kruntimes_core.resources.jsonvalue import JSONValue
from kruntimes_core.workflows.graph import JobGraph
from kruntimes_core.workflows.spec import JobSpec, WorkflowRunSpec
from kruntimes_core.workflows.validation import parse_artifact_source, validate_jobs


def jobs(doc: Mapping[str, JSONValue]) -> Mapping[str, JobSpec]:
    return from_json(WorkflowRunSpec, {"jobs": dict(doc)}).jobs


def step(name: str = "s", run: str = "true", **extra: JSONValue) -> dict[str, JSONValue]:
    return {"name": name, "run": run, **extra}


def inline(*steps: dict[str, JSONValue], **extra: JSONValue) -> dict[str, JSONValue]:
    return {"runs-on": "bash", "steps": list(steps or (step(),)), **extra}


def test_a_valid_graph_returns_its_topological_order() -> None:
    graph = validate_jobs(
        jobs(
            {
                "deploy": inline(needs=["build", "test"]),
                "test": inline(needs=["build"]),
                "build": inline(),
            }
        )
    )
    assert graph.order == ("build", "test", "deploy")


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        pytest.param({}, "spec.jobs: must hold at least one job", id="no-jobs"),
        pytest.param(
            {"a": inline(needs=["a"])},
            "spec.jobs.a.needs[0]: job 'a' cannot need itself",
            id="self-dependency",
        ),
        pytest.param(
            {"a": inline(needs=["ghost"])},
            "spec.jobs.a.needs[0]: needs unknown job 'ghost'",
            id="unknown-need",
        ),
        pytest.param(
            {"a": inline(needs=["b", "b"]), "b": inline()},
            "spec.jobs.a.needs[1]: lists job 'b' twice",
            id="duplicate-need",
        ),
        pytest.param(
            {"b": inline(needs=["a"]), "a": inline(needs=["c"]), "c": inline(needs=["b"])},
            "spec.jobs: job dependency cycle: a -> c -> b -> a",
            id="cycle-named-from-the-smallest-job",
        ),
        pytest.param(
            {"a": {"uses": "lib", "runs-on": "bash"}},
            "spec.jobs.a.uses: a call job (uses) has no runs-on and no steps",
            id="both-forms",
        ),
        pytest.param(
            {"a": {"needs": []}}, "spec.jobs.a: an inline job needs runs-on", id="no-form"
        ),
        pytest.param(
            {"a": {**inline(), "with": {"x": "1"}}},
            "spec.jobs.a.with: with is only for call jobs",
            id="with-on-inline-job",
        ),
        pytest.param(
            {"a": {"runs-on": "bash", "steps": []}},
            "spec.jobs.a.steps: must hold 1..128 steps",
            id="no-steps",
        ),
        pytest.param(
            {"a": {"runs-on": "bash", "steps": [step(str(i)) for i in range(129)]}},
            "spec.jobs.a.steps: must hold 1..128 steps",
            id="too-many-steps",
        ),
        pytest.param(
            {"a": inline(step("x"), step("x"))},
            "spec.jobs.a.steps[1]: duplicate step name 'x'",
            id="duplicate-step",
        ),
        pytest.param(
            {"a": inline({"name": "x"})},
            "spec.jobs.a.steps[0]: a step needs run or args",
            id="empty-step",
        ),
        pytest.param(
            {"bad name": inline()},
            "spec.jobs.bad name: job name must be a label value",
            id="job-name-syntax",
        ),
        pytest.param(
            {"a": inline(step(run="echo ${{ jobs.b.outputs.k }}")), "b": inline()},
            "spec.jobs.a.steps[0].run: jobs.b.outputs.k: job 'b' is not a dependency of job 'a'",
            id="job-ref-not-a-dependency",
        ),
        pytest.param(
            {"a": inline(step("one", run="${{ steps.two.outputs.k }}"), step("two"))},
            "spec.jobs.a.steps[0].run: steps.two.outputs.k: step 'two' is not an earlier step",
            id="step-ref-to-a-later-step",
        ),
        pytest.param(
            {"a": inline(step(env={"X": "${{ inputs.who }}"}))},
            "spec.jobs.a.steps[0].env.X: inputs.who: no input 'who' is declared",
            id="undeclared-input",
        ),
        pytest.param(
            {"a": inline(step(run="${{ nonsense }}"))},
            "spec.jobs.a.steps[0].run",
            id="unparseable-expression",
        ),
        pytest.param(
            {
                "a": inline(needs=["b"]),
                "b": inline(needs=["c"]),
                "c": inline(),
                "d": inline(
                    step(artifacts=[{"from": "jobs.c.artifacts.x", "path": "x"}]), needs=["a"]
                ),
            },
            "spec.jobs.d.steps[0].artifacts[0].from: job 'c' must be a direct need of job 'd'",
            id="artifact-from-a-transitive-dependency",
        ),
        pytest.param(
            {"a": inline(step(artifacts=[{"from": "steps.x", "path": "x"}]))},
            "spec.jobs.a.steps[0].artifacts[0].from: must be jobs.<job>.artifacts.<name>",
            id="artifact-from-syntax",
        ),
    ],
)
def test_invalid_graphs_name_the_path_and_rule(doc: Mapping[str, JSONValue], message: str) -> None:
    with pytest.raises(ValidationError) as caught:
        validate_jobs(jobs(doc))
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("path", "message"),
    [
        pytest.param("../x", "must not contain a '..' segment", id="dotdot"),
        pytest.param("/etc/passwd", "must be a relative path", id="absolute"),
        pytest.param("a//b", "must be normalised", id="not-normalised"),
        pytest.param("", "must not be empty", id="empty"),
    ],
)
def test_artifact_paths_are_checked_when_read(path: str, message: str) -> None:
    artifact: JSONValue = {"from": "jobs.b.artifacts.x", "path": path}
    with pytest.raises(ValidationError) as caught:
        jobs({"a": inline(step(artifacts=[artifact]))})
    assert "jobs.a.steps[0].artifacts[0].path: " + message in str(caught.value)


def test_references_that_follow_the_rules_are_accepted() -> None:
    validate_jobs(
        jobs(
            {
                "build": inline(
                    step("test", run="echo tests=passed >> $KRUNTIME_OUTPUTS"),
                    step("use", run="echo ${{ steps.test.outputs.tests }}"),
                    outputs={"tests": "${{ steps.use.outputs.tests }}"},
                ),
                "mid": inline(needs=["build"]),
                "deploy": inline(
                    step(
                        env={"T": "${{ jobs.build.outputs.tests }}"},
                        artifacts=[{"from": "jobs.mid.artifacts.dist.tgz", "path": "dist.tgz"}],
                    ),
                    needs=["mid"],
                ),
            }
        ),
        inputs=(),
    )


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("jobs.build.artifacts.dist.tgz", ("build", "dist.tgz")),
        ("jobs.a.b.artifacts.x", ("a.b", "x")),
        ("jobs.build.artifacts.", None),
        ("steps.build.artifacts.x", None),
        ("jobs..artifacts.x", None),
    ],
)
def test_parse_artifact_source(text: str, parsed: tuple[str, str] | None) -> None:
    assert parse_artifact_source(text) == parsed


def test_the_graph_answers_transitive_dependency_questions() -> None:
    graph = JobGraph.build({"a": ["b"], "b": ["c"], "c": [], "d": []})
    assert graph.depends_on("a", "c")
    assert not graph.depends_on("c", "a")
    assert not graph.depends_on("a", "d")
    assert graph.dependents("c") == ("b",)
    assert graph.order == ("c", "b", "a", "d")


def test_the_cycle_message_is_the_same_whatever_the_key_order() -> None:
    messages = set()
    for order in (["a", "b", "c"], ["c", "b", "a"], ["b", "c", "a"]):
        needs = {"a": ["b"], "b": ["c"], "c": ["a"]}
        with pytest.raises(ValidationError) as caught:
            JobGraph.build({k: needs[k] for k in order})
        messages.add(str(caught.value))
    assert messages == {"job dependency cycle: a -> b -> c -> a"}
