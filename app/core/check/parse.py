"""Read a manuscript of any supported kind into a `Draft` (by its file extension)."""

from __future__ import annotations

import logging
from pathlib import Path

from .draft import Draft

log = logging.getLogger(__name__)

LATEX = {".tex", ".ltx", ".latex"}
MARKDOWN = {".md", ".markdown", ".pmd", ".rmd", ".qmd", ".txt"}
DOCX = {".docx"}


def parse_draft(path: Path) -> Draft:
    """The draft's citing sentences; a file that cannot be read gives a Draft with one problem line."""
    suffix = path.suffix.lower()
    if suffix in DOCX:
        from .docx_draft import parse_docx

        return parse_docx(path)
    kind = "latex" if suffix in LATEX else "markdown" if suffix in MARKDOWN else ""
    if not kind:
        return Draft(str(path), "unknown", problems=[
            f"{path.name}: not a manuscript this check reads (use .tex, .md or .docx)"])
    try:
        source = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        source = path.read_text(encoding="latin-1")  # older LaTeX sources; every byte decodes
        log.info("%s is not UTF-8; read as Latin-1", path)
    except OSError as exc:
        return Draft(str(path), kind, problems=[f"{path.name}: cannot be read ({exc.strerror or exc})"])
    if kind == "latex":
        from .latex import parse_latex

        draft = parse_latex(source, str(path))
    else:
        from .markdown import parse_markdown

        draft = parse_markdown(source, str(path))
    if not draft.sentences and not draft.problems:
        draft.problems.append(f"{path.name}: no citations found (looked for {_FORMS[kind]})")
    return draft


_FORMS = {
    "latex": "\\cite, \\citep, \\citet, \\parencite, \\textcite, \\autocite",
    "markdown": "Pandoc citations [@key] and @key",
}
