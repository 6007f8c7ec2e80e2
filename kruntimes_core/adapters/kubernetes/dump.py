"""A cluster dump (``kubectl get -o yaml`` output, List kinds included) as objects.

Objects of kinds no decision reads are skipped. Every pod is kept: a binding
is checked against its pod even after the pod lost its ``runtime`` label.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from attrs import frozen

from kruntimes_core.adapters.kubernetes.convert import from_json
from kruntimes_core.adapters.manifests import Document, read_documents
from kruntimes_core.core.errors import InvalidInputError, PathPart, ValidationError
from kruntimes_core.resources.cluster import ClusterSnapshot
from kruntimes_core.resources.jsonvalue import JSONValue
from kruntimes_core.resources.pod import Pod
from kruntimes_core.resources.run import Run
from kruntimes_core.resources.runtime import API_VERSION, Runtime
from kruntimes_core.resources.workspace import PersistentWorkspace
from kruntimes_core.workflows.snapshot import ControllerRevision
from kruntimes_core.workflows.spec import Workflow
from kruntimes_core.workflows.status import WorkflowRun

Object = Pod | Runtime | PersistentWorkspace | Run | Workflow | WorkflowRun | ControllerRevision

KINDS: dict[tuple[str, str], type[Object]] = {
    ("v1", "Pod"): Pod,
    (API_VERSION, "Runtime"): Runtime,
    (API_VERSION, "PersistentWorkspace"): PersistentWorkspace,
    (API_VERSION, "Run"): Run,
    (API_VERSION, "Workflow"): Workflow,
    (API_VERSION, "WorkflowRun"): WorkflowRun,
    ("apps/v1", "ControllerRevision"): ControllerRevision,
}


@frozen
class Dump:
    cluster: ClusterSnapshot
    workflows: tuple[Workflow, ...] = ()
    workflow_runs: tuple[WorkflowRun, ...] = ()
    revisions: tuple[ControllerRevision, ...] = ()


def load_dump(paths: Iterable[Path]) -> Dump:
    """Read every object of every file.

    Raises InvalidInputError (ParseError or ValidationError) naming the file,
    the position when known, and the field path.
    """
    objects = [
        obj for path in paths for document in read_documents(path) for obj in objects_of(document)
    ]
    cluster = ClusterSnapshot(
        runtimes=tuple(o for o in objects if isinstance(o, Runtime)),
        pods=tuple(o for o in objects if isinstance(o, Pod)),
        workspaces=tuple(o for o in objects if isinstance(o, PersistentWorkspace)),
        runs=tuple(o for o in objects if isinstance(o, Run)),
    )
    return Dump(
        cluster=cluster,
        workflows=tuple(o for o in objects if isinstance(o, Workflow)),
        workflow_runs=tuple(o for o in objects if isinstance(o, WorkflowRun)),
        revisions=tuple(o for o in objects if isinstance(o, ControllerRevision)),
    )


def load_cluster(paths: Iterable[Path]) -> ClusterSnapshot:
    return load_dump(paths).cluster


def objects_of(document: Document) -> Iterator[Object]:
    """The objects of a document of known kinds, items of List kinds included.

    Raises InvalidInputError for the first invalid object.
    """
    for path, raw in raw_objects(document):
        obj = structure(document, path, raw)
        if obj is not None:
            yield obj


def raw_objects(document: Document) -> Iterator[tuple[tuple[PathPart, ...], dict[str, JSONValue]]]:
    """Every object of a document as JSON, with its path (List items unfolded)."""
    return _raw_objects(document.value, (), document)


def structure(
    document: Document, path: tuple[PathPart, ...], raw: dict[str, JSONValue]
) -> Object | None:
    """One object of a known kind (None for other kinds); errors carry their position."""
    api_version, kind = raw.get("apiVersion"), raw.get("kind")
    try:
        if not isinstance(api_version, str) or not isinstance(kind, str):
            raise ValidationError("apiVersion and kind must be strings", ("kind",))
        cls = KINDS.get((api_version, kind))
        return None if cls is None else from_json(cls, raw)
    except InvalidInputError as error:
        raise document.locate_error(error.within(*path)) from None


def _raw_objects(
    value: JSONValue, path: tuple[PathPart, ...], document: Document
) -> Iterator[tuple[tuple[PathPart, ...], dict[str, JSONValue]]]:
    if not isinstance(value, dict):
        error = ValidationError("must be a Kubernetes object (a mapping)", path)
        raise document.locate_error(error)
    kind = value.get("kind")
    items = value.get("items")
    if isinstance(kind, str) and kind.endswith("List") and isinstance(items, list):
        for index, item in enumerate(items):
            yield from _raw_objects(item, (*path, "items", index), document)
        return
    yield path, value
