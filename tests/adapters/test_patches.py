"""Merge patches (RFC 7386) and the JSON form of actions."""

from __future__ import annotations

import pytest

from kruntimes_core.adapters.kubernetes.patches import action_json, merge_patch
from kruntimes_core.core.actions import DeleteObject, ObjectRef, PatchStatus
from kruntimes_core.resources.jsonvalue import JSONValue
from kruntimes_core.resources.workspace import WorkspacePhase, WorkspaceStatus

TARGET = ObjectRef("kruntimes.io/v1alpha1", "PersistentWorkspace", "ci", "w", "u-1")


@pytest.mark.parametrize(
    ("old", "new", "patch"),
    [
        pytest.param({"a": 1}, {"a": 1}, {}, id="unchanged"),
        pytest.param({"a": 1}, {"a": 2}, {"a": 2}, id="changed"),
        pytest.param({"a": 1}, {}, {"a": None}, id="removed"),
        pytest.param({}, {"b": [1]}, {"b": [1]}, id="added"),
        pytest.param({"o": {"x": 1, "y": 2}}, {"o": {"x": 1}}, {"o": {"y": None}}, id="nested"),
        pytest.param({"l": [1, 2]}, {"l": [2]}, {"l": [2]}, id="lists-replace-whole"),
        pytest.param(1, {"a": 1}, {"a": 1}, id="non-object"),
    ],
)
def test_merge_patch(old: JSONValue, new: JSONValue, patch: JSONValue) -> None:
    assert merge_patch(old, new) == patch


def test_a_status_patch_carries_the_resource_version_precondition() -> None:
    old = WorkspaceStatus(phase=WorkspacePhase.BOUND, runtime="bash")
    new = WorkspaceStatus(phase=WorkspacePhase.RELEASED, runtime="bash")
    rendered = action_json(PatchStatus(TARGET, "7", new), old)
    assert rendered == {
        "action": "PatchStatus",
        "target": {
            "apiVersion": "kruntimes.io/v1alpha1",
            "kind": "PersistentWorkspace",
            "namespace": "ci",
            "name": "w",
            "uid": "u-1",
        },
        "patch": {"metadata": {"resourceVersion": "7"}, "status": {"phase": "Released"}},
    }


def test_a_delete_carries_the_uid_precondition() -> None:
    assert action_json(DeleteObject(TARGET))["preconditions"] == {"uid": "u-1"}
