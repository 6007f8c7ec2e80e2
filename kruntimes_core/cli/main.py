"""``krt``: the command line front door.

Exit codes: 0 success, 1 a completed command whose result is negative, 2 bad
input (the error is printed on one line, ``krt: error: ...``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from kruntimes_core.core.errors import InvalidInputError
from kruntimes_core.core.timeutil import parse_rfc3339

EXIT_OK = 0
EXIT_PROBLEMS = 1
EXIT_INVALID_INPUT = 2


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="krt", description="kruntimes_core: deterministic reconcilers"
    )
    commands = parser.add_subparsers(dest="command", required=True)
    plan = commands.add_parser(
        "plan", help="print every decision for a cluster dump as JSON (docs/plan.md)"
    )
    plan.add_argument(
        "-f",
        "--filename",
        dest="files",
        action="append",
        required=True,
        type=Path,
        help="YAML or JSON objects (kubectl get -o yaml output); repeatable",
    )
    plan.add_argument(
        "--now",
        help="the decision time, RFC 3339 (default: the system clock)",
    )
    validate = commands.add_parser(
        "validate", help="check manifests; one line per problem, exit 1 if any"
    )
    validate.add_argument("files", nargs="+", type=Path, metavar="FILE")
    return parser


def _validate(args: argparse.Namespace) -> int:
    from kruntimes_core.cli.validate import problems  # noqa: PLC0415

    found = 0
    for line in problems(args.files):
        print(line)
        found += 1
    return EXIT_PROBLEMS if found else EXIT_OK


def _plan(args: argparse.Namespace) -> int:
    from kruntimes_core.adapters.kubernetes.dump import load_dump  # noqa: PLC0415
    from kruntimes_core.cli.plan import plan, render  # noqa: PLC0415

    try:
        now = parse_rfc3339(args.now) if args.now else datetime.now(UTC)
    except InvalidInputError as error:
        raise error.within("--now") from None
    sys.stdout.write(render(plan(load_dump(args.files), now)))
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    args = _build_parser().parse_args(argv)
    try:
        if args.command == "plan":
            return _plan(args)
        if args.command == "validate":
            return _validate(args)
    except InvalidInputError as error:
        print(f"krt: error: {error}", file=sys.stderr)
        return EXIT_INVALID_INPUT
    raise AssertionError(f"unhandled command {args.command!r}")


if __name__ == "__main__":
    sys.exit(main())
