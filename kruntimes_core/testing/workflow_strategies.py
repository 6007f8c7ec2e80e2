"""Public Hypothesis strategies for WorkflowRuns over random job graphs (spec workflows.md 1-4).

- ``job_graphs`` draws an acyclic ``needs`` relation: jobs are generated in
  a topological order (each may need only jobs generated before it), then
  named so that name order is not that order (it shrinks towards the
  reverse of it), with 1..3 steps each.
- ``build_workflow_run`` turns a graph into a WorkflowRun through its JSON
  manifest (what a YAML document holds), with the keys of ``jobs`` and the
  lists and maps inside each job in a chosen order. When ``wired``, the
  jobs exchange data the way real ones do: each step writes the output
  ``v`` and the artifact ``out.txt``, a later step reads the previous
  step's ``v``, a job exports the last step's ``v`` as ``out``, and the
  first step of a job reads ``out`` and ``out.txt`` of every direct need.
- ``outcome_tables`` draws how every step ends, as a pure function of (job,
  step) so that two drives of the same run in different orders meet the
  same outcomes; a table completes a Run with the outputs and artifact the
  wiring expects when it succeeds.

Everything drawn is valid: validation accepts every generated run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from attrs import field, frozen
from hypothesis import strategies as st

from kruntimes_core.adapters.kubernetes.convert import from_json
from kruntimes_core.resources.jsonvalue import JSONValue
from kruntimes_core.resources.run import Run, RunPhase
from kruntimes_core.testing.workflow_world import Completion, file_ref
from kruntimes_core.workflows.naming import JOB_LABEL, STEP_LABEL
from kruntimes_core.workflows.status import WorkflowRun

__all__ = [
    "ARTIFACT",
    "FAILING_RUN_PHASES",
    "JOB_OUTPUT",
    "STEP_NAMES",
    "STEP_OUTPUT",
    "JobGraphShape",
    "OutcomeTable",
    "build_workflow_run",
    "job_graphs",
    "job_names",
    "outcome_tables",
    "step_outcomes",
    "workflow_run_manifest",
    "workflow_runs",
]

STEP_NAMES = ("build", "test", "package", "s.1", "Deploy_2", "x-y")
"""Step names: label values, neither sorted nor all alike."""
STEP_OUTPUT = "v"
JOB_OUTPUT = "out"
ARTIFACT = "out.txt"
FAILING_RUN_PHASES = (RunPhase.FAILED, RunPhase.TIMEOUT, RunPhase.CANCELLED)
"""Terminal Run phases that fail a step."""
RUNTIME = "bash"

Manifest = dict[str, JSONValue]

_LABELS = st.from_regex(r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,10}[A-Za-z0-9])?", fullmatch=True)


@frozen
class JobGraphShape:
    """A job graph: ``order`` is topological (a job needs only jobs before it)."""

    order: tuple[str, ...]
    needs: Mapping[str, tuple[str, ...]]
    """Per job, its direct needs in the order drawn (not sorted)."""
    steps: Mapping[str, tuple[str, ...]]
    """Per job, its step names in spec order."""

    def ancestors(self) -> dict[str, frozenset[str]]:
        """Per job, its transitive dependencies (one pass in ``order``)."""
        found: dict[str, frozenset[str]] = {}
        for job in self.order:
            below: set[str] = set()
            for need in self.needs[job]:
                below.add(need)
                below |= found[need]
            found[job] = frozenset(below)
        return found


def _sizes(min_jobs: int, max_jobs: int) -> st.SearchStrategy[int]:
    """Mostly small graphs; a third of the draws anywhere up to ``max_jobs``."""
    return st.one_of(
        st.integers(min_jobs, max(min_jobs, min(max_jobs, 6))),
        st.integers(min_jobs, max(min_jobs, min(max_jobs, 30))),
        st.integers(min_jobs, max_jobs),
    )


@st.composite
def job_names(draw: st.DrawFn, count: int) -> tuple[str, ...]:
    """``count`` distinct job names, whose sorted order is not the position order.

    Either ``j000``.. permuted (shrinking towards reverse name order) or, for
    a few jobs, arbitrary label values (dots, dashes, capitals).
    """
    width = max(3, len(str(count - 1)))
    canonical = [f"j{index:0{width}d}" for index in reversed(range(count))]
    permuted = st.permutations(canonical).map(tuple)
    if count > 8:
        return draw(permuted)
    labels = st.lists(_LABELS, min_size=count, max_size=count, unique=True).map(tuple)
    return draw(permuted | labels)


@st.composite
def job_graphs(
    draw: st.DrawFn,
    max_jobs: int = 200,
    *,
    min_jobs: int = 1,
    max_needs: int = 4,
    max_steps: int = 3,
) -> JobGraphShape:
    """Valid acyclic job graphs of ``min_jobs..max_jobs`` jobs, 1..``max_steps`` steps each."""
    count = draw(_sizes(min_jobs, max_jobs))
    names = draw(job_names(count))
    pool = STEP_NAMES + tuple(f"step-{i}" for i in range(len(STEP_NAMES), max_steps))
    needs: dict[str, tuple[str, ...]] = {}
    steps: dict[str, tuple[str, ...]] = {}
    for index, job in enumerate(names):
        # A need is drawn as a distance back in the order: shrinking makes chains.
        distances = st.lists(st.integers(1, index), unique=True, max_size=min(max_needs, index))
        needs[job] = tuple(names[index - d] for d in draw(distances)) if index else ()
        chosen = st.lists(
            st.sampled_from(pool),
            min_size=1,
            max_size=max_steps,
            unique=True,
        )
        steps[job] = tuple(draw(chosen))
    return JobGraphShape(order=names, needs=needs, steps=steps)


def _expr(text: str) -> str:
    return "${{ " + text + " }}"


def _ordered(mapping: Mapping[str, JSONValue], reverse: bool) -> Manifest:
    keys = list(mapping)
    return {key: mapping[key] for key in (reversed(keys) if reverse else keys)}


def _step(
    job: str, steps: Sequence[str], index: int, needs: Sequence[str], wired: bool, reverse: bool
) -> Manifest:
    step = steps[index]
    if not wired:
        return {"name": step, "run": f"echo {job}/{step}"}
    run = (
        f'echo "{STEP_OUTPUT}={job}/{step}" >> "$KRUNTIME_OUTPUTS"\n'
        f'mkdir -p "$KRUNTIME_ARTIFACTS_DIR"\n'
        f'echo {job}/{step} > "$KRUNTIME_ARTIFACTS_DIR/{ARTIFACT}"\n'
    )
    body: dict[str, JSONValue] = {"name": step, "run": run}
    if index:
        body["env"] = {"PREV": _expr(f"steps.{steps[index - 1]}.outputs.{STEP_OUTPUT}")}
    elif needs:
        ordered = sorted(needs)
        env: dict[str, JSONValue] = {
            f"NEED_{i}": _expr(f"jobs.{need}.outputs.{JOB_OUTPUT}")
            for i, need in enumerate(ordered)
        }
        body["env"] = _ordered(env, reverse)
        artifacts: list[JSONValue] = [
            {"from": f"jobs.{need}.artifacts.{ARTIFACT}", "path": f"in/{need}"} for need in ordered
        ]
        body["artifacts"] = artifacts[::-1] if reverse else artifacts
    return _ordered(body, reverse)


def _job(shape: JobGraphShape, job: str, wired: bool, reverse: bool) -> Manifest:
    steps = shape.steps[job]
    needs = list(shape.needs[job])
    body: dict[str, JSONValue] = {"runs-on": RUNTIME}
    if needs:
        body["needs"] = list(reversed(needs)) if reverse else list(needs)
    if wired:
        body["outputs"] = {JOB_OUTPUT: _expr(f"steps.{steps[-1]}.outputs.{STEP_OUTPUT}")}
    body["steps"] = [_step(job, steps, i, needs, wired, reverse) for i in range(len(steps))]
    return _ordered(body, reverse)


def workflow_run_manifest(
    shape: JobGraphShape,
    *,
    job_order: Sequence[str] | None = None,
    reverse: bool = False,
    wired: bool = True,
    name: str = "wr",
    namespace: str = "ci",
) -> Manifest:
    """The WorkflowRun manifest (JSON, as read from YAML) of ``shape``.

    ``job_order`` is the order of the keys of ``spec.jobs`` (default: name
    order); ``reverse`` reverses every other key order and list in each job
    (``needs``, ``env``, ``artifacts``, the job's own fields) but not steps.
    """
    order = sorted(shape.order) if job_order is None else list(job_order)
    if sorted(order) != sorted(shape.order):
        raise ValueError("job_order must list every job once")
    jobs: dict[str, JSONValue] = {job: _job(shape, job, wired, reverse) for job in order}
    return {
        "apiVersion": WorkflowRun.API_VERSION,
        "kind": WorkflowRun.KIND,
        "metadata": {"name": name, "namespace": namespace, "uid": f"{name}-uid"},
        "spec": {"jobs": jobs},
    }


def build_workflow_run(
    shape: JobGraphShape,
    *,
    job_order: Sequence[str] | None = None,
    reverse: bool = False,
    wired: bool = True,
    name: str = "wr",
    namespace: str = "ci",
) -> WorkflowRun:
    """``workflow_run_manifest(...)`` read as a WorkflowRun (as the operator reads it)."""
    manifest = workflow_run_manifest(
        shape, job_order=job_order, reverse=reverse, wired=wired, name=name, namespace=namespace
    )
    return from_json(WorkflowRun, manifest)


@st.composite
def workflow_runs(
    draw: st.DrawFn,
    graphs: st.SearchStrategy[JobGraphShape] | None = None,
    *,
    wired: bool = True,
) -> WorkflowRun:
    """WorkflowRuns of drawn graphs, with ``jobs`` keys and lists in a drawn order."""
    shape = draw(job_graphs() if graphs is None else graphs)
    order = draw(st.permutations(shape.order))
    return build_workflow_run(shape, job_order=order, reverse=draw(st.booleans()), wired=wired)


def step_outcomes(failure_percent: int = 10) -> st.SearchStrategy[RunPhase]:
    """Terminal Run phases: Succeeded but for about ``failure_percent`` % of the draws,
    which are Failed, Timeout or Cancelled. Shrinks towards Succeeded."""
    if not 0 <= failure_percent <= 100:
        raise ValueError("failure_percent must be within 0..100")
    if failure_percent == 0:
        return st.just(RunPhase.SUCCEEDED)
    cut = 100 - failure_percent
    return st.integers(0, 99).map(
        lambda x: RunPhase.SUCCEEDED if x < cut else FAILING_RUN_PHASES[x % 3]
    )


@frozen
class OutcomeTable:
    """How each step ends, by (job, step); an unlisted step succeeds.

    Calling the table with a child Run gives its Completion: on success the
    output ``v`` and the artifact ``out.txt`` that ``wired`` runs read.
    """

    phases: Mapping[str, Mapping[str, RunPhase]] = field(factory=dict)

    def phase(self, job: str, step: str) -> RunPhase:
        return self.phases.get(job, {}).get(step, RunPhase.SUCCEEDED)

    def __call__(self, run: Run) -> Completion:
        job, step = run.metadata.labels[JOB_LABEL], run.metadata.labels[STEP_LABEL]
        phase = self.phase(job, step)
        if phase is not RunPhase.SUCCEEDED:
            return Completion(phase, message=f"step {job}/{step} ended {phase.value}")
        return Completion(phase, {STEP_OUTPUT: f"{job}/{step}"}, (file_ref(run, ARTIFACT),))


@st.composite
def outcome_tables(
    draw: st.DrawFn,
    shape: JobGraphShape,
    failure_percents: st.SearchStrategy[int] | None = None,
) -> OutcomeTable:
    """An outcome for every step of ``shape``; the failure rate is drawn per table."""
    percents = st.sampled_from((0, 2, 10, 30)) if failure_percents is None else failure_percents
    outcomes = step_outcomes(draw(percents))
    phases: dict[str, Mapping[str, RunPhase]] = {}
    for job in shape.order:
        phases[job] = {step: draw(outcomes) for step in shape.steps[job]}
    return OutcomeTable(phases)
