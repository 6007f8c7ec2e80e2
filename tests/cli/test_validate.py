"""``krt validate`` and ``krt plan`` over WorkflowRuns, in real subprocesses."""

from __future__ import annotations

import json

from tests.cli.test_plan import NOW, ROOT, krt

WORKFLOW_DUMP = ROOT / "examples" / "workflow-cluster.yaml"


def test_valid_manifests_print_nothing_and_exit_0() -> None:
    result = krt(
        "validate",
        str(ROOT / "examples" / "workflows" / "ci-data-sharing-demo.yaml"),
        str(ROOT / "examples" / "cluster.yaml"),
        str(WORKFLOW_DUMP),
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_every_problem_is_one_line_with_its_position_and_exit_1() -> None:
    bad = ROOT / "examples" / "invalid" / "workflow-problems.yaml"
    result = krt("validate", str(bad), str(ROOT / "examples" / "invalid" / "negative-ttl.yaml"))
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        f"{bad}:7:5: spec.jobs: job dependency cycle: a -> b -> a",
        f"{bad}:17:15: spec.jobs.deploy.needs[0]: needs unknown job 'build'",
        f"{bad}:30:16: spec.jobs.deploy.steps[0].run: jobs.build.outputs.version: "
        "job 'build' is not a dependency of job 'deploy'",
        f"{bad}:38:13: spec.jobs.lib.uses: a call job (uses) has no runs-on and no steps",
        f"{ROOT / 'examples' / 'invalid' / 'negative-ttl.yaml'}:6:26: "
        "spec.ttlSecondsAfterUnused: must be >= 0 (got -5)",
    ]


def test_a_malformed_file_is_one_problem_and_the_next_file_is_still_read() -> None:
    malformed = ROOT / "examples" / "invalid" / "malformed.yaml"
    negative = ROOT / "examples" / "invalid" / "negative-ttl.yaml"
    result = krt("validate", str(malformed), str(negative))
    assert result.returncode == 1
    assert len(result.stdout.splitlines()) == 2


def test_plan_decides_workflow_runs_from_the_same_dump() -> None:
    result = krt("plan", "-f", str(WORKFLOW_DUMP), "--now", NOW)
    assert result.returncode == 0, result.stderr
    runs = {w["name"]: w for w in json.loads(result.stdout)["workflowRuns"]}
    created = [(a["action"], a["target"]["kind"]) for a in runs["demo-new"]["actions"]]
    assert created == [
        ("CreateObject", "ControllerRevision"),
        ("CreateObject", "PersistentWorkspace"),
        ("CreateObject", "PersistentWorkspace"),
        ("CreateObject", "Run"),
        ("PatchStatus", "WorkflowRun"),
    ]
    assert [a["action"] for a in runs["demo-cancelled"]["actions"]] == ["RequestCancel"]
    build = runs["demo-running"]["desiredStatus"]["jobs"]["build"]
    assert [s["phase"] for s in build["steps"]] == ["Succeeded", "Running", "Pending"]


def test_the_workflow_plan_is_byte_identical_across_hash_seeds() -> None:
    outputs = {
        krt("plan", "-f", str(WORKFLOW_DUMP), "--now", NOW, seed=seed).stdout
        for seed in ["3", "1234", "99999"]
    }
    assert len(outputs) == 1


def test_plan_places_pending_runs_or_says_why_they_wait() -> None:
    result = krt(
        "plan",
        "-f",
        str(ROOT / "examples" / "cluster.yaml"),
        "-f",
        str(ROOT / "examples" / "scheduling.yaml"),
        "--now",
        NOW,
    )
    assert result.returncode == 0, result.stderr
    runs = {r["name"]: r for r in json.loads(result.stdout)["pendingRuns"]}
    assert list(runs) == ["db-client", "db-replica", "uses-idle", "late", "huge"]
    assert runs["db-client"]["pod"] == "runtime-bash-7f587b4668-abcde"
    assert runs["db-replica"]["pod"] != "runtime-bash-7f587b4668-abcde"
    assert runs["uses-idle"]["pod"] == "runtime-bash-7f587b4668-fghij"
    assert runs["late"]["pod"] is None
    assert runs["late"]["message"] == 'workspace "released" is released: no new Run may use it'
    assert runs["huge"]["message"] == "no Runtime Pod fits (2 ready): 2 lack free run slots"
