"""``krt plan`` end to end, in real subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "cluster.yaml"
NOW = "2026-11-30T12:00:00Z"


def krt(*args: str, seed: str = "0") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    return subprocess.run(
        [sys.executable, "-m", "kruntimes_core", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        check=False,
    )


def test_plan_is_byte_identical_across_hash_seeds() -> None:
    outputs = {
        krt("plan", "-f", str(EXAMPLE), "--now", NOW, seed=s).stdout for s in ["1", "97", "4242"]
    }
    assert len(outputs) == 1
    assert json.loads(outputs.pop())["kind"] == "Plan"


def test_plan_of_the_example_covers_every_phase() -> None:
    result = krt("plan", "-f", str(EXAMPLE), "--now", NOW)
    assert result.returncode == 0, result.stderr
    plan = json.loads(result.stdout)
    by_name = {ws["name"]: ws for ws in plan["persistentWorkspaces"]}
    phases = {ws["desiredStatus"]["phase"] for ws in by_name.values()}
    assert phases == {"Pending", "Bound", "Lost", "Released"}
    assert [a["action"] for a in by_name["fresh"]["actions"]] == ["AddFinalizer", "PatchStatus"]
    assert by_name["idle"]["requeueAfterSeconds"] == 1800
    assert [a["action"] for a in by_name["expired"]["actions"]] == ["PatchStatus", "DeleteObject"]
    assert by_name["kept"]["actions"] == []
    assert by_name["kept"]["requeueAfterSeconds"] is None
    released = by_name["released"]["runtimed"]
    assert [a["action"] for a in released["actions"]] == [
        "DeleteWorkspaceDirectory",
        "RemoveFinalizer",
    ]
    assert released["actions"][0]["path"] == "/workspace/persistent/released"
    assert by_name["deleting-busy"]["runtimed"]["message"].endswith("long-job")
    assert by_name["released-pod-gone"]["actions"][-1]["action"] == "RemoveFinalizer"


def test_status_patches_are_merge_patches_with_a_resource_version_precondition() -> None:
    plan = json.loads(krt("plan", "-f", str(EXAMPLE), "--now", NOW).stdout)
    expired = next(ws for ws in plan["persistentWorkspaces"] if ws["name"] == "expired")
    patch = expired["actions"][0]["patch"]
    assert patch == {"metadata": {"resourceVersion": "5006"}, "status": {"phase": "Released"}}


@pytest.mark.parametrize(
    ("example", "expected"),
    [
        pytest.param(
            "negative-ttl.yaml",
            "negative-ttl.yaml:6:26: spec.ttlSecondsAfterUnused: must be >= 0 (got -5)",
            id="negative-ttl",
        ),
        pytest.param(
            "unknown-cleanup-policy.yaml",
            "unknown-cleanup-policy.yaml:6:18: spec.cleanupPolicy: must be one of "
            "DeleteAfterTTL, Retain (got 'DeleteImmediately')",
            id="unknown-cleanup-policy",
        ),
        pytest.param(
            "missing-runtime.yaml",
            "missing-runtime.yaml:12:5: items[1].spec.runtime: is required",
            id="missing-runtime",
        ),
        pytest.param(
            "wrong-type.yaml",
            "wrong-type.yaml:6:26: spec.ttlSecondsAfterUnused: must be an integer (got '3600')",
            id="wrong-type",
        ),
        pytest.param("malformed.yaml", "malformed.yaml:4:5: expected ','", id="malformed-yaml"),
    ],
)
def test_bad_input_is_one_line_on_stderr_and_exit_2(example: str, expected: str) -> None:
    result = krt("plan", "-f", str(ROOT / "examples" / "invalid" / example), "--now", NOW)
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("krt: error: ")
    assert expected in lines[0]


def test_a_missing_file_and_a_bad_time_are_input_errors(tmp_path: Path) -> None:
    missing = krt("plan", "-f", str(tmp_path / "absent.yaml"), "--now", NOW)
    assert missing.returncode == 2
    assert "cannot read file" in missing.stderr
    bad_time = krt("plan", "-f", str(EXAMPLE), "--now", "yesterday")
    assert bad_time.returncode == 2
    assert "--now: invalid RFC 3339 timestamp 'yesterday'" in bad_time.stderr


def test_json_dumps_are_read_too(tmp_path: Path) -> None:
    dump = tmp_path / "dump.json"
    dump.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "List",
                "items": [
                    {
                        "apiVersion": "kruntimes.io/v1alpha1",
                        "kind": "PersistentWorkspace",
                        "metadata": {"name": "w", "namespace": "ci", "uid": "u"},
                        "spec": {"runtime": "bash"},
                    }
                ],
            }
        )
    )
    result = krt("plan", "-f", str(dump), "--now", NOW)
    assert result.returncode == 0, result.stderr
    (ws,) = json.loads(result.stdout)["persistentWorkspaces"]
    assert ws["desiredStatus"]["phase"] == "Pending"
