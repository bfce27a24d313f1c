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
    cutoff_evidence: float | None = None
    hybrid: bool = True
    # How the prompt asks for citations: "numbers" (passages numbered [1], [2]…, the
    # model cites the number, the answer shows [PAPER_ID, page N]) or "tags" (each
    # passage headed by its [PAPER_ID, page N] tag to copy). See docs/research.md.
    citation_style: str = "numbers"  # one of CITATION_STYLES
    min_shortlist: int = 5
    max_shortlist: int = 8
    answer_max_tokens: int = 700  # free-text answers (improve, fallback)
    # Claim-bound answers (research/synthesis.py): the model writes claims through structured
    # output and each is checked against the sentences it cites. Off: the free-text prompt.
    structured_answers: bool = True
    # Free-text answers read the focused evidence too (the sentences on the question, within
    # focus_tokens), not whole passages: a prompt a third as long. Off: whole passages.
    focus_prose: bool = True
    # Each citation of an answer gets a support verdict (research/support.py); off saves a short model call.
    check_support: bool = True
    # Evidence tokens in the prompt after focusing: ~1,100-token prompts for the starter model,
    # which reads ~30 tokens/s on 2 cores. 640 left the gold facts out of the evidence for a third
    # of the bench questions (bench/focus.py); 800 for a quarter. Raise it for faster models or servers.
    focus_tokens: int = 800
    claims_max_tokens: int = 300
    # Evidence tokens read before the first claim is written (the best passages; the rest follow
    # in a second turn). 0: one prompt. ~300 tokens ≈ 10 s of reading for the starter model.
    first_claim_tokens: int = 300
    # ...and more where the model reads faster: the next answer's first turn is what the model
    # read in this many seconds in recent answers, up to first_claim_max_tokens, never less than
    # first_claim_tokens (research/first_turn_size.py). The starter model on 2 cores reads 60-66
    # tokens/s there, so 5 s is ~330 tokens: on the 30 held-out bench questions right 16/30
    # against 14/30 at 4.5 s (300 tokens), first claim p50 10.8 s against 11.0 s (run noise);
    # a machine 1.5 times as fast reads 500. 0: always first_claim_tokens.
    first_claim_read_s: float = 5.0
    first_claim_max_tokens: int = 500
    # Claims the first turn may write: the direct answer, and a claim for each further part of
    # the question (synthesis_parts.md); 1: the direct answer alone (synthesis_first.md).
    first_turn_claims: int = 3
    # Further parts of the question ("…, and how far did the error fall?") that the first turn's
    # claims leave open, up to N, each get a turn of their own: the passages that bear on that
    # part, up to part_tokens, and one claim (research/question_parts.py). Off for the starter
    # model: on 20 two-part development questions right 9/20 against 7/20, but on the 30 held-out
    # questions 15/30 against 16/30 in the same run, its part claims supported less often (45 %
    # of the model's citations against 49 %) and answers 2.4 s slower at p50, 16 s at p95
    # (docs/research.md). Measure it with a larger model: bench/answers.py --variant "parts:part_turns=2".
    part_turns: int = 0
    part_tokens: int = 250
    # Further parts of the question that the claims leave open, up to N, each get a quote of their
    # own, the first of the key sentences: the sentence that bears best on that part, among the
    # six best by that part rated by the model against it (research/key_sentences.answer_quotes).
    # Off: on the 30 held-out questions (one run, both ways) it changed the quotes of 4 answers,
    # three only in their order, and no right answer; the four quotes already hold what the
    # focused evidence says about the other parts. 2: on.
    part_quotes: int = 0
    # After the first turn, N > 0: the answer quotes up to N of the best evidence sentences
    # verbatim (research/key_sentences.py); 0: the model reads the other passages and adds claims
    # (synthesis_more.md). On the answer bench (20 questions, bench/answers.py) the quotes were
    # right 4/20 against 2/20, supported 81 % against 67 %, in 10 s against 31 s. Four, not two:
    # on the 30 held-out questions each further quote held a gold fact the others lacked (right
    # 5/30 with the first claim alone, 10, 11, 12, 13 with 1–4 quotes, in one run), and a quote
    # costs no model time (the candidates are rated either way). Not five or six: with two quotes
    # a passage and the same first claims (bench/answers.py --fixed-first-turn), right 18/30 all
    # three, while the answer grew from 175 to 192 and 199 words p50.
    key_sentences: int = 4
    # Sentences quoted from one passage at most; with 2, neighbours join into one quote. (Either
    # way a quote must add key terms or a figure to what the claims and the quotes before it say.)
    # The answer page often holds the answer in two sentences (the figure, and the one naming what
    # it measures; q10's "The multi0 argument is relevant only for…" and the next sentence, which
    # says what it does), and with one quote a passage the second went to another paper. On the
    # 30 held-out questions (bench/answers.py --fixed-first-turn, same first claims in both) right
    # 18/30 against 16/30 (q10, q54 won, none lost), citations supported 88 % both, gold page
    # cited 83 % against 87 %, answer p50 unchanged; the quotes hold ~20 % more text. Not more
    # than two, so a broad question still hears from several papers. docs/research.md.
    quotes_per_passage: int = 2
    # Key sentences the model rates before they are quoted: the best N by focus score are each
    # asked "does this sentence answer the question?" (yes/no, P(yes) where the backend gives it,
    # ~0.9 s a sentence for the starter model) and re-ranked by it. On 30 bench questions it
    # was not tuned on, answers were right 12/30 against 9/30 by focus score alone, in 18.5 s against
    # 11.3 s (docs/research.md). Twelve, not eight: a gold fact sits at rank 8-13 by focus score
    # for 8 of the 58 development questions; simulated on them (odd-numbered r-papers and mixed
    # fields), the four quotes held 60 + 16 of 145 gold fact groups with 12 rated against 56 + 15
    # with 8, and 16 rated added none (~0.6 s a sentence). 0: focus score alone.
    quote_candidates: int = 12
    # After the check, a claim of the model that states a figure no passage states, and that no
    # passage supports, is withdrawn (named in the answer's notes) if a supported claim remains.
    withdraw_unstated: bool = True
    # After the check, a claim of the model that no cited passage supports even in part is
    # withdrawn (named in the answer's notes) if a supported claim remains (recite.withdraw_unsupported).
    # On the 30 held-out questions (bench/answers.py --fixed-first-turn, --variant against the
    # same first claims) 9 claims went: 5 wrong ("scores 1, 2 and 3", "(x || g): correlated"),
    # 2 right (m20's "No, catch trials did not lead to consolidation", which the judge rates 0.21),
    # 2 vague; right 18/30 both, citations supported 95 % against 89 % (the model's own claims
    # 70 % against 50 %). A reader may copy a marked claim; a withdrawn one stays in the notes.
    withdraw_unsupported: bool = True
    # After the check, a claim of the model it faults is written again once from the key passages
    # and the sentences it cited (research/rewrite.py); a quote never takes its place.
    rewrite_faulted: bool = True
    # The model's direct answer is rated for stating what was asked, like the quote candidates;
    # one the papers' best sentence outrates by answer_check.ANSWER_MARGIN is written again (answer_check.py).
    answer_check: bool = True
    synthesis_timeout_s: float = 600.0
    temperature: float = 0.2


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
        settings, problems, rejected = _validate(cls, raw, str(path))
        if rejected:
            # The next save writes the defaults in their place: keep what the user wrote.
            problems.append(f"{path}: the file as it was is kept{_keep_aside(path, '.rejected.json', move=False)}")
        return settings, problems

    def save(self, path: Path | None = None) -> None:
        path = path or self.file()
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=2), encoding="utf-8")
        os.replace(tmp, path)  # atomic: a crash leaves the old or the new file

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


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
