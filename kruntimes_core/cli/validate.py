"""``krt validate FILE...``: every problem of every manifest, one line each.

Each object is checked on its own (fields, then for Workflows and
WorkflowRuns the job graph), so one bad object does not hide the others.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from kruntimes_core.adapters.kubernetes.dump import raw_objects, structure
from kruntimes_core.adapters.manifests import Document, read_documents
from kruntimes_core.core.errors import InvalidInputError, PathPart
from kruntimes_core.workflows.spec import Workflow
from kruntimes_core.workflows.status import WorkflowRun
from kruntimes_core.workflows.validation import validate_jobs, validate_workflow


def problems(paths: Sequence[Path]) -> Iterator[str]:
    """One line per problem, files in the order given, objects in file order."""
    for path in paths:
        try:
            documents = read_documents(path)
        except InvalidInputError as error:
            yield str(error)
            continue
        for document in documents:
            yield from _document_problems(document)


def _document_problems(document: Document) -> Iterator[str]:
    try:
        found = list(raw_objects(document))
    except InvalidInputError as error:
        yield str(error)
        return
    for path, raw in found:
        try:
            obj = structure(document, path, raw)
            if obj is not None:
                _check_graph(obj, path, document)
        except InvalidInputError as error:
            yield str(error)


def _check_graph(obj: object, path: tuple[PathPart, ...], document: Document) -> None:
    try:
        if isinstance(obj, Workflow):
            validate_workflow(obj.spec)
        elif isinstance(obj, WorkflowRun):
            validate_jobs(obj.spec.jobs)
    except InvalidInputError as error:
        raise document.locate_error(error.within(*path)) from None
