"""One typed settings object, persisted as JSON in the config folder.

The classes are pydantic dataclasses: still plain dataclasses to the rest of the code
(attribute access, `dataclasses.replace`, `asdict`), and their fields are validated when
one is built — from the settings file, or by `replace` with new values. Assigning an
attribute afterwards is not validated (the settings dialog assigns typed widget values).

The library location resolves, in order: `--library` flag, the
RESEARCH_DESK_LIBRARY environment variable, the settings file, the
platformdirs default. Reading the file never stops the app: unknown keys are
ignored (forward compatibility) and a value of the wrong type falls back to its
default, each with a one-line message naming the file and the key, and the file
as it was is kept aside; an unreadable file falls back to defaults and is kept aside.

The file holds every value, so a default changed later would never reach a file saved before: the
file's `version` says which defaults it was saved under, and loading an older file lets a value
equal to the default of its time take today's (`CHANGED_DEFAULTS`).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from dataclasses import asdict, field
from pathlib import Path
from typing import Any

from pydantic import Field, TypeAdapter, ValidationError
from pydantic.dataclasses import dataclass

from . import paths

log = logging.getLogger(__name__)

SETTINGS_VERSION = 3  # the shape and defaults a saved file holds (a file without "version" is 1)
# Each version's changed defaults, with the value they had before: in a file of an older version,
# such a value is the old default, not a choice, and today's default takes its place.
CHANGED_DEFAULTS: dict[int, dict[tuple[str, str], Any]] = {
    # greedy answers over a 300-token first turn (docs/lab/, 2026-11-29)
    2: {("research", "temperature"): 0.2, ("research", "first_claim_read_s"): 5.0},
}
# Keys that moved, by the version that moved them: (old group or "" for the top, old key) -> (group, key).
MOVED_KEYS: dict[int, dict[tuple[str, str], tuple[str, str]]] = {
    3: {("", "import_batch_size"): ("ingest", "batch_size")},
}


@dataclass
class ModelConfig:
    """Which model to use and through which backend.

    backend: "llamacpp" (GGUF file in-process), "lmstudio" (SDK, `host`),
    or "openai" (any OpenAI-compatible server at `base_url`).
    """

    backend: str = "llamacpp"
    path: str = ""  # GGUF file (llamacpp)
    model: str = ""  # model key/name on a server (lmstudio, openai)
    host: str = "localhost:1234"  # LM Studio host:port
    base_url: str = "http://127.0.0.1:8080/v1"  # OpenAI-compatible
    api_key: str = "not-needed"
    context_length: int = 4096
    threads: int = 0  # 0: llama.cpp picks
    catalog_id: str = ""  # entry in models/catalog.json it came from, if any

    def describe(self) -> str:
        if self.backend == "llamacpp":
            return f"llama.cpp: {self.path or '(no file)'}"
        if self.backend == "lmstudio":
            return f"LM Studio at {self.host}: {self.model or '(loaded model)'}"
        return f"OpenAI-compatible at {self.base_url}: {self.model or '(default)'}"

    def identity(self) -> str:
        """What makes two embedding configs produce the same vectors."""
        target = self.path if self.backend == "llamacpp" else self.model
        return f"{self.backend}:{Path(target).name if self.backend == 'llamacpp' else target}"


CITATION_STYLES = ("numbers", "tags")  # ResearchParams.citation_style


# The funnel's knobs, grouped by the stage that reads them. `ResearchParams` joins the groups into
# the one object the funnel takes (flat attribute access: `params.k_evidence`); the settings file
# keeps them under "research". Each field's description is the settings dialog's tooltip; a tuned
# value names the bench that set it, and the story behind it is in docs/lab/.


@dataclass
class RetrievalParams:
    """Stages 1 and 2 (DESIGN.md, "The research funnel"): which papers and passages are found."""

    k_summaries: int = Field(8, description="Summary passages stage 1 keeps to choose the papers.")
    mmr_lambda_summaries: float = Field(0.5, description="Stage 1's MMR weight of relevance against variety (1: relevance only).")
    cutoff_summaries: float | None = Field(None, description="Stage 1's similarity cutoff; empty: the embedding model's calibrated value.")
    min_shortlist: int = Field(5, description="Papers stage 1 shortlists at least.")
    max_shortlist: int = Field(8, description="Papers stage 1 shortlists at most.")
    k_evidence: int = Field(15, description="Passages stage 2 keeps from the shortlisted papers.")
    # bench/retrieval.py (the seeds' value was 0.6)
    mmr_lambda_evidence: float = Field(0.75, description="Stage 2's MMR weight of relevance against variety (1: relevance only).")
    # bench/retrieval.py
    same_page_similarity: float = Field(1.5, description="How alike stage 2's MMR counts a page's second passage to its first (0: off).")
    cutoff_evidence: float | None = Field(None, description="Stage 2's similarity cutoff; empty: the embedding model's calibrated value.")
    evidence_tokens: int = Field(4600, description="Stage 2 keeps more than k passages while they fit this many tokens (0: k only).")
    hybrid: bool = Field(True, description="Search vectors and the full-text (BM25) index together.")


@dataclass
class FocusParams:
    """What of the evidence the model reads: the sentences on the question, within a token budget."""

    focus_prose: bool = Field(True, description="Free-text answers read the focused sentences, not whole passages.")
    # bench/answers.py
    focus_tokens: int = Field(800, description="Evidence tokens in the prompt after focusing (more for a faster model).")
    evidence_read_s: float = Field(12.0, description="Or what the model reads in this many seconds at its measured speed (0: focus_tokens only).")
    focus_max_tokens: int = Field(2400, description="Focused evidence tokens at most (and within the model's context).")
    # bench/answers.py
    first_claim_tokens: int = Field(300, description="Evidence tokens the answer's first turn reads at least (0: one prompt).")
    first_claim_read_s: float = Field(0.0, description="The first turn reads what the model read in this many seconds lately (0: first_claim_tokens).")
    first_claim_max_tokens: int = Field(500, description="Evidence tokens the first turn reads at most.")


@dataclass
class AnswerParams:
    """Stage 3: what the model writes, and the key passages quoted beneath it."""

    # How the prompt asks for citations: "numbers" (passages numbered [1], [2]…, the model cites
    # the number) or "tags" (each passage headed by its [PAPER_ID, page N] tag to copy).
    citation_style: str = Field("numbers", description="How the prompt asks the model to cite; answers always show [PAPER_ID, page N].")
    structured_answers: bool = Field(True, description="Claims through structured output, each bound to the sentences it cites (off: free text).")
    answer_max_tokens: int = Field(700, description="Tokens a free-text answer (improve, fallback) may take.")
    claims_max_tokens: int = Field(300, description="Tokens the model may write for its claims.")
    first_turn_claims: int = Field(3, description="Claims the first turn may write: the direct answer and one per further part.")
    worked_answers: int = Field(2, description="Worked answers the model reads before the question (kept once per model load).")
    key_sentences: int = Field(4, description="Key passages quoted beneath the answer (0: none).")
    quotes_per_passage: int = Field(2, description="Key passages taken from one passage at most.")
    quote_candidates: int = Field(12, description="Candidate sentences the model rates for answering, at most, before the key passages are chosen.")
    quote_candidates_first: int = Field(8, description="Of those, rated first; the rest only where none of these reads as the answer (0: all at once).")
    synthesis_timeout_s: float = Field(600.0, description="Seconds the answer may take before it fails with a retry offered.")
    # bench/answers.py (greedy: the same answer to the same question)
    temperature: float = Field(0.0, description="Sampling temperature of answers and drafts (0: greedy).")


@dataclass
class CheckParams:
    """Stage 4: each citation checked for support, and what happens to a claim the check faults."""

    check_support: bool = Field(True, description="Give each citation a support verdict (off saves a short model call per claim).")
    withdraw_unstated: bool = Field(True, description="Withdraw a claim stating a figure no passage states, when another claim is supported.")
    withdraw_unsupported: bool = Field(True, description="Withdraw a claim no cited passage supports even in part, when another claim is supported.")
    rewrite_faulted: bool = Field(True, description="Write a faulted claim once more, from the key passages and its cited sentences.")
    answer_check: bool = Field(True, description="Rate the direct answer for stating what was asked; write it again if clearly outrated.")
    check_read_per_claim: bool = Field(False, description="The support check reads all the passages a claim cites at once (one model read a claim).")


@dataclass
class ResearchParams(CheckParams, AnswerParams, FocusParams, RetrievalParams):
    """The funnel's knobs, one object (the stage groups above). Cutoffs of None mean "use the
    calibrated value for the embedding model from the catalog"."""


