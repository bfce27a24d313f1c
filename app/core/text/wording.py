"""Small helpers for the sentences the app shows (shared by the core's messages and the UI)."""

from __future__ import annotations

import re


_WORD_RUN = re.compile(r"[a-z0-9]+")


def lower_words(text: str) -> list[str]:
    """The runs of letters and digits of `text`, lower-cased ("Bootstrap-t CI" → bootstrap, t, ci)."""
    return _WORD_RUN.findall(text.lower())


def plural(n: int, word: str) -> str:
    """'1 paper', '3 papers', '2 passages'."""
    if n == 1:
        return f"{n} {word}"
    return f"{n} {word}{'es' if word.endswith(('s', 'ch', 'sh', 'x')) else 's'}"


def trim_repetition(text: str, n: int = 8, times: int = 2) -> tuple[str, bool]:
    """Cut a looping text where it began to loop: at the second start of the first run of `n`
    words that the text holds `times` times."""
    words = list(re.finditer(r"\S+", text))
    seen: dict[tuple[str, ...], list[int]] = {}
    for i in range(len(words) - n + 1):
        gram = tuple(w.group().lower().strip(".,;:") for w in words[i : i + n])
        starts = seen.setdefault(gram, [])
        starts.append(i)
        if len(starts) >= times:
            head = text[: words[starts[1]].start()].rstrip()
            return to_sentence_end(head), True
    return text, False


def to_sentence_end(text: str) -> str:
    """`text` cut back to its last full sentence (or marked as cut with an ellipsis)."""
    ends = [m.end() for m in re.finditer(r"[.!?](?=\s|$)", text)]
    if ends and ends[-1] >= 0.3 * len(text):
        return text[: ends[-1]]
    return text.rstrip(" ,;:") + (" …" if text and text[-1] not in ".!?" else "")
