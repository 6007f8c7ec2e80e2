"""Kubernetes JSON in and out (camelCase, strict scalars, unknown fields tolerated)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from kruntimes_core.adapters.kubernetes.convert import from_json, to_json
from kruntimes_core.core.conditions import ConditionStatus
from kruntimes_core.core.errors import ValidationError
from kruntimes_core.resources.jsonvalue import JSONValue
from kruntimes_core.resources.pod import Pod
from kruntimes_core.resources.run import Run, RunPhase
from kruntimes_core.resources.runtime import Runtime
from kruntimes_core.resources.workspace import (
    CleanupPolicy,
    PersistentWorkspace,
    WorkspacePhase,
)

WORKSPACE: dict[str, JSONValue] = {
    "apiVersion": "kruntimes.io/v1alpha1",
    "kind": "PersistentWorkspace",
    "metadata": {
        "name": "ci-build-workspace",
        "namespace": "ci",
        "uid": "u-1",
        "resourceVersion": "42",
        "generation": 3,
        "finalizers": ["kruntimes.io/persistentworkspace-cleanup"],
        "deletionTimestamp": "2026-07-06T12:00:00Z",
        "managedFields": [{"manager": "kubectl"}],
    },
    "spec": {
        "runtime": "bash",
        "mode": "RuntimePodLocal",
        "ttlSecondsAfterUnused": 3600,
        "cleanupPolicy": "Retain",
    },
    "status": {
        "phase": "Bound",
        "runtime": "bash",
        "boundPod": "runtime-bash-1",
        "boundPodUID": "p-1",
        "path": "/workspace/persistent/ci-build-workspace",
        "lastUsedTime": "2026-07-06T11:00:00Z",
        "conditions": [
            {
                "type": "Bound",
                "status": "True",
                "reason": "Bound",
                "message": "bound",
                "lastTransitionTime": "2026-07-06T10:00:00Z",
                "observedGeneration": 3,
            }
        ],
    },
}


def test_a_workspace_reads_with_wire_names_and_tolerates_unknown_fields() -> None:
    ws = from_json(PersistentWorkspace, WORKSPACE)
    assert ws.metadata.resource_version == "42"
    assert ws.metadata.deletion_timestamp == datetime(2026, 7, 6, 12, tzinfo=UTC)
    assert ws.spec.cleanup_policy is CleanupPolicy.RETAIN
    assert ws.status.phase is WorkspacePhase.BOUND
    assert ws.status.bound_pod_uid == "p-1"
    assert ws.status.conditions[0].status is ConditionStatus.TRUE


def test_a_workspace_writes_back_what_it_read_minus_unknown_fields() -> None:
    out = to_json(from_json(PersistentWorkspace, WORKSPACE))
    metadata = dict(WORKSPACE["metadata"])  # type: ignore[arg-type]
    del metadata["managedFields"]
    spec = dict(WORKSPACE["spec"])  # type: ignore[arg-type]
    del spec["mode"]  # the default, omitted like every default
    assert out == {**WORKSPACE, "metadata": metadata, "spec": spec}


def test_defaults_are_omitted_on_output() -> None:
    ws = from_json(PersistentWorkspace, {"metadata": {"name": "w"}, "spec": {"runtime": "bash"}})
    assert to_json(ws) == {
        "apiVersion": "kruntimes.io/v1alpha1",
        "kind": "PersistentWorkspace",
        "metadata": {"name": "w"},
        "spec": {"runtime": "bash"},
    }


def test_a_run_reads_its_workspace_reference_and_placement() -> None:
    run = from_json(
        Run,
        {
            "metadata": {"name": "r", "namespace": "ci", "labels": {"a": "b"}},
            "spec": {"runtime": "bash", "workspace": {"name": "w"}, "source": {"inline": "x"}},
            "status": {"phase": "Running", "assignedPod": "p", "assignedPodUID": "pu"},
        },
    )
    assert run.workspace_name == "w"
    assert run.spec.workspace is not None
    assert run.spec.workspace.kind == "PersistentWorkspace"
    assert run.spec.workspace.api_group == "kruntimes.io/v1alpha1"
    assert run.status.phase is RunPhase.RUNNING
    assert run.status.assigned_pod_uid == "pu"
    assert run.active


def test_a_pod_is_ready_only_with_both_conditions_running_and_not_deleting() -> None:
    doc: dict[str, JSONValue] = {
        "metadata": {"name": "p", "labels": {"runtime": "bash"}},
        "status": {
            "phase": "Running",
            "conditions": [
                {"type": "Ready", "status": "True"},
                {"type": "kruntimes.io/RuntimedReady", "status": "True"},
            ],
        },
    }
    assert from_json(Pod, doc).ready
    assert from_json(Pod, doc).runtime == "bash"
    deleting: JSONValue = {
        **doc,
        "metadata": {"name": "p", "deletionTimestamp": "2026-01-01T00:00:00Z"},
    }
    assert not from_json(Pod, deleting).ready


def test_a_runtime_keeps_its_template_and_volume_source_opaque() -> None:
    runtime = from_json(
        Runtime,
        {
            "metadata": {"name": "bash"},
            "spec": {
                "capacity": {"resources": {"runs": 4}},
                "workspace": {"persistentVolumeClaim": {"claimName": "ws"}},
                "template": {"spec": {"containers": [{"name": "c"}]}},
            },
        },
    )
    assert runtime.run_slots == 4
    assert runtime.spec.workspace == {"persistentVolumeClaim": {"claimName": "ws"}}


@pytest.mark.parametrize(
    ("cls", "doc", "message"),
    [
        pytest.param(
            PersistentWorkspace,
            {"metadata": {"name": "w"}, "spec": {"runtime": "bash", "ttlSecondsAfterUnused": -1}},
            "spec.ttlSecondsAfterUnused: must be >= 0 (got -1)",
            id="negative-ttl",
        ),
        pytest.param(
            PersistentWorkspace,
            {"metadata": {"name": "w"}, "spec": {"runtime": "bash", "ttlSecondsAfterUnused": True}},
            "spec.ttlSecondsAfterUnused: must be an integer (got True)",
            id="bool-is-no-integer",
        ),
        pytest.param(
            PersistentWorkspace,
            {"metadata": {"name": "w"}, "spec": {"runtime": "bash", "mode": "Shared"}},
            "spec.mode: must be one of RuntimePodLocal (got 'Shared')",
            id="unknown-mode",
        ),
        pytest.param(
            PersistentWorkspace,
            {"metadata": {"name": "w"}, "spec": {"runtime": "Bash!"}},
            "spec.runtime: must be a label value",
            id="runtime-syntax",
        ),
        pytest.param(
            PersistentWorkspace,
            {"metadata": {"name": "w"}, "spec": {"runtime": "x" * 64}},
            "spec.runtime: must be no more than 63 characters",
            id="runtime-too-long",
        ),
        pytest.param(
            PersistentWorkspace,
            {"metadata": {"name": "w"}, "spec": {"runtime": ""}},
            "spec.runtime: is required",
            id="runtime-empty",
        ),
        pytest.param(
            PersistentWorkspace,
            {"metadata": {"name": "w", "deletionTimestamp": "soon"}, "spec": {"runtime": "b"}},
            "metadata.deletionTimestamp: invalid RFC 3339 timestamp 'soon'",
            id="bad-time",
        ),
        pytest.param(
            Run,
            {
                "metadata": {"name": "r"},
                "spec": {"runtime": "b", "workspace": {"name": "w", "kind": "Volume"}},
            },
            "spec.workspace.kind: must be one of PersistentWorkspace (got 'Volume')",
            id="run-workspace-kind",
        ),
        pytest.param(
            Run,
            {
                "metadata": {"name": "r"},
                "spec": {"runtime": "b", "workspace": {"name": "w", "apiGroup": "x/v1"}},
            },
            "spec.workspace.apiGroup: must be one of kruntimes.io/v1alpha1 (got 'x/v1')",
            id="run-workspace-api-group",
        ),
        pytest.param(
            Pod,
            {
                "metadata": {"name": "p"},
                "status": {"conditions": [{"type": "Ready", "status": "Yes"}]},
            },
            "status.conditions[0].status: must be one of True, False, Unknown (got 'Yes')",
            id="pod-condition-status",
        ),
        pytest.param(
            Runtime,
            {"metadata": {"name": "r"}, "spec": {"capacity": {"resources": {"runs": -2}}}},
            "spec.capacity.resources.runs: must be >= 0 (got -2)",
            id="negative-capacity",
        ),
        pytest.param(Pod, ["not", "an", "object"], "must be an object", id="not-an-object"),
    ],
)
def test_invalid_input_names_the_field_path_and_rule(
    cls: type[object], doc: JSONValue, message: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        from_json(cls, doc, location="dump.yaml")
    assert str(caught.value).startswith("dump.yaml: ")
    assert message in str(caught.value)