@dataclass
class DeepParams:
    """Deep research (DESIGN.md, "Deep research"): the agentic loop's budget and scoring."""

    time_minutes: float | None = Field(5.0, description="Default time budget in minutes (empty: unlimited).")
    max_iterations_standard: int = Field(3, description="Search rounds at most in standard mode.")
    max_iterations_deep: int = Field(7, description="Search rounds at most in deep mode.")
    max_attempts_per_question: int = Field(3, description="Attempts at one sub-question before it is marked exhausted.")
    candidates: int = Field(20, description="Vector candidates each search scores.")
    keep_per_search: int = Field(6, description="Scored passages each search keeps.")
    vector_weight: float = Field(0.4, description="Weight of the vector score in a passage's combined score.")
    llm_weight: float = Field(0.6, description="Weight of the model's relevance score in a passage's combined score.")


@dataclass
class ImportParams:
    """Import: how papers are read and indexed."""

    batch_size: int = Field(16, description="Passages embedded per batch while importing.")


def describe(group: type, name: str) -> str:
    """The one-line description of a settings field (the settings dialog's tooltip)."""
    info = group.__pydantic_fields__.get(name)  # type: ignore[attr-defined]
    return (info.description or "") if info is not None else ""


@dataclass
class Settings:
    library: str = ""  # a folder, or a URI: s3://bucket/prefix, gs://…, az://…
    library_endpoint: str = ""  # S3-compatible server (MinIO, Ceph) of an s3:// library
    chat: ModelConfig = field(default_factory=ModelConfig)
    embedding: ModelConfig = field(default_factory=lambda: ModelConfig(context_length=512))
    # The support check's judge; backend "" (the default): the chat model judges its own claims.
    judge: ModelConfig = field(default_factory=lambda: ModelConfig(backend=""))
    research: ResearchParams = field(default_factory=ResearchParams)
    deep: DeepParams = field(default_factory=DeepParams)
    ingest: ImportParams = field(default_factory=ImportParams)
    theme: str = "system"  # system | light | dark

    # -- persistence -------------------------------------------------------
    @staticmethod
    def file() -> Path:
        return paths.config_dir() / "settings.json"

    @classmethod
    def load(cls, path: Path | None = None) -> "Settings":
        """The settings in the file (defaults where it has none); problems are logged."""
        settings, problems = cls.load_checked(path)
        for problem in problems:
            log.warning("%s", problem)
        return settings

    @classmethod
    def load_checked(cls, path: Path | None = None) -> tuple["Settings", list[str]]:
        """(settings, one line per problem in the file) — for a front end that shows them."""
        path = path or cls.file()
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return cls(), []
        except (OSError, ValueError) as exc:
            # A damaged file must not stop the app: keep it for the user, use defaults.
            kept = _keep_aside(path, ".damaged.json", move=True)
            return cls(), [f"{path}: unreadable ({exc}); using the default settings{kept}"]
        if isinstance(raw, dict):
            _upgrade(raw)
        settings, problems, rejected = _validate(cls, raw, str(path))
        if rejected:
            # The next save writes the defaults in their place: keep what the user wrote.
            problems.append(f"{path}: the file as it was is kept{_keep_aside(path, '.rejected.json', move=False)}")
        return settings, problems

    def save(self, path: Path | None = None) -> None:
        path = path or self.file()
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"version": SETTINGS_VERSION, **asdict(self)}, indent=2), encoding="utf-8")
        os.replace(tmp, path)  # atomic: a crash leaves the old or the new file

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _upgrade(raw: dict[str, Any]) -> None:
    """Take the file's `version` out of `raw`, move the keys a later version moved, and drop the
    values it holds that are the old defaults of a later version (they load as today's defaults)."""
    version = raw.pop("version", 1)
    version = version if isinstance(version, int) else 1
    for moved_in, moves in MOVED_KEYS.items():
        if moved_in <= version:
            continue
        for (group, key), (new_group, new_key) in moves.items():
            source = raw.get(group) if group else raw
            if isinstance(source, dict) and key in source:
                raw.setdefault(new_group, {})
                if isinstance(raw[new_group], dict):
                    raw[new_group].setdefault(new_key, source.pop(key))
    for changed_in, defaults in CHANGED_DEFAULTS.items():
        if changed_in <= version:
            continue
        for (group, key), old in defaults.items():
            values = raw.get(group)
            if isinstance(values, dict) and key in values and values[key] == old:
                del values[key]


