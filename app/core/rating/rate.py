"""`models rate`: every available model measured on this machine and the user's own library.

For each model: how fast it reads a prompt and writes a reply, how much memory it takes, how far
its judge agrees with the labelled pairs (calibrate.py), and how many questions made from the
library's own sentences it answers right (questions.py). The records here are what the CLI prints
and `--json` writes, and what the library keeps (its `model_ratings` entry).
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from ..models.base import ChatModel

SPEED_PROMPT_TOKENS = 400  # a first turn's reading, about
SPEED_REPLY_TOKENS = 48
MEMORY_SAMPLE_S = 0.2


@dataclass
class JudgeRating:
    agreement: float | None  # 3-way agreement with the hand labels
    misattributions_passed: int | None
    misattributions: int = 0
    cutoffs: dict[str, float] | None = None  # {"supported", "partial"}; None: judged in words (uncalibrated)


@dataclass
class ModelRating:
    name: str
    backend: str
    read_tps: float | None = None
    write_tps: float | None = None
    peak_mb: float | None = None  # None: the model runs elsewhere (a server)
    judge: JudgeRating | None = None
    asked: int = 0
    right: int = 0
    answer_s_p50: float | None = None
    context_length: int = 0
    error: str = ""  # why it could not be rated (it did not load, the server is down)

    def to_dict(self) -> dict[str, Any]:
        judge = self.judge or JudgeRating(None, None)
        return {"name": self.name, "backend": self.backend, "read_tps": _round(self.read_tps), "write_tps": _round(self.write_tps),
                "peak_mb": _round(self.peak_mb, 0), "judge": {"agreement": _round(judge.agreement, 3),
                                                           "misattributions_passed": judge.misattributions_passed,
                                                           "cutoffs": judge.cutoffs},
                "answers": {"asked": self.asked, "right": self.right}, "answer_s_p50": _round(self.answer_s_p50)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "ModelRating":
        j = d.get("judge") or {}
        return cls(d["name"], d["backend"], d.get("read_tps"), d.get("write_tps"), d.get("peak_mb"),
                   JudgeRating(j.get("agreement"), j.get("misattributions_passed"), 0, j.get("cutoffs")),
                   d.get("answers", {}).get("asked", 0), d.get("answers", {}).get("right", 0), d.get("answer_s_p50"),
                   error=d.get("error", ""))


@dataclass
class RatingReport:
    models: list[ModelRating] = field(default_factory=list)
    chat: str = ""  # recommended chat model ("" where none could be rated)
    judge: str = ""  # recommended judge
    questions: int = 0
    seconds: float = 0.0
    when: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The issue's schema: {"models": [...], "recommended": {"chat", "judge"}}."""
        return {"models": [m.to_dict() for m in self.models], "recommended": {"chat": self.chat, "judge": self.judge}}

    def to_stored(self) -> dict[str, Any]:
        """What the library keeps: the schema, and why a model was not rated, the questions, when."""
        models = [{**m.to_dict(), **({"error": m.error} if m.error else {})} for m in self.models]
        return {**self.to_dict(), "models": models, "questions": self.questions, "seconds": round(self.seconds, 1), "when": self.when}

    @classmethod
    def from_stored(cls, d: dict[str, Any]) -> "RatingReport":
        rec = d.get("recommended", {})
        return cls([ModelRating.from_dict(m) for m in d.get("models", [])], rec.get("chat", ""), rec.get("judge", ""),
                   d.get("questions", 0), d.get("seconds", 0.0), d.get("when", ""))

    def rows(self) -> list[tuple[str, ...]]:
        """The table: one row per model (a header first)."""
        out = [("model", "backend", "read tok/s", "write tok/s", "memory", "judge agrees", "misattr. passed", "answers right", "s/answer")]
        for m in self.models:
            if m.error:
                out.append((m.name, m.backend, "—", "—", "—", "—", "—", f"not rated: {m.error}", "—"))
                continue
            j = m.judge
            agree = "—" if j is None or j.agreement is None else f"{j.agreement:.0%}" + ("" if j.cutoffs else " (words)")
            passed = "—" if j is None or j.misattributions_passed is None else f"{j.misattributions_passed}/{j.misattributions}" if j.misattributions else str(j.misattributions_passed)
            out.append((m.name, m.backend, _fmt(m.read_tps), _fmt(m.write_tps), "—" if m.peak_mb is None else f"{m.peak_mb:.0f} MB",
                        agree, passed, f"{m.right}/{m.asked}", _fmt(m.answer_s_p50)))
        return out

    def recommendation(self) -> str:
        if not self.chat:
            return "No model could be rated."
        same = " (the same model)" if self.judge == self.chat else ""
        return f"Recommended on this machine: chat model {self.chat}; judge {self.judge or self.chat}{same}."


