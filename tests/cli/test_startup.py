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


def test_the_parser_reads_arguments_without_importing_the_core():
    # `research-desk --help` and a usage error answer at once, and a question's models can start
    # loading (cli.main, desk.load_models_ahead) while the core's imports run.
    code = "import sys, app.cli\napp.cli.build_parser()\nprint(sorted(m for m in ('lancedb', 'pymupdf', 'llama_cpp') if m in sys.modules))\n"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_a_command_line_answer_uses_the_models_loaded_ahead_and_loads_each_once(fact_library, cli_env, monkeypatch, capsys):
    import json
    import threading

    from app import cli
    from app.core.models import factory

    monkeypatch.setenv("RESEARCH_DESK_CONFIG_DIR", cli_env["RESEARCH_DESK_CONFIG_DIR"])
    loads: list[tuple[str, str]] = []  # (kind, thread)
    chat_backend, embedding_backend = factory._chat_backend, factory._embedding_backend
    monkeypatch.setattr(factory, "_chat_backend", lambda cfg: loads.append(("chat", threading.current_thread().name)) or chat_backend(cfg))
    monkeypatch.setattr(factory, "_embedding_backend",
                        lambda cfg: loads.append(("embedding", threading.current_thread().name)) or embedding_backend(cfg))
    code = cli.main(["--library", str(fact_library.library.root), "research", "How fast did the glacier retreat?", "--json"])
    assert code == 0
    record = json.loads(capsys.readouterr().out)
    assert record["answer"] and record["evidence"]
    assert loads == [("embedding", "models-ahead"), ("chat", "models-ahead")]
    assert factory._ahead is None  # dropped at the end of the command