def _keep_aside(path: Path, suffix: str, *, move: bool) -> str:
    """Move or copy `path` beside itself; returns ' as NAME' (or '' where that failed, logged)."""
    target = path.with_suffix(suffix)
    try:
        if move:
            path.replace(target)
        else:
            shutil.copyfile(path, target)
    except OSError as exc:
        log.warning("could not keep %s aside as %s: %s", path, target.name, exc)
        return ""
    return f" as {target.name}"


def _validate(cls: type, raw: Any, source: str) -> tuple[Any, list[str], bool]:
    """(settings, problems, whether a value was rejected): the file's values, each wrong one
    replaced by its default, unknown keys ignored."""
    problems = [f"{source}: unknown setting '{key}' ignored" for key in _unknown_keys(cls, raw)]
    if not isinstance(raw, dict):
        problems.append(f"{source}: expected an object of settings, found {type(raw).__name__}; using the defaults")
        return cls(), problems, True
    data = json.loads(json.dumps(raw))  # a copy we may prune
    adapter = TypeAdapter(cls)
    rejected = False
    while True:
        try:
            return adapter.validate_python(data), problems, rejected
        except ValidationError as exc:
            pruned = False
            for err in exc.errors():
                key = ".".join(str(part) for part in err["loc"])
                problems.append(f"{source}: '{key}' = {err['input']!r} rejected ({err['msg']}); using the default")
                pruned |= _drop(data, err["loc"])
            rejected = True
            if not pruned:  # nothing left to drop: a guard against looping, not expected
                return cls(), problems, True


