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
"""

from __future__ import annotations

# Record types and pure helpers of other core modules that front ends use: re-exported here so
# that the UI and the CLI import the core through this one door (the import-linter contract).
from ..check.report import FLAGGED as FLAGGED_VERDICTS
from ..check.report import LABELS as VERDICT_LABELS
from .diagnostics import last_errors, log_file, mask_secrets, mask_text, setup_logging
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
from ..pdf.word_spaces import page_words  # the find bar's words, as the page's text reads them
from ..library.text_search import TextHit
from ..scope import Scope
from ..share.records import Finding, VerifyReport
from ..scope import labels as scope_labels
from ..research.deep.progress import ENDED_PHASES, LIVE_PHASES, RETRY_EXHAUSTED, DeepRunLog, RoundRecord
from ..text.wording import plural
from .models import ModelOperations
from .parts import default_model_path, effective_config
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


class Desk(ModelOperations):
    """One library, one settings object, the models they use; every operation a front end needs."""


__all__ = [
    "Desk", "ContextError", "DraftContext", "context_from_dict", "SECTIONS", "ImportOutcome", "ImportReport", "LibraryLayout",
    "LibrarySnapshot", "ModelRow", "ModelState", "PaperCheck", "PaperFiles", "PaperTexts", "SummaryReport",
    "ValidationReport", "default_model_path", "effective_config", "VERDICT_LABELS", "FLAGGED_VERDICTS", "author_names", "load_context",
    "DraftResult", "LedgerRow", "TextHit", "locate_text", "locate_row", "PageHighlight", "Rect", "locate_passage",
    "normalise_word", "passage_words", "page_words", "to_display", "MUPDF", "ENDED_PHASES", "LIVE_PHASES", "RETRY_EXHAUSTED", "DeepRunLog",
    "RoundRecord", "HistoryEntry", "HistoryRecord", "Finding", "VerifyReport", "Scope", "scope_labels", "plural", "last_errors", "log_file", "mask_secrets", "mask_text", "setup_logging",
]
