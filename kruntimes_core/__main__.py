import sys

from kruntimes_core.cli.main import main

sys.exit(main())