def _drop(data: dict[str, Any], loc: tuple[Any, ...]) -> bool:
    """Remove the value at `loc` (or the nearest dict entry holding it); True if something went."""
    node: Any = data
    for depth, part in enumerate(loc):
        if not isinstance(node, dict) or part not in node:
            return False
        if depth == len(loc) - 1 or not isinstance(node[part], dict):
            del node[part]
            return True
        node = node[part]
    return False


def _unknown_keys(cls: type, raw: Any, prefix: str = "") -> list[str]:
    if not isinstance(raw, dict):
        return []
    known = cls.__dataclass_fields__
    out = []
    for key, value in raw.items():
        if key not in known:
            out.append(prefix + key)
            continue
        default = known[key].default_factory  # type: ignore[misc]
        if callable(default) and isinstance(value, dict):
            sub = default()
            if hasattr(sub, "__dataclass_fields__"):
                out += _unknown_keys(type(sub), value, f"{prefix}{key}.")
    return out


def resolve_library(flag: str | None, settings: Settings) -> str:
    """Library location: flag, env var, settings file, platformdirs default.

    Returned as a string because it may be a URI (s3://…) as well as a path.
    """
    for candidate in (flag, os.environ.get("RESEARCH_DESK_LIBRARY"), settings.library):
        if candidate:
            return candidate if "://" in candidate else str(Path(candidate).expanduser())
    return str(paths.default_library())
