"""The title: the largest text in the upper part of the article's first page, minus furniture."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from .authors import names_in
from .layout import Front, Line
from .text import clean, key, letters


@dataclass
class TitleFound:
    text: str = ""
    lines: list[Line] = field(default_factory=list)
    distinct: bool = False  # set clearly larger than the body text

    @property
    def bottom(self) -> float:
        return max((ln.y1 for ln in self.lines), default=0.0)


def _candidate(ln: Line, front: Front) -> bool:
    text = ln.main
    if ln.y0 > 0.7 * front.page_height or letters(text) < 4 or P["furniture"].search(text):
        return False
    return True


def _symbols(text: str) -> bool:
    """A font whose glyphs decode to symbols ("P❡♥❛❧✐③❡❞"): mostly not letters."""
    return letters(text) < 0.6 * len(text.replace(" ", ""))


def _seed(ln: Line) -> bool:
    """A title's first line: not all lower case (a logo, "future internet"), two words or a long
    one, and not an affiliation or an address (a later title line may name a department)."""
    text = ln.main
    if re.search(r"@|\buniversity\b|\bdepartment\b", text, re.I):
        return False
    return text != text.lower() and (len(text.split()) >= 2 or letters(text) >= 12) and not name_line(text)


def name_line(text: str) -> bool:
    """A line of three or more author names, comma-separated, and nothing else ("Maria Gonzalez,
    Peter Novak, Sun Li"): never a title, however large a preprint sets it, nor a title's next line.
    Two names are not enough: a title's line reads as two ("Common Protocol and Open Data")."""
    if text.count(",") < 2:
        return False
    # Names in capitals are left to the layout: a title in capitals reads as names ("TUNER TESTING
    # OF A DRESSED 3.9 GHz CAVITY" is two of them, cut at the digits).
    names = [n for n in names_in(text) or [] if n != n.upper()]
    return len(names) >= 3 and letters("".join(names)) >= 0.85 * letters(text)


_PATTERNS: dict[str, str] = {
    # Journal lines, running heads, labels and stamps set large that are not the title.
    "furniture": r"(?i)www\.|https?:|\bdoi\b|\bissn\b|©|copyright|\bvol\.|\bvolume\b|arxiv:|\bpages?\b\s*\d|open access|"
                 r"^(research|original|review|brief|short)?\s*(article|paper|report|communication|letter|review|note)s?$|"
                 r"^(article|review|letter|editorial|commentary|perspective|preprint|notes?)$|draft version|typeset using|"
                 r"^(received|accepted|published|submitted)\b|downloaded from|journal of|proceedings|^contents lists",
    "trailing_marks": r"[\s,*∗†‡§¶#]+$",
    "wraps_at_comma": r"[^\W\d_],\s*$",
    "number_label": r"^(?:\d+(?:\.\d+)*|[IVX]+)\.?$",
    "numbered": r"^(?:\d+(?:\.\d+)*|[IVX]+)\.\s+\S",
}
P: dict[str, re.Pattern[str]] = {name: re.compile(pattern) for name, pattern in _PATTERNS.items()}


def _numbered_heading(ln: Line, lines: list[Line]) -> bool:
    """A numbered heading ("3. Thin Film Cells"): the number opens the line, or sits just left
    of it on the same row (OCR reads a number set apart as a line of its own)."""
    if P["numbered"].match(ln.main):
        return True
    return any(P["number_label"].match(o.main) and o.bbox[2] <= ln.x0 + 1 and ln.x0 - o.bbox[2] < 4 * ln.size
               and abs((o.y0 + o.y1) / 2 - (ln.y0 + ln.y1) / 2) < 0.6 * ln.size for o in lines if o is not ln)


def _row_start(seed: Line, cands: list[Line]) -> Line:
    """The first piece of the seed's row: MuPDF ends a line at a raised mark, so a title that opens
    "KIR⁺CD8⁺ T cells" gives "KIR+CD8+" and "T cells …" side by side, and the first is too short to
    seed the title itself."""
    while True:
        left = [ln for ln in cands if ln is not seed and abs(ln.y1 - seed.y1) < 0.4 * seed.size
                and abs(ln.size - seed.size) <= 0.6 and ln.bold == seed.bold
                and 0 <= seed.x0 - ln.bbox[2] < 2 * seed.size]
        if not left:
            return seed
        seed = max(left, key=lambda ln: ln.bbox[2])


def from_layout(front: Front) -> TitleFound:
    cands = [ln for ln in front.lines if _candidate(ln, front)]
    if not cands:
        return TitleFound()
    seeds = [ln for ln in cands if _seed(ln) and not _numbered_heading(ln, front.lines)]
    if not seeds:
        return TitleFound()
    biggest = max(ln.size for ln in seeds)
    seed = min((ln for ln in seeds if ln.size >= biggest - 0.5), key=lambda ln: (ln.y0, ln.x0))
    if _symbols(seed.main):
        return TitleFound()  # the title is there but unreadable (OCR's work), not the next-largest line
    seed = _row_start(seed, cands)
    ordered = sorted(cands, key=lambda ln: (ln.y0, ln.x0))
    i = ordered.index(seed)
    picked = [seed]
    for ln in ordered[i + 1:]:
        prev = picked[-1]
        same_row = abs(ln.y1 - prev.y1) < 0.4 * seed.size and 0 <= ln.x0 - prev.bbox[2] < 2 * seed.size
        if min(ln.bbox[2], seed.bbox[2]) <= max(ln.x0, seed.x0) and not same_row:
            continue  # beside the title, not under it nor next in its row: the other column
        if (abs(ln.size - seed.size) > 0.6 or ln.bold != seed.bold or ln.y0 - prev.y1 > 1.2 * seed.size
                or len(picked) >= 6 or name_line(ln.main)):
            break
        picked.append(ln)
    distinct = seed.size >= front.body * 1.15
    if not distinct and not (seed.bold or seed.main.isupper()):
        return TitleFound()  # body-sized plain text: a paragraph, not a title
    # A line's trailing marks go (superscripts read as ","), but not a comma the title prints
    # where it wraps ("…: Origins," over "Developments and Future Directions").
    text = " ".join(P["trailing_marks"].sub("", ln.printed) + ("," if P["wraps_at_comma"].search(ln.text) else "")
                    for ln in picked[:-1]) + " " + P["trailing_marks"].sub("", picked[-1].printed)
    text = P["trailing_marks"].sub("", clean(text.replace(" ,", " ")))
    return TitleFound(text[:400], picked, distinct)


def plausible_metadata_title(title: str, filename: str) -> bool:
    t = title.strip()
    if len(t) < 4 or letters(t) < 3:
        return False
    low = t.lower()
    if low in {"untitled", "title", "document", "paper", "article", "manuscript", "slide 1"}:
        return False
    if low.startswith(("microsoft word", "microsoft powerpoint", "untitled")):
        return False
    # File names written by the producing tool ("p020-dutot.dvi", "fit_hyp_M_3.00.eps").
    if re.search(r"\.[a-z0-9]{2,4}$", low) or "/" in t or "\\" in t or re.fullmatch(r"[\w.-]+", t) and "_" in t:
        return False
    return low != Path(filename).stem.lower()


def choose(layout: TitleFound, info_title: str, filename: str, page_key: str) -> tuple[str, bool]:
    """(title, unsure): the printed title; the metadata's where the page agrees or has none."""
    meta = clean(info_title)
    meta_ok = plausible_metadata_title(meta, filename)
    if meta_ok and layout.text and key(meta) == key(layout.text):
        return layout.text, False
    if meta_ok and len(key(meta)) >= 12 and key(meta) in page_key:
        # The page prints it, so the layout guess picked something else (a logo, a label).
        return meta, not layout.text or key(layout.text) not in key(meta)
    if layout.text:
        return layout.text, not layout.distinct
    if meta_ok:
        return meta, True
    return "", True
