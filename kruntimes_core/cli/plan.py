"""``krt plan``: every decision for a cluster dump, as stable JSON (docs/plan.md)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

from kruntimes_core.adapters.kubernetes.convert import to_json
from kruntimes_core.adapters.kubernetes.patches import action_json
from kruntimes_core.core.decision import Decision
from kruntimes_core.core.timeutil import format_rfc3339
from kruntimes_core.resources.cluster import ClusterSnapshot
from kruntimes_core.resources.jsonvalue import JSONValue
from kruntimes_core.workspaces.batch import WorkspaceDecisions, decide_cluster

PLAN_API_VERSION = "kruntimes.io/plan/v1alpha1"


def plan(snapshot: ClusterSnapshot, now: datetime) -> dict[str, JSONValue]:
    return {
        "apiVersion": PLAN_API_VERSION,
        "kind": "Plan",
        "now": format_rfc3339(now),
        "persistentWorkspaces": [_workspace(item) for item in decide_cluster(snapshot, now)],
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
