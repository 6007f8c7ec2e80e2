import sys

from benchmarks.workspaces import main

sys.exit(main(sys.argv[1:]))
