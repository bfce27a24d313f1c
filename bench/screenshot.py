"""Screenshots of the real app on a real library: the main window with a cited answer,
and the PDF viewer at a cited page with the passage highlighted.

    python bench/screenshot.py --out out/screens                    # imports r-papers first (minutes)
    python bench/screenshot.py --library /tmp/rlib --out out/screens   # reuse (or build once) a library
    python bench/screenshot.py --chat /path/qwen.gguf --theme dark

Runs offscreen (QT_QPA_PLATFORM=offscreen unless set) and never touches the
user's settings: the config folder is a temporary one inside --out.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.core.events import Notice, Stage  # noqa: E402
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus" / "r-papers"
# q01 of bench/questions/r-papers.jsonl: its answer is on a known page (sandwich.pdf, page 5).
DEFAULT_QUESTION = (
    "When I call vcovHC on a fitted lm without specifying the type, which heteroskedasticity-consistent "
    "estimator do I get, and which other types can I request?"
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--library", help="library folder to use (built from --corpus when empty)")
    parser.add_argument("--corpus", default=str(DEFAULT_CORPUS), help="PDF folder to add (papers already in the library are skipped by hash)")
    parser.add_argument("--no-import", action="store_true", help="use the library as it is")
    parser.add_argument("--out", default=str(REPO / "out" / "screens"), help="folder for the PNGs")
    parser.add_argument("--question", default=DEFAULT_QUESTION)
    parser.add_argument("--chat", help="chat GGUF (default: the configured/provisioned one)")
    parser.add_argument("--embedding", help="embedding GGUF (default: the configured/provisioned one)")
    parser.add_argument("--theme", choices=["light", "dark"], default="light")
    parser.add_argument("--size", default="1600x1000", help="window size WxH")
    parser.add_argument("--citation", type=int, default=0, help="which citation to open (index in reading order)")
    parser.add_argument("--context", type=int, default=4096, help="chat context length (smaller prompts answer sooner)")
    args = parser.parse_args()

    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ.setdefault("RESEARCH_DESK_CONFIG_DIR", str(out / "config"))
    library = Path(args.library).resolve() if args.library else out / "library"

    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    from app.core.settings import Settings
    from app.ui.common import theme
    from app.ui.shell.main_window import MainWindow

    settings = Settings(library=str(library), theme=args.theme)
    if args.chat:
        settings.chat.path = str(Path(args.chat).resolve())
    if args.embedding:
        settings.embedding.path = str(Path(args.embedding).resolve())
    settings.chat.context_length = args.context
    settings.research.synthesis_timeout_s = 3600.0  # a slow machine must not cut the screenshot's answer

    app = QApplication(sys.argv[:1])
    theme.apply_theme(app, args.theme)
    window = MainWindow(settings, str(library))
    width, height = (int(v) for v in args.size.split("x"))
    window.resize(width, height)
    window.show()

    def pump(ms: int) -> None:
        loop = QEventLoop()
        QTimer.singleShot(ms, loop.quit)
        loop.exec()

    def wait(handle, what: str, limit_s: float = 3600) -> tuple[str, object]:
        started = time.monotonic()
        last = [""]

        def show(event) -> None:
            message = getattr(event, "detail", "") or getattr(event, "message", "")
            if isinstance(event, (Stage, Notice)) and message and message != last[0]:
                print(f"  {what}: {message}", flush=True)
                last[0] = message

        handle.event.connect(show)
        while handle.outcome is None:
            pump(100)
            if time.monotonic() - started > limit_s:
                handle.cancel()
                raise SystemExit(f"{what} took longer than {limit_s:.0f} s")
        print(f"  {what}: {handle.outcome[0]} in {time.monotonic() - started:.0f} s", flush=True)
        return handle.outcome

    def shot(widget, name: str) -> None:
        pump(400)
        path = out / f"{name}.png"
        widget.grab().save(str(path))
        print(f"wrote {path}", flush=True)

    try:
        while window.library.location == "":
            pump(100)
        pump(500)
        if not args.no_import:
            print(f"Adding {args.corpus} to {library} (known papers are skipped) …", flush=True)
            kind, report = wait(window.library.add([args.corpus]), "import")
            if kind != "finished":
                print(f"import {kind}: {report}", file=sys.stderr)
                return 1
        while window.host.busy:
            pump(100)
        shot(window, "1-library")

        print(f"Asking: {args.question}", flush=True)
        kind, result = wait(window.research.run(args.question), "research")
        if kind != "finished":
            shot(window, "2-error")
            print(f"research {kind}: {getattr(result, 'message', result)}", file=sys.stderr)
            return 1
        shot(window, "2-answer")

        cites = sorted(result.citations, key=lambda c: c.start)
        if cites:
            verified = [c for c in cites if c.status == "verified"] or cites
            pick = verified[min(args.citation, len(verified) - 1)]
            paper_id = pick.paper_id
            window.answer_view.click_citation(cites.index(pick))
        else:
            # The model cited nothing: open the best evidence passage instead (the same
            # viewer path as double-clicking it in the Evidence list), and say so.
            print("the answer has no citations; opening evidence passage 1 instead", file=sys.stderr)
            if not result.evidence:
                return 1
            paper_id = result.evidence[0].paper_id
            window.open_evidence(result.evidence[0])
        viewer = window.pdf_viewer
        started = time.monotonic()
        while not (viewer.rendered() and viewer.highlight is not None) and time.monotonic() - started < 20:
            pump(100)
        print(f"  viewer: page {viewer.current_page} (printed {viewer.page_label(viewer.current_page)}), "
              f"highlight {'found, %d lines' % len(viewer.highlight.rects) if viewer.highlight and viewer.highlight.found else 'not found'}")
        shot(window, "3-answer-and-pdf")
        shot(window.reader, "4-pdf-viewer")
        window.show_paper(paper_id, "summary")
        shot(window.reader, "5-summary")
        return 0
    finally:
        window.shutdown()
        window.close()


if __name__ == "__main__":
    sys.exit(main())
