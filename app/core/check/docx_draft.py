"""Citing sentences of a Word (.docx) manuscript.

Two ways a .docx cites, both read from the paragraphs' text (python-docx):

- Pandoc-style keys typed in the text (`[@smith2020]`, `@smith2020`), as in Markdown;
- author–year text citations: "(Zeileis, 2004)", "(Zeileis & Hothorn 2002; Bates et al.,
  2015, p. 4)", "Zeileis (2004)", "Bates et al. (2015)". Their key is "Surname Year",
  resolved against the .bib's first authors and years, or the library's when there is no .bib.

Reference-manager field codes (Zotero, Mendeley) are not read: their visible text is
an author–year citation in most styles, which the second form catches; numbered styles
("[3]") are not resolved. Locations: line = paragraph number (1-based, counting empty
paragraphs), column = character in that paragraph (1-based).
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from .draft import Cite, Draft, Mapped, citing_sentences
from .markdown import scan_line

log = logging.getLogger(__name__)

_NAME = r"(?:(?:van|von|de|der|den|da|di|du|le|la|dos|del)\s+)*[A-Z][A-Za-z'’\-]+"
_AUTHORS = rf"(?P<first>{_NAME})(?:\s+(?:and|&)\s+{_NAME}|\s+et\s+al\.?)?"
_YEAR = r"(?P<year>(?:19|20)\d\d[a-z]?)"
_ITEM = re.compile(rf"^(?:(?:see|e\.g\.|cf\.|also)[,]?\s+)*{_AUTHORS},?\s+{_YEAR}(?P<loc>.*)$")
_PAREN = re.compile(r"\((?P<body>[^()]*?(?:19|20)\d\d[a-z]?[^()]*)\)")
_NARRATIVE = re.compile(rf"{_AUTHORS}\s+\({_YEAR}(?P<loc>[^)]*)\)")


def author_year_cites(text: str) -> list[tuple[int, int, list[Cite]]]:
    """(start, end, cites) of each author–year citation in one paragraph."""
    found = []
    for m in _NARRATIVE.finditer(text):
        found.append((m.start(), m.end(), [Cite(f"{m.group('first')} {m.group('year')}", m.group("loc").strip(" ,"), "author-year")]))
    for m in _PAREN.finditer(text):
        if any(s <= m.start() < e for s, e, _ in found):
            continue
        cites = []
        for item in m.group("body").split(";"):
            im = _ITEM.match(item.strip())
            if im:
                cites.append(Cite(f"{im.group('first')} {im.group('year')}", im.group("loc").strip(" ,"), "author-year"))
        if cites:
            found.append((m.start(), m.end(), cites))
    return sorted(found, key=lambda f: f[0])


def parse_docx(path: Path) -> Draft:
    import docx  # python-docx

    draft = Draft(path=str(path), format="docx")
    try:
        document = docx.Document(str(path))
    except Exception as exc:  # noqa: BLE001 - python-docx raises many kinds on a broken file; each is one report line
        draft.problems.append(f"{path.name}: not a readable .docx file ({type(exc).__name__}: {exc})")
        return draft
    paragraphs = [p.text for p in document.paragraphs]
    source = "\n".join(paragraphs)
    mapped = Mapped()
    offset = 0
    set_apart: set[int] = set()  # source offsets where italic or bold text begins
    for p, text in zip(document.paragraphs, paragraphs):
        set_apart.update(offset + k for k in _styled_starts(p, text))
        offset += len(text) + 1
    offset = 0
    for text in paragraphs:
        mapped.add_at("\n\n", offset)  # each paragraph stands apart
        pos = 0
        for start, end, cites in author_year_cites(text):
            scan_line(text[pos:start], offset + pos, mapped)
            mapped.cite(cites, offset + start)
            pos = end
        scan_line(text[pos:], offset + pos, mapped)
        offset += len(text) + 1
    # An italic word may open a sentence in lower case ("*lacZ* mutants"), as in Markdown.
    mapped.marked.update(i for i, off in enumerate(mapped.offsets) if off in set_apart)
    draft.sentences = citing_sentences(mapped, source)
    return draft


def _styled_starts(paragraph, text: str) -> list[int]:
    """Offsets in the paragraph's text where an italic or bold run begins (none where its runs
    do not spell the text: fields and hyperlinks the runs leave out)."""
    runs = list(paragraph.runs)
    if "".join(r.text for r in runs) != text:
        return []
    out, pos, before = [], 0, False
    for r in runs:
        styled = bool(r.italic or r.bold)
        if styled and not before and r.text:
            out.append(pos + len(r.text) - len(r.text.lstrip()))
        before = styled and bool(r.text)
        pos += len(r.text)
    return out
