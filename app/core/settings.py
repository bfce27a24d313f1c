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

from pydantic import TypeAdapter, ValidationError
from pydantic.dataclasses import dataclass

from . import paths

log = logging.getLogger(__name__)

SETTINGS_VERSION = 2  # the defaults a saved file holds (a file without "version" is 1)
# Each version's changed defaults, with the value they had before: in a file of an older version,
# such a value is the old default, not a choice, and today's default takes its place.
CHANGED_DEFAULTS: dict[int, dict[tuple[str, str], Any]] = {
    # greedy answers over a 300-token first turn (docs/research.md, 2026-11-29)
    2: {("research", "temperature"): 0.2, ("research", "first_claim_read_s"): 5.0},
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


@dataclass
class ResearchParams:
    """Funnel defaults (DESIGN.md, "The research funnel"). Cutoffs of None mean
    "use the calibrated value for the embedding model from the catalog"."""

    k_summaries: int = 8
    mmr_lambda_summaries: float = 0.5
    cutoff_summaries: float | None = None
    k_evidence: int = 15
    mmr_lambda_evidence: float = 0.75  # seed: 0.6; 0.75 measured better on bench/retrieval.py
    same_page_similarity: float = 1.5  # stage 2's MMR counts a page's second chunk this alike to its first (more pages in the top 5; 0: off)
    cutoff_evidence: float | None = None
    evidence_tokens: int = 4600  # stage 2 keeps at least k_evidence passages, more while they fit this many tokens (~4 characters each); 0: k_evidence
    hybrid: bool = True
    # How the prompt asks for citations: "numbers" (passages numbered [1], [2]…, the
    # model cites the number, the answer shows [PAPER_ID, page N]) or "tags" (each
    # passage headed by its [PAPER_ID, page N] tag to copy). See docs/research.md.
    citation_style: str = "numbers"  # one of CITATION_STYLES
    min_shortlist: int = 5
    max_shortlist: int = 8
    answer_max_tokens: int = 700  # free-text answers (improve, fallback)
    # Claim-bound answers (research/answer/synthesis.py): the model writes claims through structured
    # output and each is checked against the sentences it cites. Off: the free-text prompt.
    structured_answers: bool = True
    # Free-text answers read the focused evidence too (the sentences on the question, within
    # focus_tokens), not whole passages: a prompt a third as long. Off: whole passages.
    focus_prose: bool = True
    # Each citation of an answer gets a support verdict (research/check/support.py); off saves a short model call.
    check_support: bool = True
    # The measurements behind the values below are in docs/research.md, "The answer's settings".
    focus_tokens: int = 800  # evidence tokens in the prompt after focusing (research/evidence/focus.py); more for a faster model:
    evidence_read_s: float = 12.0  # ...what the model reads in this many seconds (measured speed; 0: the setting only)
    focus_max_tokens: int = 2400  # ...up to this many tokens (and within the model's context)
    claims_max_tokens: int = 300  # tokens the model may write for its claims
    first_claim_tokens: int = 300  # evidence tokens the first turn reads at least (0: one prompt)
    first_claim_read_s: float = 0.0  # the first turn reads what the model read in this many seconds lately (0: always first_claim_tokens)
    first_claim_max_tokens: int = 500  # ...up to this many tokens
    first_turn_claims: int = 3  # claims the first turn may write: the direct answer and one per further part
    worked_answers: int = 2  # worked answers (synthesis_worked.md) the model reads before the first turn's question (kept once per load)
    key_sentences: int = 4  # key passages quoted beneath the answer (key_sentences.py); 0: the model reads on instead
    quotes_per_passage: int = 2  # key passages from one passage at most (neighbours join into one)
    quote_candidates: int = 12  # candidate sentences the model rates for answering the question before quoting
    withdraw_unstated: bool = True  # withdraw a claim stating a figure no passage states, if another claim of the model is supported
    withdraw_unsupported: bool = True  # withdraw a claim no cited passage supports even in part, likewise
    rewrite_faulted: bool = True  # write a claim the check faults again once, from the key passages and its cited sentences (rewrite.py)
    answer_check: bool = True  # rate the direct answer for stating what was asked; write it again if clearly outrated (answer_check.py)
    synthesis_timeout_s: float = 600.0
    temperature: float = 0.0  # sampling temperature of answers and drafts (0: greedy, the same answer to the same question)


@dataclass
class DeepParams:
    time_minutes: float | None = 5.0  # None: unlimited
    max_iterations_standard: int = 3
    max_iterations_deep: int = 7
    max_attempts_per_question: int = 3
    candidates: int = 20
    keep_per_search: int = 6
    vector_weight: float = 0.4
    llm_weight: float = 0.6


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
    theme: str = "system"  # system | light | dark
    import_batch_size: int = 16

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
    """Take the file's `version` out of `raw`, and the values it holds that are the old defaults of
    a later version (they load as today's defaults)."""
    version = raw.pop("version", 1)
    version = version if isinstance(version, int) else 1
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
