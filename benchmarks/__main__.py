"""``python -m benchmarks [workspaces|workflows] [ARGS...]``: run one or all benchmarks."""

import sys

from benchmarks import scheduling, workflows, workspaces

SUITES = {
    "workspaces": workspaces.main,
    "workflows": workflows.main,
    "scheduling": scheduling.main,
}

if __name__ == "__main__":
    args = sys.argv[1:]
    if args and args[0] in SUITES:
        sys.exit(SUITES[args[0]](args[1:]))
    for name, suite in SUITES.items():
        print(f"== {name}")
        suite([])
