"""The Desk: the core's one API.

Front ends (the CLI, the window, scripts) call only `Desk` methods and use the
record types (records, events, errors, settings, and the results re-exported
here). Each method takes typed arguments and returns typed results; long ones
take an `events.Task` to report progress and be cancelled. The methods live in
small mixins by subject, stacked in this order:

    DeskParts           settings, the library, lazily loaded models  (parts.py)
    PaperOperations     import, list, edit, summarize, validate       (papers.py)
    HistoryOperations   the answers kept: list, search, reopen, delete; every export (history.py)
    ResearchOperations  research, deep research, improve, export, verify (research.py)
    WritingOperations   drafting, manuscript check                     (writing.py)
    RatingOperations    judge calibrated, models rated, judge chosen   (rating.py)
    ModelOperations     models list/setup/use, settings                (models.py)

The names here are loaded when first used (PEP 562): opening the door costs nothing, so the
command line parses its arguments and starts loading a question's models (ahead.py) before the
core's heavy imports (LanceDB, the PDF stack) run beside that load.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what _EXPORTS loads, for type checkers and the bundle's import scan
    from ..check.report import FLAGGED as FLAGGED_VERDICTS, LABELS as VERDICT_LABELS
    from .diagnostics import last_errors, log_file, mask_secrets, mask_text, setup_logging
    from .ahead import load_models_ahead, drop_models_ahead
    from ..drafting.citations import author_names
    from ..drafting.context import ContextError, DraftContext, context_from_dict, load_context
    from ..drafting.queries import SECTIONS
    from ..drafting.records import DraftResult, LedgerRow
    from ..history import HistoryEntry, HistoryRecord
    from ..ingest.pipeline import ImportOutcome, ImportReport
    from ..library.layout import LibraryLayout
    from ..pdf.mupdf_guard import MUPDF
    from ..pdf.extract import locate_text
    from ..pdf.highlight import PageHighlight, Rect, locate_passage, normalise_word, passage_words, to_display
    from ..pdf.tables.rows import locate_row
    from ..pdf.word_spaces import page_words
    from ..library.text_search import TextHit
    from ..scope import Scope, labels as scope_labels
    from ..share.records import Finding, VerifyReport
    from ..research.deep.progress import ENDED_PHASES, LIVE_PHASES, RETRY_EXHAUSTED, DeepRunLog, RoundRecord
    from ..text.wording import plural
    from ..models.configured import default_model_path, effective_config
    from .results import (
        LibrarySnapshot,
        ModelRow,
        ModelState,
        PaperCheck,
        PaperFiles,
        PaperTexts,
        SummaryReport,
        ValidationReport,
    )
    from .api import Desk

# Record types and pure helpers of other core modules that front ends use: re-exported here so
# that the UI and the CLI import the core through this one door (the import-linter contract).
# module (relative to this package): the names it gives, as the import above writes them
_EXPORTS: dict[str, str] = {
    "..check.report": "FLAGGED as FLAGGED_VERDICTS, LABELS as VERDICT_LABELS",
    ".diagnostics": "last_errors, log_file, mask_secrets, mask_text, setup_logging",
    ".ahead": "load_models_ahead, drop_models_ahead",
    "..drafting.citations": "author_names",
    "..drafting.context": "ContextError, DraftContext, context_from_dict, load_context",
    "..drafting.queries": "SECTIONS",
    "..drafting.records": "DraftResult, LedgerRow",
    "..history": "HistoryEntry, HistoryRecord",
    "..ingest.pipeline": "ImportOutcome, ImportReport",
    "..library.layout": "LibraryLayout",
    "..pdf.mupdf_guard": "MUPDF",
    "..pdf.extract": "locate_text",
    "..pdf.highlight": "PageHighlight, Rect, locate_passage, normalise_word, passage_words, to_display",
    "..pdf.tables.rows": "locate_row",
    "..pdf.word_spaces": "page_words",
    "..library.text_search": "TextHit",
    "..scope": "Scope, labels as scope_labels",
    "..share.records": "Finding, VerifyReport",
    "..research.deep.progress": "ENDED_PHASES, LIVE_PHASES, RETRY_EXHAUSTED, DeepRunLog, RoundRecord",
    "..text.wording": "plural",
    "..models.configured": "default_model_path, effective_config",
    ".results": (
        "LibrarySnapshot, ModelRow, ModelState, PaperCheck, PaperFiles, PaperTexts, "
        "SummaryReport, ValidationReport"
    ),
    ".api": "Desk",
}
# exported name: (module, the name there)
_WHERE: dict[str, tuple[str, str]] = {
    spec.split(" as ")[-1]: (module, spec.split(" as ")[0]) for module, names in _EXPORTS.items() for spec in names.split(", ")
}

__all__ = list(_WHERE)


def __getattr__(name: str) -> Any:
    try:
        module, attr = _WHERE[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(import_module(module, __name__), attr)
    globals()[name] = value  # once loaded, a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])
