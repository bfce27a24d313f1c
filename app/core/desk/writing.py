"""Desk operations on the user's own writing: drafting a section, checking a manuscript."""

from __future__ import annotations

from pathlib import Path

from ..events import SentenceChecked, Task
from .research import ResearchOperations


class WritingOperations(ResearchOperations):
    def load_draft_context(self, path: str | Path):
        """The user's description of their work (YAML/JSON file) as a DraftContext."""
        from ..drafting import load_context

        return load_context(path)

    def draft(self, section: str, context, task: Task | None = None, *, time_budget: str | float | None = None,
              started_at: float | None = None):
        """One section of the user's paper from the library (drafting.DraftResult)."""
        from ..drafting import draft_section

        minutes = self.parse_minutes(time_budget)
        return draft_section(self, section, context, time_minutes=minutes, started_at=started_at, task=task or Task())

    def write_draft(self, result, folder: str | Path | None = None) -> dict[str, Path]:
        """The draft's .md, .tex, .bib and ledger files (default: results/drafts in the library)."""
        return self.write_draft_files(result, Path(folder) if folder else self.library.results_dir / "drafts")

    @staticmethod
    def write_draft_files(result, folder: str | Path) -> dict[str, Path]:
        """The draft's files into `folder` (needs no library: any thread may run it)."""
        from ..drafting import write_outputs

        return write_outputs(result, Path(folder))

    @staticmethod
    def draft_document(result, fmt: str) -> str:
        """The draft as a whole Markdown ("md") or LaTeX ("tex") document."""
        from ..drafting import latex_document, markdown_document

        return latex_document(result) if fmt == "tex" else markdown_document(result)

    def check(self, draft: str | Path, bib: str | Path | None = None, task: Task | None = None):
        """Every citation of a manuscript (LaTeX, Markdown, .docx) checked against the cited
        papers (check.CheckReport); a `SentenceChecked` event as each sentence is done."""
        from ..check import check_manuscript

        task = task or Task()
        return check_manuscript(self, Path(draft), Path(bib) if bib else None, task,
                                lambda sentence: task.emit(SentenceChecked(sentence)))

    @staticmethod
    def check_report_from(data: dict):
        """A saved check report (its JSON form) as a CheckReport again."""
        from ..check import CheckReport

        return CheckReport.from_dict(data)
