"""Deterministic names and labels of a WorkflowRun's children (spec workflows.md 4-5).

Every child's name is derived from the WorkflowRun's name and a short
SHA-256 of what the child is for, so a restarted controller finds (and
adopts) the children it created before, and never creates one twice.
"""

from __future__ import annotations

from functools import lru_cache

from kruntimes_core.core.hashing import sha256_hex
from kruntimes_core.core.meta import OwnerReference
from kruntimes_core.core.names import DNS1123_SUBDOMAIN_MAX

WORKFLOWRUN_UID_LABEL = "kruntimes.io/workflowrun-uid"
JOB_LABEL = "kruntimes.io/workflow-job"
STEP_LABEL = "kruntimes.io/workflow-step"
HASH_DIGITS = 10


def _prefixed(run_name: str, suffix: str) -> str:
    """``<prefix>-<suffix>``, the prefix being the run name cut to fit 253 characters."""
    room = DNS1123_SUBDOMAIN_MAX - len(suffix) - 1
    prefix = run_name[:room].rstrip("-.")
    return f"{prefix}-{suffix}"


# Reconciling a run recomputes the same names every time; hashing is the
# largest cost of deriving a finished job, so names are memoised (bounded).
@lru_cache(maxsize=1 << 16)
def step_run_name(run_name: str, job: str, step: str) -> str:
    return _prefixed(run_name, sha256_hex(f"{job}/{step}/", HASH_DIGITS))


@lru_cache(maxsize=1 << 16)
def job_workspace_name(run_name: str, job: str) -> str:
    return _prefixed(run_name, "ws-" + sha256_hex(job, HASH_DIGITS))


def snapshot_name(run_name: str, uid: str) -> str:
    return _prefixed(run_name, "snapshot-" + sha256_hex(uid, HASH_DIGITS))


def child_workflow_run_name(run_name: str, job: str) -> str:
    return _prefixed(run_name, sha256_hex(job, HASH_DIGITS))


@lru_cache(maxsize=1024)  # one shared frozen value per owner, not one per child
def controller_reference(api_version: str, kind: str, name: str, uid: str) -> OwnerReference:
    return OwnerReference(
        api_version=api_version,
        kind=kind,
        name=name,
        uid=uid,
        controller=True,
        block_owner_deletion=True,
    )
