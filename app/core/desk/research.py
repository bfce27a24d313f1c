"""Desk operations on questions: research (standard and deep), improve, save, export, verify a shared bundle."""

from __future__ import annotations

from pathlib import Path

from ..errors import ResearchDeskError
from ..events import Task
from ..records import ResearchResult
from ..scope import Scope
from ..share.records import VerifyReport
from .history import HistoryOperations
from .papers import STATE_KEY


class ResearchOperations(HistoryOperations):
    def research(self, question: str, task: Task | None = None, *, overrides: dict | None = None,
                 evidence_only: bool = False, scope: Scope | None = None) -> ResearchResult:
        """A cited answer (or, with evidence_only, the evidence without any model time).

        `overrides` are ResearchParams fields for this question only (None values ignored);
        `scope` limits what it reads and cites to some papers, a tag or a collection.
        The answer becomes the library's last result, which `improve`/`export` continue,
        and is kept in the history."""
        funnel = self.funnel(task, overrides, scope)
        result = funnel.run(question, evidence_only=evidence_only)
        _mark_scope(result, scope)
        result.extra["run"] = self.run_record(funnel.params)
        if not evidence_only:
            self._remember(result)
        return result

    def warm_up(self) -> bool:
        """Load the chat model and let it read the fixed part of the answer prompt now (front ends
        call this when a library opens, while the user types), so the first answer starts from
        there. False (and nothing raised) where the models are not ready: research says why."""
        if not self.model_state().ready or self.settings.chat.backend != "llamacpp":
            return False  # a server loads its own model; nothing to read ahead here
        from ..research.answer.prompt import read_answer_beginning

        # Not through a funnel: that would open the library and load the embedding model, which
        # the question's own funnel may be doing on another thread at this moment.
        try:
            read_answer_beginning(self.chat(), self.settings.research)
        except ResearchDeskError:
            return False
        return True

    def deep_research(self, question: str, task: Task | None = None, *, time_budget: str | float | None = None,
                      started_at: float | None = None, scope: Scope | None = None) -> ResearchResult:
        """The agentic loop within a time budget (minutes, "unlimited", or None for the default).

        `started_at` (monotonic) makes the budget count from when the user asked, model
        loading included; a cancelled run raises DeepCancelled carrying what was gathered."""
        from ..research.deep.runner import DeepCancelled, DeepResearch

        minutes = self.parse_minutes(time_budget)
        funnel = self.funnel(task, scope=scope)
        deep = DeepResearch(funnel, self.settings.deep, deep=True, time_minutes=minutes, started_at=started_at)
        try:
            result = deep.run(question)
        except DeepCancelled as exc:
            exc.deep = deep  # "synthesize from what was gathered" keeps the run's methodology
            exc.scope = scope
            raise
        _mark_scope(result, scope)
        result.extra["run"] = self.run_record(funnel.params)
        self._remember(result)
        return result

    def synthesize_partial(self, cancelled_exc, task: Task | None = None) -> ResearchResult:
        """After a cancelled deep run: the report from the evidence it had gathered."""
        from ..research.deep.runner import DeepResearch

        old = getattr(cancelled_exc, "deep", None)
        scope = getattr(cancelled_exc, "scope", None)
        funnel = self.funnel(task, scope=scope)
        deep = DeepResearch(funnel, self.settings.deep, deep=True, time_minutes=None)
        if old is not None:  # keep what the cancelled run did, for the Methodology section
            deep.resume(old)
        result = deep.synthesize(cancelled_exc.partial)
        _mark_scope(result, scope)
        result.extra["run"] = self.run_record(funnel.params)
        self._remember(result)
        return result

    def improve(self, feedback: str, task: Task | None = None, previous: ResearchResult | None = None) -> ResearchResult:
        """The last answer (or `previous`, e.g. one reopened from the history) revised with the
        user's feedback, within the scope it was asked in."""
        from ..research.followups import improve

        previous = previous or self._require_last()
        funnel = self.funnel(task, scope=Scope.from_dict(previous.extra.get("scope")))
        result = improve(funnel, previous, feedback)
        result.extra["run"] = self.run_record(funnel.params)
        self._remember(result)
        return result

    def save_result(self, result: ResearchResult | None = None) -> Path:
        """Into the library's results/ as Markdown with front matter."""
        from ..research.followups import save_result

        return save_result(self.library, result or self._require_last(), model=self.settings.chat.describe())

    def export(self, fmt: str, path: str | Path | None = None, result: ResearchResult | None = None,
               task: Task | None = None) -> Path:
        """The last answer (or `result`): Markdown ("md"), its references as BibTeX ("bibtex"), a
        self-contained web page with a highlighted crop of every cited page ("html"), an evidence
        bundle that `verify_bundle` re-checks offline ("bundle", a .zip), or annotated copies of the
        cited PDFs ("annotated-pdf", `path` a folder). See history.py's `_export`."""
        return self._export(fmt, path, result or self._require_last(), task)

    def verify_bundle(self, bundle: str | Path, pdfs: str | Path | None = None) -> "VerifyReport":
        """Whether every quote of an evidence bundle stands on its page of the PDF with its SHA-256:
        the PDFs found by hash in the folder `pdfs`, or else in this desk's library (never created
        here: a library that is not there is an error). Offline, no model."""
        from ..library.store import Library
        from ..share.verify import verify_bundle

        if pdfs is not None:
            return verify_bundle(Path(bundle), pdfs=Path(pdfs))
        library = self._library or Library(self.location, create=False, endpoint=self.library_endpoint())
        return verify_bundle(Path(bundle), library=library)

    @staticmethod
    def export_file_name(result: ResearchResult, fmt: str) -> str:
        """A file name for exporting `result` in `fmt` (see `export`), from its question."""
        from ..research.followups import slugify
        from .history import SUFFIXES

        return slugify(result.query) + SUFFIXES.get(fmt, ".md")

    def cited_paper(self, number: int, result: ResearchResult | None = None) -> str:
        """The id of reference `number` (1-based) of the last answer."""
        from ..research.followups import reference

        try:
            return reference(result or self._require_last(), number)
        except IndexError as exc:
            raise ResearchDeskError(str(exc)) from exc

    @staticmethod
    def answer_markdown(result: ResearchResult) -> str:
        """The answer with its numbered references, as the CLI prints and exports it."""
        from ..research.funnel import answer_with_references

        return answer_with_references(result)

    @staticmethod
    def parse_minutes(value: str | float | None) -> float | None:
        """A time budget in minutes from "5", 2.5 or "unlimited" (None); the default when None."""
        from ..research.deep.runner import parse_time

        if isinstance(value, (int, float)):
            return float(value)
        try:
            return parse_time(value)
        except ValueError as exc:
            raise ResearchDeskError(f"Bad time budget {value!r}: {exc}.", "Give minutes (e.g. 2) or 'unlimited'.") from exc

    def _remember(self, result: ResearchResult) -> None:
        self.record_answer(result)  # first: the state file then holds the answer's history number
        self.library.save_state({STATE_KEY: result.to_dict()})

    def _require_last(self) -> ResearchResult:
        last = self.last_result()
        if last is None:
            raise ResearchDeskError("There is no previous answer in this library.", 'Ask a question first: research-desk research "…"')
        return last


def _mark_scope(result: ResearchResult, scope: Scope | None) -> None:
    """The scope travels with the answer: shown, kept in the history, and reused by improve."""
    if scope is not None and not scope.empty:
        result.extra["scope"] = scope.to_dict()
