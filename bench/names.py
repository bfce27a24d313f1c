"""How the benches compare metadata with the truth: one normalisation, one name rule."""

from __future__ import annotations

import re
import unicodedata


def norm(text: str) -> str:
    """Accents dropped, case folded, punctuation read as spaces."""
    text = unicodedata.normalize("NFKD", text or "")
    text = "".join(c for c in text if not unicodedata.combining(c))
    # Spacing accents (´ ¨ ˘ ˛ ¸ `) left by TeX text layers are marks, not letters.
    text = re.sub(r"[\u00b4\u00a8\u02d8\u02db\u00b8`\u02c6\u02dc\u02c7\u02d9]", "", text)
    return " ".join(re.sub(r"[\W_]+", " ", text.casefold()).split())


def same_name(got: str, want: str) -> bool:
    """The surname equal and the first name agreeing (an initial matches a name)."""
    g, w = norm(got).split(), norm(want).split()
    if not g or not w:
        return False
    if len(g) == 1 or len(w) == 1:
        return g == w
    if g[-1] != w[-1]:
        return False
    return g[0][0] == w[0][0] if min(len(g[0]), len(w[0])) == 1 else g[0] == w[0]