def recommend(ratings: list[ModelRating]) -> tuple[str, str]:
    """(chat, judge): the chat model that answers most of the library's questions right (ties: the
    faster writer); the judge that agrees most with the labels while passing at most one
    misattribution in ten (a calibrated one before one that judges in words; ties: the faster reader)."""
    rated = [m for m in ratings if not m.error and m.asked]
    chat = max(rated, key=lambda m: (m.right / m.asked, m.write_tps or 0), default=None)

    def judge_key(m: ModelRating) -> tuple:
        j = m.judge
        safe = j.misattributions == 0 or (j.misattributions_passed or 0) <= 0.1 * j.misattributions
        return (safe, j.cutoffs is not None, j.agreement or 0, m.read_tps or 0)

    judges = [m for m in ratings if not m.error and m.judge is not None and m.judge.agreement is not None]
    judge = max(judges, key=judge_key, default=None)
    return (chat.name if chat else "", judge.name if judge else (chat.name if chat else ""))


def measure_speed(chat: ChatModel, text: str) -> tuple[float | None, float | None]:
    """(prompt tokens read a second, reply tokens written a second) for one reply to a passage of
    the library, read fresh (no prefix of it cached) and streamed: reading ends at the first token."""
    words = text.split()
    passage = " ".join(words[: int(SPEED_PROMPT_TOKENS * 0.75)])
    messages = [{"role": "user", "content": f"{passage}\n\nSummarise the text above in a few sentences."}]
    first: list[float] = []
    pieces: list[str] = []

    def on_token(piece: str) -> None:
        if not first:
            first.append(time.monotonic())
        pieces.append(piece)

    start = time.monotonic()
    chat.chat(messages, max_tokens=SPEED_REPLY_TOKENS, temperature=0.0, on_token=on_token)
    end = time.monotonic()
    if not first:
        return None, None
    read_s = first[0] - start
    written = chat.count_tokens("".join(pieces))
    read = chat.count_tokens(messages[0]["content"])
    write_tps = (written - 1) / (end - first[0]) if written > 1 and end > first[0] else None
    return (read / read_s if read_s > 0 else None), write_tps


class PeakMemory:
    """The process's resident memory at its highest above where it was at the start, sampled in a
    thread (a model in process: its weights, caches and buffers). None where it cannot be read."""

    def __init__(self) -> None:
        self._base = _rss()
        self._peak = self._base
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="rate_memory", daemon=True)

    def __enter__(self) -> "PeakMemory":
        if self._base is not None:
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def _watch(self) -> None:
        while not self._stop.wait(MEMORY_SAMPLE_S):
            now = _rss()
            if now is not None and self._peak is not None:
                self._peak = max(self._peak, now)

    @property
    def peak_mb(self) -> float | None:
        now = _rss()
        if self._base is None or self._peak is None or now is None:
            return None
        return (max(self._peak, now) - self._base) / 2**20


def _rss() -> int | None:
    """Resident bytes of this process (Linux /proc; elsewhere psutil where installed)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        pass
    try:
        import psutil  # type: ignore[import-untyped]

        return int(psutil.Process().memory_info().rss)
    except Exception:  # noqa: BLE001 - not installed or not allowed: memory is then not measured
        return None


def _round(value: float | None, digits: int = 1) -> float | None:
    return None if value is None else round(value, digits)


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def rated_speeds(stored: dict[str, Any] | None, name: str):
    """The read and write speeds a stored rating measured for the model called `name` (research sizes
    its answers by them before the model has answered here); unknown speeds are None."""
    from ..research.evidence.first_turn_size import Rated

    for m in (stored or {}).get("models", []):
        if name and m.get("name") == name and not m.get("error"):
            return Rated(m.get("read_tps"), m.get("write_tps"))
    return Rated()
