"""A cluster dump (``kubectl get -o yaml`` output, List kinds included) as a snapshot.

Objects of kinds no decision reads yet are skipped; pods are kept only when
they carry the ``runtime`` label (Runtime Pods).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from kruntimes_core.adapters.kubernetes.convert import from_json
from kruntimes_core.adapters.manifests import Document, read_documents
from kruntimes_core.core.errors import InvalidInputError, PathPart, ValidationError
from kruntimes_core.resources.cluster import ClusterSnapshot
from kruntimes_core.resources.jsonvalue import JSONValue
from kruntimes_core.resources.pod import Pod
from kruntimes_core.resources.run import Run
from kruntimes_core.resources.runtime import API_VERSION, Runtime
from kruntimes_core.resources.workspace import PersistentWorkspace

_KINDS: dict[tuple[str, str], type[Pod | Runtime | PersistentWorkspace | Run]] = {
    ("v1", "Pod"): Pod,
    (API_VERSION, "Runtime"): Runtime,
    (API_VERSION, "PersistentWorkspace"): PersistentWorkspace,
    (API_VERSION, "Run"): Run,
}


def load_cluster(paths: Iterable[Path]) -> ClusterSnapshot:
    """Read every object of every file into one snapshot.

    Raises InvalidInputError (ParseError or ValidationError) naming the file,
    the position when known, and the field path.
    """
    return snapshot_of(doc for path in paths for doc in read_documents(path))


def snapshot_of(documents: Iterable[Document]) -> ClusterSnapshot:
    runtimes: list[Runtime] = []
    pods: list[Pod] = []
    workspaces: list[PersistentWorkspace] = []
    runs: list[Run] = []
    for document in documents:
        for path, raw in _objects(document.value, (), document):
            obj = _structure(document, path, raw)
            if isinstance(obj, Pod):
                if obj.runtime:
                    pods.append(obj)
            elif isinstance(obj, Runtime):
                runtimes.append(obj)
            elif isinstance(obj, PersistentWorkspace):
                workspaces.append(obj)
            elif isinstance(obj, Run):
                runs.append(obj)
    return ClusterSnapshot(tuple(runtimes), tuple(pods), tuple(workspaces), tuple(runs))


def _objects(
    value: JSONValue, path: tuple[PathPart, ...], document: Document
) -> Iterator[tuple[tuple[PathPart, ...], dict[str, JSONValue]]]:
    if not isinstance(value, dict):
        error = ValidationError("must be a Kubernetes object (a mapping)", path)
        raise document.locate_error(error)
    kind = value.get("kind")
    items = value.get("items")
    if isinstance(kind, str) and kind.endswith("List") and isinstance(items, list):
        for index, item in enumerate(items):
            yield from _objects(item, (*path, "items", index), document)
        return
    yield path, value


def _structure(
    document: Document, path: tuple[PathPart, ...], raw: dict[str, JSONValue]
) -> Pod | Runtime | PersistentWorkspace | Run | None:
    api_version, kind = raw.get("apiVersion"), raw.get("kind")
    try:
        if not isinstance(api_version, str) or not isinstance(kind, str):
            raise ValidationError("apiVersion and kind must be strings", ("kind",))
        cls = _KINDS.get((api_version, kind))
        return None if cls is None else from_json(cls, raw)
    except InvalidInputError as error:
        raise document.locate_error(error.within(*path)) from None
