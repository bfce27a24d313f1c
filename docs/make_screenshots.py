"""The user guide's screenshots (docs/guide.md), taken from the real window on a real library.

    .venv/bin/python docs/make_screenshots.py --library /tmp/my-lib-copy     # a library to use (a copy!)
    .venv/bin/python docs/make_screenshots.py                                # imports ../shared/corpus/r-papers first
    .venv/bin/python docs/make_screenshots.py --only library,models          # a few, without the model

Writes docs/guide/*.png: library, answer, viewer (a citation opened at its page), share (the answer
exported as a web page, photographed by headless Chromium where it is installed), check (a short
draft checked against its sources), draft (a section drafted in a few minutes), models (where the
models are chosen), and, where the window has them, history and viewer-find. Each shot is
independent: one that fails is reported and the others are still taken. The models come from
the models folder ($RESEARCH_DESK_MODELS_DIR) or --chat/--embedding; the settings are a temporary
copy, never the user's. Runs offscreen. The library is written to (answers, the check's cache):
pass a copy.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SHOTS = ("library", "answer", "viewer", "share", "history", "check", "draft", "models")
QUESTION = ("When I call vcovHC on a fitted lm without specifying the type, which heteroskedasticity-consistent "
            "estimator do I get, and which other types can I request?")
HISTORY_QUESTION = "Which optimizers can lmer use to fit a linear mixed-effects model?"
# A short manuscript for the Check tab: three sentences its sources support, one they do not.
DRAFT = """# Robust inference in R

