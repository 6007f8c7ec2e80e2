"""``krt plan``: every decision for a cluster dump, as stable JSON (docs/plan.md)."""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import datetime, timedelta

from kruntimes_core.adapters.kubernetes.convert import to_json
from kruntimes_core.adapters.kubernetes.dump import Dump
from kruntimes_core.adapters.kubernetes.patches import action_json
from kruntimes_core.core.decision import Decision
from kruntimes_core.core.timeutil import format_rfc3339
from kruntimes_core.resources.jsonvalue import JSONValue
from kruntimes_core.resources.run import Run
from kruntimes_core.resources.workspace import PersistentWorkspace
from kruntimes_core.scheduling.placement import RunPlacement, decide_placements
from kruntimes_core.workflows.naming import snapshot_name
from kruntimes_core.workflows.reconcile import WorkflowRunSnapshot, decide_workflow_run
from kruntimes_core.workspaces.batch import WorkspaceDecisions, decide_cluster

PLAN_API_VERSION = "kruntimes.io/plan/v1alpha1"


def plan(dump: Dump, now: datetime) -> dict[str, JSONValue]:
    return {
        "apiVersion": PLAN_API_VERSION,
        "kind": "Plan",
        "now": format_rfc3339(now),
        "persistentWorkspaces": [_workspace(item) for item in decide_cluster(dump.cluster, now)],
        "workflowRuns": [_workflow_run(snapshot, now) for snapshot in _workflow_snapshots(dump)],
        "pendingRuns": [_placement(item) for item in decide_placements(dump.cluster)],
    }


def _placement(item: RunPlacement) -> dict[str, JSONValue]:
    run = item.run
    return {
        "namespace": run.metadata.namespace,
        "name": run.metadata.name,
        "uid": run.metadata.uid,
        "pod": None if item.pod is None else item.pod.metadata.name,
        "podUID": None if item.pod is None else item.pod.metadata.uid,
        **_decision_fields(item.decision, run.status),
    }


def _workflow_snapshots(dump: Dump) -> list[WorkflowRunSnapshot]:
    """Each WorkflowRun with its snapshot and the Runs and workspaces of its namespace."""
    revisions = {r.metadata.key: r for r in dump.revisions}
    runs: dict[str, list[Run]] = defaultdict(list)
    for run in dump.cluster.runs:
        runs[run.metadata.namespace].append(run)
    workspaces: dict[str, list[PersistentWorkspace]] = defaultdict(list)
    for ws in dump.cluster.workspaces:
        workspaces[ws.metadata.namespace].append(ws)
    snapshots = []
    for wr in sorted(dump.workflow_runs, key=lambda w: (w.metadata.key, w.metadata.uid)):
        namespace = wr.metadata.namespace
        revision = revisions.get((namespace, snapshot_name(wr.metadata.name, wr.metadata.uid)))
        snapshots.append(
            WorkflowRunSnapshot(wr, revision, tuple(runs[namespace]), tuple(workspaces[namespace]))
        )
    return snapshots


def _workflow_run(snapshot: WorkflowRunSnapshot, now: datetime) -> dict[str, JSONValue]:
    wr = snapshot.workflow_run
    decision = decide_workflow_run(snapshot, now)
    return {
        "namespace": wr.metadata.namespace,
        "name": wr.metadata.name,
        "uid": wr.metadata.uid,
        "observedPhase": wr.status.phase.value if wr.status.phase else None,
        "desiredStatus": to_json(decision.status),
        **_decision_fields(decision, wr.status),
    }


def render(document: dict[str, JSONValue]) -> str:
    """Byte-stable text: sorted keys, fixed indentation, a final newline."""
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _workspace(item: WorkspaceDecisions) -> dict[str, JSONValue]:
    ws = item.workspace
    decision = item.controller
    rendered: dict[str, JSONValue] = {
        "namespace": ws.metadata.namespace,
        "name": ws.metadata.name,
        "uid": ws.metadata.uid,
        "observedPhase": ws.status.phase.value if ws.status.phase else None,
        "desiredStatus": to_json(decision.status),
        **_decision_fields(decision, ws.status),
    }
    runtimed = item.runtimed
    rendered["runtimed"] = None
    if runtimed is not None:
        rendered["runtimed"] = {
            "pod": ws.status.bound_pod,
            "podUID": ws.status.bound_pod_uid,
            **_decision_fields(runtimed, None),
        }
    return rendered


def _decision_fields(decision: Decision[object], observed: object) -> dict[str, JSONValue]:
    return {
        "actions": [action_json(action, observed) for action in decision.actions],
        "requeueAfterSeconds": _seconds(decision.requeue_after),
        "events": [to_json(event) for event in decision.events],
        "message": decision.message,
    }


def _seconds(delay: timedelta | None) -> JSONValue:
    if delay is None:
        return None
    seconds = delay.total_seconds()
    return int(seconds) if seconds.is_integer() else seconds
