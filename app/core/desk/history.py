"""Desk operations on the history of answers (issue 53): list, search, reopen, delete, record, export;
and the one export path every answer takes (the last one, or one of the history): Markdown, BibTeX,
and the shared forms of issue 81 (a web page, an evidence bundle, annotated PDFs: app/core/share/)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..errors import ResearchDeskError
from ..events import Notice, Progress, Stage, Task
from ..history import HistoryEntry, HistoryRecord, HistoryStore
from ..records import ResearchResult
from ..settings import ModelConfig
from .papers import PaperOperations

log = logging.getLogger(__name__)

EXPORT_FORMATS = ("md", "bibtex", "html", "bundle", "annotated-pdf")
SUFFIXES = {"md": ".md", "bibtex": ".bib", "html": ".html", "bundle": ".zip", "annotated-pdf": "-annotated"}


class HistoryOperations(PaperOperations):
    def _history(self) -> HistoryStore:
        # One store per library object: a new library (settings changed) gets its own.
        store = getattr(self, "_history_store", None)
        if store is None or store.library is not self.library:
            store = self._history_store = HistoryStore(self.library)
        return store

    def history(self, search: str = "", limit: int | None = None) -> Sequence[HistoryEntry]:
        """The answers asked of this library, newest first; `search`: every word in the question or answer.

        A read-only sequence: its entries are built as they are read (history/listing.py)."""
        return self._history().entries(search, limit)

    def history_record(self, number: int) -> HistoryRecord:
        """Answer `number` as it was (claims, verdicts, citations, evidence, timings, model)."""
        return self._history().get(number)

    def delete_history(self, number: int) -> None:
        self._history().delete(number)

    def history_count(self) -> int:
        return self._history().count()

    def record_answer(self, result: ResearchResult) -> HistoryEntry | None:
        """Keep `result` in the history (every research run does this). A failed write (a full
        disk, a bucket that refuses) costs this one record, never the answer: None, and a note."""
        try:
            return self._history().add(result, self.settings.chat.describe())
        except (OSError, ResearchDeskError, RuntimeError, ValueError) as exc:  # Lance raises OSError/RuntimeError
            log.warning("could not keep the answer in the history", exc_info=True)
            result.messages.append(f"This answer could not be kept in the history: {getattr(exc, 'message', exc)}")
            return None

    def export_history(self, number: int, fmt: str, path: str | Path | None = None, task: Task | None = None) -> Path:
        """Answer `number` of the history exported as `export` exports the last answer (any of
        EXPORT_FORMATS), with the model and the date it was asked as the history keeps them."""
        record = self.history_record(number)
        return self._export(fmt, path, record.result, task, model=record.entry.model, asked_at=record.entry.asked_at)

    def _export(self, fmt: str, path: str | Path | None, result: ResearchResult, task: Task | None = None, *,
                model: str = "", asked_at: str = "") -> Path:
        """The one export path: Markdown with references ("md"), BibTeX of the cited papers ("bibtex"),
        the self-contained web page ("html"), the evidence bundle ("bundle", a .zip), or annotated
        copies of the cited PDFs ("annotated-pdf", a folder). `path`: the file (the folder for
        annotated-pdf); None: results/ in the library, named after the question."""
        from ..research.followups import export_bibtex, export_markdown, slugify

        if fmt not in EXPORT_FORMATS:
            raise ResearchDeskError(f"Unknown export format {fmt!r}.", "Use " + ", ".join(EXPORT_FORMATS) + ".")
        out = Path(path) if path else self.library.results_dir / (slugify(result.query) + SUFFIXES[fmt])
        run = result.extra.get("run") or {}
        model = model or run.get("model") or self.settings.chat.describe()  # the history's and Markdown's form
        try:
            if fmt == "bibtex":
                return export_bibtex(self.library, result, out)
            if fmt == "md":
                return export_markdown(result, out, model=model)
            return self._share(fmt, out, result, task or Task(), model=model, asked_at=asked_at)
        except OSError as exc:  # a folder that cannot be made, a full disk, no permission: say where
            where = exc.filename or out
            raise ResearchDeskError(f"The export could not be written: {exc.strerror or exc} ({where}).",
                                    "Choose another file or folder, one you may write to, on a disk with space.") from exc

    def _share(self, fmt: str, out: Path, result: ResearchResult, task: Task, *, model: str, asked_at: str) -> Path:
        """Issue 81: the answer with its evidence, as a page, a bundle or annotated PDFs."""
        from ..share.annotate import annotate_pdfs
        from ..share.answer import evidence_cards, shared_answer
        from ..share.bundle import write_bundle
        from ..share.crops import crop_cards
        from ..share.page import render_page
        from ..library.atomic_files import atomic_write_text

        run = result.extra.get("run") or {}
        if not asked_at and result.extra.get("history") is not None:
            try:
                asked_at = self.history_record(int(result.extra["history"])).entry.asked_at
            except ResearchDeskError:
                asked_at = ""  # deleted from the history since: the export's own time stands in
        answer = shared_answer(self.library, result, model=model, judge=run.get("judge") or self._judge_name(),
                               settings=run.get("settings") or asdict(self.settings.research),
                               settings_recorded=bool(run.get("settings")), asked_at=asked_at)
        if not answer.citations:
            raise ResearchDeskError("This answer cites no page, so there is no evidence to share.",
                                    "Export it as Markdown instead, or ask again for a cited answer.")
        if fmt == "annotated-pdf":
            task.emit(Stage("annotate", 1, 1, f"annotating the PDFs of {len(answer.papers)} papers"))
            written = annotate_pdfs(answer, out, notice=lambda m: task.emit(Notice(m, level="warning")))
            if not written:
                raise ResearchDeskError("None of the cited papers' PDFs is in the library: nothing to annotate.",
                                        "Add the papers again, then export.")
            return out
        cards = evidence_cards(answer)
        task.emit(Stage("crops", 1, 2, f"picturing {len(cards)} cited pages"))
        done = iter(range(1, len(cards) + 1))
        crop_cards(answer, cards, step=lambda where: (task.check(), task.emit(Progress(next(done), len(cards), "pages", where))))
        task.emit(Stage("page", 2, 2, "writing the page"))
        page = render_page(answer, cards)
        if fmt == "bundle":
            return write_bundle(answer, page, out)
        atomic_write_text(out, page)
        return out

    def _judge_name(self) -> str:
        if not self.settings.research.check_support:
            return "none (the support check is off)"
        try:
            cfg = self.judge_config()
        except ResearchDeskError:
            return _model_name(self.settings.judge)
        return _model_name(cfg) if cfg is not None else "the chat model"

    def run_record(self, params: Any = None) -> dict[str, Any]:
        """What an answer keeps of how it was made (the model, the judge, the research settings):
        the evidence bundle's manifest reports it. Models by name, never by where they live."""
        try:
            chat = self.chat_config()
        except ResearchDeskError:
            chat = self.settings.chat
        return {"model": _model_name(chat), "judge": self._judge_name(),
                "settings": asdict(params if params is not None else self.settings.research)}


def _model_name(cfg: ModelConfig) -> str:
    """"llama.cpp: qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", "LM Studio: qwen3-8b": what a shared
    answer may say of a model (no folder of the user's, no server address)."""
    if cfg.backend == "llamacpp":
        return f"llama.cpp: {Path(cfg.path).name or '(no file)'}"
    if cfg.backend == "lmstudio":
        return f"LM Studio: {cfg.model or '(loaded model)'}"
    return f"OpenAI-compatible server: {cfg.model or '(default model)'}"
