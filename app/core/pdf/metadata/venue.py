"""The venue: the journal or proceedings line printed in the header, footer or front matter."""

from __future__ import annotations

import re

from .layout import Front, Line

_PATTERNS: dict[str, str] = {
    "cue": r"(?i)\bjournal\b|\bproceedings\b|\bconference\b|\btransactions\b|\bletters\b|\bannals\b|\bbulletin\b|"
           r"\bsymposium\b|\bworkshop\b|\bvol(?:ume)?\b\.?\s*\d|\b\d+\s*\((?:19|20)\d{2}\)|[A-Za-z]\s(?:19|20)\d{2},\s*\d+\s*[,:]|"
           r"\b(?:19|20)\d{2};\s*\d+|working papers?\b|\bpaper no\b|\bdiscussion papers?\b|\bseries\b|\bplos\b|\bpeerj\b",
    "not": r"(?i)@|www\.|https?:|licen[cs]e|permission|copyright|©|downloaded|creative commons|correspond",
    "stamp_cat": r"(?i)arxiv:\S+\s+\[([^\]]+)\]",
}
P: dict[str, re.Pattern[str]] = {name: re.compile(pattern) for name, pattern in _PATTERNS.items()}


def _tidy(text: str) -> str:
    text = re.sub(r"[;,]?\s*doi\s*:?\s*10\.\S+", "", text, flags=re.I)
    return text.strip(" ;,()")


def find(front: Front, title_top: float) -> tuple[str, bool]:
    """(venue, sure)."""
    def placed(ln: Line) -> bool:
        return ln.y1 <= title_top + 1 or ln.y0 < 0.1 * front.page_height or ln.y1 > 0.85 * front.page_height
    for strong in (True, False):
        for ln in front.lines:
            if (placed(ln) or not strong) and P["cue"].search(ln.text) and not P["not"].search(ln.text) and len(ln.text) < 200:
                if not strong and (ln.size >= front.body * 0.95 or len(ln.text) > 120):
                    continue
                return _tidy(ln.text), strong
    m = P["stamp_cat"].search(front.all_text)
    if m:
        return f"arXiv preprint ({m.group(1)})", False
    return "", False
