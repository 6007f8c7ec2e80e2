"""The objects a WorkflowRun creates: job workspaces and step Runs (spec workflows.md 4).

Only the construction lives here; when to create them is reconcile.py's.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from attrs import frozen

from kruntimes_core.artifacts.refs import ArtifactInput
from kruntimes_core.core.meta import ObjectMeta, OwnerReference
from kruntimes_core.resources.run import (
    EnvVar,
    Run,
    RunMode,
    RunSource,
    RunSpec,
    TaskMode,
    WorkspaceRef,
)
from kruntimes_core.resources.workspace import (
    CleanupPolicy,
    PersistentWorkspace,
    WorkspaceSpec,
)
from kruntimes_core.workflows.naming import (
    JOB_LABEL,
    STEP_LABEL,
    WORKFLOWRUN_UID_LABEL,
    controller_reference,
    job_workspace_name,
    step_run_name,
)
from kruntimes_core.workflows.status import WorkflowRun


@frozen
class ControllerConfig:
    """What the operator configures for the workspaces it creates for jobs."""

    workspace_ttl_seconds: int | None = 3600
    workspace_cleanup_policy: CleanupPolicy = CleanupPolicy.DELETE_AFTER_TTL


def _owner(run: WorkflowRun) -> OwnerReference:
    meta = run.metadata
    return controller_reference(run.API_VERSION, run.KIND, meta.name, meta.uid)


def job_workspace(
    run: WorkflowRun, job: str, runs_on: str, config: ControllerConfig
) -> PersistentWorkspace:
    meta = run.metadata
    return PersistentWorkspace(
        metadata=ObjectMeta(
            name=job_workspace_name(meta.name, job),
            namespace=meta.namespace,
            labels={WORKFLOWRUN_UID_LABEL: meta.uid, JOB_LABEL: job},
            owner_references=(_owner(run),),
        ),
        spec=_workspace_spec(
            runs_on, config.workspace_ttl_seconds, config.workspace_cleanup_policy
        ),
    )


@lru_cache(maxsize=1024)  # every job of a runtime shares one frozen spec
def _workspace_spec(runs_on: str, ttl: int | None, policy: CleanupPolicy) -> WorkspaceSpec:
    return WorkspaceSpec(runtime=runs_on, ttl_seconds_after_unused=ttl, cleanup_policy=policy)


@frozen
class ResolvedStep:
    """A step with every expression rendered and every artifact resolved."""

    job: str
    step: str
    runtime: str
    script: str
    args: tuple[str, ...]
    env: Mapping[str, str]
    artifact_inputs: tuple[ArtifactInput, ...]


def step_run(run: WorkflowRun, resolved: ResolvedStep) -> Run:
    meta = run.metadata
    return Run(
        metadata=ObjectMeta(
            name=step_run_name(meta.name, resolved.job, resolved.step),
            namespace=meta.namespace,
            labels={
                WORKFLOWRUN_UID_LABEL: meta.uid,
                JOB_LABEL: resolved.job,
                STEP_LABEL: resolved.step,
            },
            owner_references=(_owner(run),),
        ),
        spec=RunSpec(
            runtime=resolved.runtime,
            workspace=WorkspaceRef(job_workspace_name(meta.name, resolved.job)),
            source=RunSource(inline=resolved.script) if resolved.script else None,
            mode=RunMode(task=TaskMode(args=resolved.args)) if resolved.args else None,
            env=tuple(EnvVar(name, resolved.env[name]) for name in sorted(resolved.env)),
            artifact_inputs=resolved.artifact_inputs,
        ),
    )
