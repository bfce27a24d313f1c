"""PyInstaller entry point: the same `research-desk` command line; no subcommand opens the window."""

import sys

from app.cli import main

if __name__ == "__main__":
    sys.exit(main())
