"""The wheel carries the app's data: resources/ (prompts, icons, stylesheet) and the model
catalog, copied into the package as app/_data/ (app/core/paths.py looks there first).

All metadata is in pyproject.toml; this file only adds that copy to build_py. A checkout
(and an editable install, which runs from the checkout) reads them at the repository root.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
DATA = {"resources": "resources", "models/catalog.json": "models/catalog.json"}


class BuildWithData(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return  # runs from the checkout, where paths.py finds them at the root
        target = Path(self.build_lib) / "app" / "_data"
        for source, name in DATA.items():
            src, dst = ROOT / source, target / name
            dst.parent.mkdir(parents=True, exist_ok=True)
            if src.is_dir():
                shutil.copytree(src, dst, dirs_exist_ok=True,
                                ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            else:
                shutil.copy2(src, dst)


setup(cmdclass={"build_py": BuildWithData})
