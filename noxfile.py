"""Developer and CI entry points: ``python3 -m nox -s <session>``."""

from __future__ import annotations

import nox

nox.options.default_venv_backend = "venv"
nox.options.sessions = ["lint", "typecheck", "tests"]

EXAMPLE_NOW = "2026-11-30T12:00:00Z"


@nox.session
def tests(session: nox.Session) -> None:
    """The whole test suite: examples, integration and property tests."""
    session.install("-e", ".[dev]")
    session.run("pytest", *session.posargs)


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy --strict over the package, the tests and the benchmarks."""
    session.install("-e", ".[dev]", "nox")
    session.run("mypy", "--strict")


@nox.session
def lint(session: nox.Session) -> None:
    """ruff (lint and format) and the layer contract (import-linter)."""
    session.install("-e", ".[dev]")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("lint-imports")


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmarks with ratios against baselines measured in the same run."""
    session.install("-e", ".[dev]")
    session.run("python", "-m", "benchmarks", *session.posargs)


@nox.session
def plan(session: nox.Session) -> None:
    """The main job for now: plan every decision for the example cluster dump."""
    session.install("-e", ".[yaml]")
    args = session.posargs or ["-f", "examples/cluster.yaml", "--now", EXAMPLE_NOW]
    session.run("krt", "plan", *args)
