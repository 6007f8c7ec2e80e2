"""Validation of a job graph (spec workflows.md section 2).

Rules that relate fields to each other: job names, the two job forms, step
names, ``needs`` (existence, self-dependency, cycles), expression references
(``jobs.<x>`` only from transitive dependencies, ``steps.<s>`` only from
earlier steps of the same job) and artifact sources (only from direct
needs). Jobs are visited in sorted order, so the first error reported is the
same whatever the order of keys in the manifest. Raises ValidationError with
the field path; returns the graph's topological order on success.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from kruntimes_core.artifacts.refs import name_problem
from kruntimes_core.core.errors import PathPart, ValidationError
from kruntimes_core.core.names import label_value_problem
from kruntimes_core.workflows.expressions import (
    ExpressionSyntaxError,
    InputRef,
    JobOutputRef,
    Ref,
    StepOutputRef,
    references,
)
from kruntimes_core.workflows.graph import JobGraph
from kruntimes_core.workflows.spec import MAX_STEPS, JobSpec, StepSpec, WorkflowSpec

Path = tuple[PathPart, ...]
ARTIFACT_PREFIX = "jobs."
ARTIFACT_INFIX = ".artifacts."


def validate_jobs(
    jobs: Mapping[str, JobSpec],
    *,
    inputs: Sequence[str] = (),
    path: Path = ("spec", "jobs"),
) -> JobGraph:
    """Check every cross-field rule of ``jobs``; ``inputs`` are the declared input names.

    Raises ValidationError naming the field path and the rule.
    """
    if not jobs:
        raise ValidationError("must hold at least one job", path)
    for job_id in sorted(jobs):
        _check_job(job_id, jobs[job_id], jobs, (*path, job_id))
    graph = JobGraph.build({job_id: jobs[job_id].needs for job_id in jobs}, path=path)
    declared = frozenset(inputs)
    for job_id in sorted(jobs):
        _check_references(job_id, jobs[job_id], graph, declared, (*path, job_id))
    return graph


def _check_job(job_id: str, job: JobSpec, jobs: Mapping[str, JobSpec], path: Path) -> None:
    problem = label_value_problem(job_id)
    if problem is not None or not job_id:
        raise ValidationError(f"job name {problem or 'must not be empty'}", path)
    for index, need in enumerate(job.needs):
        if need == job_id:
            raise ValidationError(f"job {job_id!r} cannot need itself", (*path, "needs", index))
        if need not in jobs:
            raise ValidationError(f"needs unknown job {need!r}", (*path, "needs", index))
        if need in job.needs[:index]:
            raise ValidationError(f"lists job {need!r} twice", (*path, "needs", index))
    if job.is_call:
        if job.runs_on or job.steps:
            raise ValidationError("a call job (uses) has no runs-on and no steps", (*path, "uses"))
        return
    if job.with_:
        raise ValidationError("with is only for call jobs (uses)", (*path, "with"))
    if not job.runs_on:
        raise ValidationError("an inline job needs runs-on (or uses for a call)", path)
    problem = label_value_problem(job.runs_on)
    if problem is not None:
        raise ValidationError(problem, (*path, "runs-on"))
    if not 1 <= len(job.steps) <= MAX_STEPS:
        raise ValidationError(f"must hold 1..{MAX_STEPS} steps", (*path, "steps"))
    seen: set[str] = set()
    for index, step in enumerate(job.steps):
        if step.name in seen:
            raise ValidationError(f"duplicate step name {step.name!r}", (*path, "steps", index))
        seen.add(step.name)
        if not step.run and not step.args:
            raise ValidationError("a step needs run or args", (*path, "steps", index))


def _check_references(
    job_id: str, job: JobSpec, graph: JobGraph, inputs: frozenset[str], path: Path
) -> None:
    earlier: set[str] = set()
    for index, step in enumerate(job.steps):
        step_path = (*path, "steps", index)
        for text, where in _step_texts(step, step_path):
            for ref in _refs(text, where):
                _check_ref(ref, job_id, graph, inputs, earlier, where)
        for a_index, artifact in enumerate(step.artifacts):
            _check_artifact(artifact.from_, job_id, graph, (*step_path, "artifacts", a_index))
        earlier.add(step.name)
    all_steps = {step.name for step in job.steps}
    for key in sorted(job.outputs):
        where = (*path, "outputs", key)
        for ref in _refs(job.outputs[key], where):
            _check_ref(ref, job_id, graph, inputs, all_steps, where)
    for key in sorted(job.with_):
        where = (*path, "with", key)
        for ref in _refs(job.with_[key], where):
            _check_ref(ref, job_id, graph, inputs, set(), where)


def _step_texts(step: StepSpec, path: Path) -> Iterator[tuple[str, Path]]:
    yield step.run, (*path, "run")
    for index, arg in enumerate(step.args):
        yield arg, (*path, "args", index)
    for name in sorted(step.env):
        yield step.env[name], (*path, "env", name)


def _refs(text: str, where: Path) -> tuple[Ref, ...]:
    try:
        return references(text)
    except ExpressionSyntaxError as error:
        raise error.within(*where) from None


def _check_ref(
    ref: Ref, job_id: str, graph: JobGraph, inputs: frozenset[str], steps: set[str], where: Path
) -> None:
    if isinstance(ref, InputRef) and ref.name not in inputs:
        raise ValidationError(f"{ref.text}: no input {ref.name!r} is declared", where)
    if isinstance(ref, StepOutputRef) and ref.step not in steps:
        raise ValidationError(
            f"{ref.text}: step {ref.step!r} is not an earlier step of job {job_id!r}", where
        )
    if isinstance(ref, JobOutputRef) and not graph.depends_on(job_id, ref.job):
        raise ValidationError(
            f"{ref.text}: job {ref.job!r} is not a dependency of job {job_id!r}", where
        )


def parse_artifact_source(text: str) -> tuple[str, str] | None:
    """``jobs.<job>.artifacts.<name>`` as (job, name), or None when malformed."""
    if not text.startswith(ARTIFACT_PREFIX) or ARTIFACT_INFIX not in text:
        return None
    job, _, name = text[len(ARTIFACT_PREFIX) :].partition(ARTIFACT_INFIX)
    if label_value_problem(job) is not None or not job or name_problem(name) is not None:
        return None
    return job, name


def _check_artifact(source: str, job_id: str, graph: JobGraph, path: Path) -> None:
    parsed = parse_artifact_source(source)
    if parsed is None:
        raise ValidationError(
            f"must be jobs.<job>.artifacts.<name> (got {source!r})", (*path, "from")
        )
    producer, _name = parsed
    if producer not in graph.needs(job_id):
        raise ValidationError(
            f"job {producer!r} must be a direct need of job {job_id!r} to use its artifacts",
            (*path, "from"),
        )


def validate_workflow(spec: WorkflowSpec, path: Path = ("spec",)) -> JobGraph:
    """A Workflow template: its jobs against its declared inputs, and its outputs.

    Raises ValidationError naming the field path and the rule.
    """
    graph = validate_jobs(spec.jobs, inputs=sorted(spec.inputs), path=(*path, "jobs"))
    for name in sorted(spec.outputs):
        where = (*path, "outputs", name, "value")
        for ref in _refs(spec.outputs[name].value, where):
            if not isinstance(ref, JobOutputRef) or ref.job not in spec.jobs:
                raise ValidationError(
                    f"{ref.text}: a Workflow output must name an output of one of its jobs",
                    where,
                )
    return graph
