"""Reading manifest files with positions, and dumps into snapshots."""

from __future__ import annotations

from pathlib import Path

import pytest

from kruntimes_core.adapters.kubernetes.dump import load_cluster
from kruntimes_core.adapters.manifests import read_documents
from kruntimes_core.core.errors import ParseError, ValidationError


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_multi_document_yaml_and_list_kinds(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "dump.yaml",
        """\
apiVersion: v1
kind: PodList
items:
- apiVersion: v1
  kind: Pod
  metadata: {name: p1, labels: {runtime: bash}}
- apiVersion: v1
  kind: Pod
  metadata: {name: not-a-runtime-pod}
---
apiVersion: kruntimes.io/v1alpha1
kind: PersistentWorkspace
metadata: {name: w}
spec: {runtime: bash}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: ignored}
""",
    )
    snapshot = load_cluster([path])
    assert [p.metadata.name for p in snapshot.pods] == ["p1", "not-a-runtime-pod"]
    assert [p.runtime for p in snapshot.pods] == ["bash", ""]
    assert [w.metadata.name for w in snapshot.workspaces] == ["w"]


def test_positions_point_at_the_failing_field(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "bad.yaml",
        "apiVersion: kruntimes.io/v1alpha1\nkind: PersistentWorkspace\n"
        "metadata: {name: w}\nspec:\n  runtime: bash\n  cleanupPolicy: Never\n",
    )
    with pytest.raises(ValidationError) as caught:
        load_cluster([path])
    assert str(caught.value).startswith(f"{path}:6:18: spec.cleanupPolicy: must be one of")


def test_a_document_that_is_no_object_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "list.yaml", "- a\n- b\n")
    with pytest.raises(ValidationError, match="must be a Kubernetes object"):
        load_cluster([path])


def test_malformed_yaml_is_a_parse_error_with_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path, "broken.yaml", "a: [1, 2\nb: 3\n")
    with pytest.raises(ParseError) as caught:
        read_documents(path)
    assert str(caught.value).startswith(f"{path}:2:")


def test_malformed_json_is_a_parse_error_with_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path, "broken.json", '{"a": 1,\n}')
    with pytest.raises(ParseError) as caught:
        read_documents(path)
    assert str(caught.value).startswith(f"{path}:2:1:")
