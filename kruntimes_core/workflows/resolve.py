"""Resolving a step or a job's outputs against what earlier work produced (spec 3-4).

A value that cannot be resolved (a missing output, a missing artifact) is an
error that fails the job with a message naming the job and the cause; it is
never replaced by an empty string and never waited for.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from kruntimes_core.artifacts.refs import ArtifactInput
from kruntimes_core.core.errors import InvalidInputError
from kruntimes_core.workflows.children import ResolvedStep
from kruntimes_core.workflows.expressions import Context, render
from kruntimes_core.workflows.spec import JobSpec
from kruntimes_core.workflows.status import JobPhase, JobStatus, StepPhase, StepStatus
from kruntimes_core.workflows.validation import parse_artifact_source


class ResolutionError(InvalidInputError):
    """A reference had no value when the job needed it."""


class _SucceededJobOutputs(Mapping[str, Mapping[str, str]]):
    """``jobs.<job>.outputs`` of succeeded jobs, read through without copying.

    Copying every job's outputs for every step started would make one
    reconcile of a wide graph quadratic.
    """

    def __init__(self, jobs: Mapping[str, JobStatus]) -> None:
        self._jobs = jobs

    def __getitem__(self, job: str) -> Mapping[str, str]:
        status = self._jobs[job]
        if status.phase is not JobPhase.SUCCEEDED:
            raise KeyError(job)
        return status.outputs

    def __iter__(self) -> Iterator[str]:
        return (job for job, st in self._jobs.items() if st.phase is JobPhase.SUCCEEDED)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _context(steps: tuple[StepStatus, ...], jobs: Mapping[str, JobStatus]) -> Context:
    return Context(
        steps={s.name: s.outputs for s in steps if s.phase is StepPhase.SUCCEEDED},
        jobs=_SucceededJobOutputs(jobs),
    )


def _render(text: str, context: Context, what: str) -> str:
    try:
        return render(text, context)
    except InvalidInputError as error:
        raise ResolutionError(f"{what}: {error.rule}") from None


def resolve_step(
    job: str, spec: JobSpec, index: int, status: JobStatus, jobs: Mapping[str, JobStatus]
) -> ResolvedStep:
    """The step's Run inputs. Raises ResolutionError naming the job, step and cause."""
    step = spec.steps[index]
    context = _context(status.steps, jobs)
    where = f'resolve step "{step.name}" of job "{job}"'
    inputs = []
    for artifact in step.artifacts:
        parsed = parse_artifact_source(artifact.from_)
        producer, name = parsed if parsed is not None else ("", "")
        ref = jobs[producer].artifacts.get(name) if producer in jobs else None
        if ref is None:
            raise ResolutionError(f'{where}: artifact "{name}" of job "{producer}" does not exist')
        inputs.append(ArtifactInput(ref=ref, path=artifact.path))
    return ResolvedStep(
        job=job,
        step=step.name,
        runtime=spec.runs_on,
        script=_render(step.run, context, f"{where}: run"),
        args=tuple(_render(arg, context, f"{where}: args[{i}]") for i, arg in enumerate(step.args)),
        env={k: _render(step.env[k], context, f'{where}: env "{k}"') for k in sorted(step.env)},
        artifact_inputs=tuple(inputs),
    )


def resolve_job_outputs(
    job: str, spec: JobSpec, steps: tuple[StepStatus, ...], jobs: Mapping[str, JobStatus]
) -> dict[str, str]:
    """The job's outputs once all its steps succeeded. Raises ResolutionError."""
    if not spec.outputs:
        return {}
    context = _context(steps, jobs)
    return {
        key: _render(spec.outputs[key], context, f'resolve outputs for job "{job}": output "{key}"')
        for key in sorted(spec.outputs)
    }