Linear mixed-effects models can be fitted by maximum likelihood or REML with the lmer function
of the lme4 package [@bates2015lme4]. Since sandwich 2.4.0, clustered and panel covariances are
provided through methods for the two generic functions estfun() and bread() [@zeileis2020various].
The strucchange package computes, plots and tests sequences of F statistics with the supF, aveF
and expF tests [@zeileis2002strucchange]. The supF test was first introduced for linear
mixed-effects models in lme4 [@bates2015lme4].
"""
DRAFT_CONTEXT = dict(
    concept="We compare cluster-robust covariance estimators for regression models in R when "
            "observations are grouped and errors are correlated within clusters.",
    hypothesis="Small-sample adjusted (HC3-type) clustered estimators keep coverage close to nominal "
               "with as few as 20 clusters.",
)


def parse() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--library", help="library folder (a copy: answers are saved into it); default out/guide-library, "
                   "imported from --corpus")
    p.add_argument("--corpus", default=str(REPO.parent / "shared" / "corpus" / "r-papers"))
    p.add_argument("--out", default=str(REPO / "docs" / "guide"))
    p.add_argument("--only", default="", help=f"comma-separated subset of {','.join(SHOTS)}")
    p.add_argument("--chat", help="chat GGUF (default: the starter model in the models folder)")
    p.add_argument("--embedding", help="embedding GGUF (default: the starter model in the models folder)")
    p.add_argument("--threads", type=int, default=0, help="llama.cpp threads (0: its choice)")
    p.add_argument("--size", default="1520x900", help="window size WxH (the reader needs about 1500 px beside the panes)")
    p.add_argument("--draft-minutes", type=float, default=3.0, help="the Draft tab's time budget")
    p.add_argument("--theme", choices=["light", "dark"], default="light")
    return p.parse_args()


class Session:
    """The window and the small waits around it."""

    def __init__(self, args, out: Path, library: Path) -> None:
        from PySide6.QtWidgets import QApplication

        from app.core.settings import Settings
        from app.ui.common import theme
        from app.ui.shell.main_window import MainWindow

        settings = Settings(library=str(library), theme=args.theme)
        for cfg, path in ((settings.chat, args.chat), (settings.embedding, args.embedding)):
            if path:
                cfg.path = str(Path(path).resolve())
            cfg.threads = args.threads
        settings.research.synthesis_timeout_s = 3600.0  # a loaded machine must not cut the answer short
        self.app = QApplication.instance() or QApplication(sys.argv[:1])
        theme.apply_theme(self.app, args.theme)
        self.window = MainWindow(settings, str(library))
        self.window.resize(*(int(v) for v in args.size.split("x")))
        self.window.show()
        self.out = out
        self.work = Path(tempfile.gettempdir()) / "my-paper"  # the check's manuscript, under a name a user might give
        self.work.mkdir(exist_ok=True)

    def pump(self, ms: int) -> None:
        from PySide6.QtCore import QEventLoop, QTimer

        loop = QEventLoop()
        QTimer.singleShot(ms, loop.quit)
        loop.exec()

    def until(self, done, limit_s: float, what: str) -> bool:
        started = time.monotonic()
        while not done():
            self.pump(100)
            if time.monotonic() - started > limit_s:
                print(f"  {what}: not done after {limit_s:.0f} s", flush=True)
                return False
        return True

    def wait(self, handle, what: str, limit_s: float = 3600):
        started = time.monotonic()
        self.until(lambda: handle.outcome is not None, limit_s, what)
        if handle.outcome is None:
            handle.cancel()
            self.until(lambda: handle.outcome is not None, 60, f"{what} (cancel)")
        print(f"  {what}: {handle.outcome[0] if handle.outcome else 'no outcome'} in {time.monotonic() - started:.0f} s", flush=True)
        return handle.outcome or ("timeout", None)

    def idle(self) -> None:
        self.until(lambda: not self.window.host.busy, 600, "worker")
        self.pump(600)

    def shot(self, widget, name: str) -> Path:
        self.pump(500)
        path = self.out / f"{name}.png"
        widget.grab().save(str(path))
        print(f"wrote {path.relative_to(REPO) if path.is_relative_to(REPO) else path}", flush=True)
        return path

    def tab(self, label: str, inside=None):
        """(tab widget, index) of the first tab whose text starts with `label`, anywhere in `inside`."""
        from PySide6.QtWidgets import QTabWidget

        for tabs in (inside or self.window).findChildren(QTabWidget):
            for i in range(tabs.count()):
                if tabs.tabText(i).replace("&&", "&").lower().startswith(label.lower()):
                    return tabs, i
        return None, -1

    def show_tab(self, label: str) -> bool:
        tabs, i = self.tab(label)
        if tabs is None:
            return False
        tabs.setCurrentIndex(i)
        self.pump(300)
        return True


# -- the shots ---------------------------------------------------------------------------------
def shot_library(s: Session, args) -> None:
    s.show_tab("Research")
    s.shot(s.window, "library")


def shot_answer(s: Session, args) -> None:
    s.show_tab("Research")
    print(f"Asking: {QUESTION}", flush=True)
    kind, result = s.wait(s.window.research.run(QUESTION), "research")
    if kind != "finished":
        s.shot(s.window, "answer-failed")
        raise RuntimeError(f"research {kind}: {getattr(result, 'message', result)}")
    s.answer = result
    s.shot(s.window, "answer")


def shot_viewer(s: Session, args) -> None:
    result = getattr(s, "answer", None)
    if result is None:
        raise RuntimeError("needs the answer shot first")
    cites = sorted(result.citations, key=lambda c: c.start)
    if cites:
        pick = next((c for c in cites if c.status == "verified"), cites[0])
        s.window.answer_view.click_citation(cites.index(pick))
    elif result.evidence:
        s.window.open_evidence(result.evidence[0])
    viewer = s.window.pdf_viewer
    s.until(lambda: viewer.rendered() and viewer.highlight is not None, 30, "viewer")
    s.shot(s.window, "viewer")
    # Find in the PDF, where the viewer has it: its action (Ctrl+F), then the field it focuses.
    from PySide6.QtWidgets import QApplication, QLineEdit

    from PySide6.QtGui import QAction

    find = next((a for a in s.window.findChildren(QAction)
                 if a.text().replace("&", "").lower().startswith("find") and a.isEnabled()), None)
    if find is not None:
        find.trigger()
        s.pump(300)
        field = QApplication.focusWidget()
        if isinstance(field, QLineEdit):
            from PySide6.QtCore import Qt
            from PySide6.QtTest import QTest

            QTest.keyClicks(field, "HC3")
            QTest.keyClick(field, Qt.Key.Key_Return)
            s.pump(2000)
            s.shot(s.window, "viewer-find")


def shot_share(s: Session, args) -> None:
    """The answer shared as a web page (Export → Share as web page…), as a browser shows it."""
    import subprocess

    if getattr(s, "answer", None) is None:
        raise RuntimeError("needs the answer shot first")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("  share: chromium is not installed; skipped", flush=True)
        return
    page = s.work / "answer.html"
    kind, written = s.wait(s.window.research.export("html", str(page)), "export")
    if kind != "finished":
        raise RuntimeError(f"export {kind}: {written}")
    shot = s.out / "share.png"
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                    "--disable-component-update", "--no-first-run", f"--user-data-dir={s.work / 'chromium'}",
                    "--hide-scrollbars", f"--screenshot={shot}", "--window-size=1000,1500", page.as_uri()],
                   check=True, capture_output=True, timeout=120)
    print(f"wrote {shot.relative_to(REPO) if shot.is_relative_to(REPO) else shot}", flush=True)


def shot_history(s: Session, args) -> None:
    s.window.reader.hide()  # the tab alone, as after Ctrl+W
    if not s.show_tab("History"):
        print("  history: the window has no History tab yet; skipped", flush=True)
        return
    from PySide6.QtWidgets import QTableView

    # A second answer, so that the list shows more than the one just taken.
    s.show_tab("Research")
    print(f"Asking: {HISTORY_QUESTION}", flush=True)
    s.wait(s.window.research.run(HISTORY_QUESTION), "research")
    s.window.reader.hide()
    s.show_tab("History")
    tabs, i = s.tab("History")
    table = next(iter(tabs.widget(i).findChildren(QTableView)), None)
    s.pump(1500)  # the history is read on a worker
    if table is not None and table.model() is not None and table.model().rowCount() > 0:
        table.selectRow(0)  # the answer just asked, as a user would pick it
    s.shot(s.window, "history")
    s.show_tab("Research")


def shot_check(s: Session, args) -> None:
    draft = s.work / "robust-inference.md"
    draft.write_text(DRAFT, encoding="utf-8")
    bib = draft.with_suffix(".bib")
    shutil.copy2(REPO / "bench" / "check" / "r-papers.bib", bib)
    s.window.reader.hide()
    s.show_tab("Check")
    s.window.checker.tab.set_draft(str(draft), str(bib))
    s.pump(500)
    s.wait(s.window.checker.run(str(draft), str(bib)), "check")
    s.shot(s.window, "check")


def shot_draft(s: Session, args) -> None:
    from app.core.desk import DraftContext

    s.window.reader.hide()
    s.show_tab("Draft")
    pane = s.window.draft_pane
    context = DraftContext(**DRAFT_CONTEXT)
    pane.form.set_context(context)
    pane.form.set_section("related-work")
    pane.form.budget.setValue(int(round(args.draft_minutes)))  # the form shows the budget the run has
    s.wait(s.window.draft.run("related-work", context, args.draft_minutes), "draft", limit_s=args.draft_minutes * 60 + 900)
    s.shot(s.window, "draft")


def shot_models(s: Session, args) -> None:
    s.idle()
    if s.show_tab("Models"):  # a Models tab in the window, where there is one
        s.shot(s.window, "models")
        return
    dialog = s.window.open_settings("Models")
    s.pump(1500)  # it lists LM Studio's models on the helper worker
    s.shot(dialog, "models")
    dialog.reject()


def main() -> int:
    args = parse()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    config = Path(tempfile.mkdtemp(prefix="rd-shots-"))
    os.environ["RESEARCH_DESK_CONFIG_DIR"] = str(config)  # never the user's settings or window state
    only = [n.strip() for n in args.only.split(",") if n.strip()] or list(SHOTS)
    library = Path(args.library).resolve() if args.library else REPO / "out" / "guide-library"

    s = Session(args, out, library)
    failed: list[str] = []
    try:
        s.until(lambda: s.window.library.location != "", 120, "library")
        if not args.library:  # papers already there are skipped by their hash
            kind, report = s.wait(s.window.library.add([args.corpus]), "import")
            if kind != "finished":
                raise SystemExit(f"import {kind}: {report}")
        s.idle()
        for name in SHOTS:
            if name not in only:
                continue
            print(f"[{name}]", flush=True)
            try:
                globals()[f"shot_{name}"](s, args)
            except Exception:  # noqa: BLE001 - one failed shot must not cost the others
                traceback.print_exc()
                failed.append(name)
            s.idle()
    finally:
        s.window.shutdown()
        s.window.close()
        shutil.rmtree(config, ignore_errors=True)
        shutil.rmtree(s.work, ignore_errors=True)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
