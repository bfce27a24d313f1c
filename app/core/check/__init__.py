"""Check a manuscript's citations against the library's papers (DESIGN.md, "Checking a manuscript").

`check_manuscript(desk, draft, bib, task)` → `CheckReport` (`.to_dict()`, `.to_json()`,
`.to_markdown()`). Parsers: latex.py, markdown.py, docx_draft.py; keys → papers: resolve.py.
"""

from .manuscript import check_manuscript
from .report import CheckedCitation, CheckedSentence, CheckReport, Source, Verdict

__all__ = ["check_manuscript", "CheckReport", "CheckedSentence", "CheckedCitation", "Source", "Verdict"]
