"""Actions as the Kubernetes API requests they become (JSON, deterministic).

Status changes are JSON merge patches (RFC 7386) against the observed status,
carrying ``metadata.resourceVersion`` so the API server refuses a patch
computed from a stale snapshot (409 Conflict).
"""

from __future__ import annotations

from kruntimes_core.adapters.kubernetes.convert import to_json
from kruntimes_core.core.actions import (
    Action,
    AddFinalizer,
    CreateObject,
    DeleteObject,
    DeleteWorkspaceDirectory,
    PatchStatus,
    RemoveFinalizer,
    RequestCancel,
)
from kruntimes_core.resources.jsonvalue import JSONValue


def merge_patch(old: JSONValue, new: JSONValue) -> JSONValue:
    """The RFC 7386 merge patch that turns ``old`` into ``new``."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        return new
    patch: dict[str, JSONValue] = {}
    for key in sorted(old.keys() | new.keys()):
        if key not in new:
            patch[key] = None
        elif key not in old:
            patch[key] = new[key]
        elif old[key] != new[key]:
            patch[key] = merge_patch(old[key], new[key])
    return patch


def status_patch(action: PatchStatus[object], observed_status: object) -> JSONValue:
    """The merge patch body for the status subresource."""
    body: dict[str, JSONValue] = {
        "status": merge_patch(_as_object(observed_status), _as_object(action.status))
    }
    if action.resource_version:
        body["metadata"] = {"resourceVersion": action.resource_version}
    return body


def action_json(action: Action, observed_status: object = None) -> dict[str, JSONValue]:
    """One action as plan JSON: its name, its target and what it carries."""
    rendered: dict[str, JSONValue] = {
        "action": type(action).__name__,
        "target": to_json(action.target),
    }
    if isinstance(action, PatchStatus):
        rendered["patch"] = status_patch(action, observed_status)
    elif isinstance(action, AddFinalizer | RemoveFinalizer):
        rendered["finalizer"] = action.finalizer
    elif isinstance(action, DeleteWorkspaceDirectory):
        rendered["path"] = action.path
    elif isinstance(action, DeleteObject):
        rendered["preconditions"] = {"uid": action.target.uid}
    elif isinstance(action, CreateObject):
        rendered["object"] = to_json(action.object)
    elif isinstance(action, RequestCancel):
        rendered["patch"] = {"spec": {"cancelRequested": True}}
    return rendered


def _as_object(status: object) -> JSONValue:
    return {} if status is None else to_json(status)
