"""Reading manifest files: YAML (multi-document) or JSON, with positions.

Each document keeps a table from field path to ``line:column`` so a
validation error found later can name the place in the file, not only the
field. PyYAML is the ``yaml`` extra; JSON files need nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path

from attrs import frozen

from kruntimes_core.core.errors import InvalidInputError, ParseError, PathPart
from kruntimes_core.resources.jsonvalue import JSONValue

Position = tuple[int, int]


@frozen
class Document:
    """One parsed document of a file."""

    value: JSONValue
    source: str
    positions: Mapping[tuple[PathPart, ...], Position]

    def locate(self, path: tuple[PathPart, ...]) -> str:
        """``source:line:column`` of the deepest known prefix of ``path``."""
        for end in range(len(path), -1, -1):
            found = self.positions.get(path[:end])
            if found is not None:
                return f"{self.source}:{found[0]}:{found[1]}"
        return self.source

    def locate_error(self, error: InvalidInputError) -> InvalidInputError:
        """``error`` (its path from this document's root) with its place in the file."""
        return type(error)(error.rule, error.path, location=self.locate(error.path))


def read_documents(path: Path) -> list[Document]:
    """Every document of a YAML or JSON file.

    Raises ParseError (with ``file:line:column`` when known) when the file
    cannot be read or parsed.
    """
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ParseError(f"cannot read file: {exc}", location=source) from None
    if path.suffix == ".json":
        return [_json_document(text, source)]
    return list(_yaml_documents(text, source))


def _json_document(text: str, source: str) -> Document:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(exc.msg, location=f"{source}:{exc.lineno}:{exc.colno}") from None
    return Document(value, source, {})


def _yaml_documents(text: str, source: str) -> Iterator[Document]:
    try:
        import yaml  # noqa: PLC0415  # the ``yaml`` extra; JSON works without it
    except ImportError:
        raise ParseError(
            "reading YAML needs PyYAML: pip install 'kruntimes_core[yaml]'", location=source
        ) from None
    loader = yaml.SafeLoader(text)
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            positions: dict[tuple[PathPart, ...], Position] = {}
            _collect_positions(node, (), positions)
            value = loader.construct_document(node)
            if value is not None:
                yield Document(value, source, positions)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
        raise ParseError(
            str(exc.problem or exc.context or "invalid YAML"), location=where
        ) from None
    except yaml.YAMLError as exc:
        raise ParseError(f"invalid YAML: {exc}", location=source) from None
    finally:
        loader.dispose()


def _collect_positions(
    node: object, path: tuple[PathPart, ...], positions: dict[tuple[PathPart, ...], Position]
) -> None:
    import yaml  # noqa: PLC0415

    assert isinstance(node, yaml.Node)
    positions[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                _collect_positions(value_node, (*path, str(key_node.value)), positions)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _collect_positions(item, (*path, index), positions)
