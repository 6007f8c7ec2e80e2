"""The layer contract (spec architecture.md): decision modules import no adapter.

import-linter checks the same contract in ``nox -s lint``; this test keeps it
in the test suite with nothing but the standard library.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "kruntimes_core"
PURE = ("core", "resources", "workspaces", "workflows", "artifacts", "scheduling")
FORBIDDEN = (
    "kruntimes_core.adapters",
    "kruntimes_core.cli",
    "kruntimes_core.testing",
    "cattrs",
    "structlog",
    "yaml",
    "kubernetes",
    "random",
    "time",
    "os",
    "subprocess",
)


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


PURE_FILES = sorted(p for layer in PURE for p in (PACKAGE / layer).rglob("*.py"))


@pytest.mark.parametrize("path", PURE_FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_pure_modules_import_no_adapter_client_or_clock(path: Path) -> None:
    bad = sorted(
        module
        for module in imported_modules(path)
        if any(module == f or module.startswith(f + ".") for f in FORBIDDEN)
    )
    assert bad == []


def test_the_contract_sees_the_pure_modules() -> None:
    assert len(PURE_FILES) >= 10
