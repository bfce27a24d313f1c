"""What a process start loads: PyMuPDF without its optional layout model (app/pymupdf_layout.py)."""

import subprocess
import sys

from tests.support.paths import REPO


def test_pymupdf_loads_without_its_layout_model_and_still_reads_tables(tmp_path):
    # A fresh interpreter: this test process may have loaded PyMuPDF before `app`.
    code = (
        "import sys, app, pymupdf\n"
        "doc = pymupdf.open()\n"
        "page = doc.new_page()\n"
        "for i in range(4):\n"
        "    page.draw_line((50, 100 + 20 * i), (300, 100 + 20 * i))\n"
        "for x in (50, 175, 300):\n"
        "    page.draw_line((x, 100), (x, 160))\n"
        "page.insert_text((60, 115), 'dose')\n"
        "page.insert_text((185, 115), 'effect')\n"
        "tables = page.find_tables(use_layout=False).tables\n"
        "print(len(tables), sys.modules.get('pymupdf.layout') is not None, any(m.startswith('pymupdf.layout.') for m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1", "False", "False"]
    assert "pymupdf_layout" not in out.stdout + out.stderr  # no suggestion to install it
