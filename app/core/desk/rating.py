"""Desk operations on measuring models: the judge calibrated, every model rated on this library,
a judge chosen (and the previous choice kept where the new one fails)."""

from __future__ import annotations

import statistics
import time
from dataclasses import asdict, replace
from datetime import datetime
from pathlib import Path

from ..errors import Cancelled, ModelError, ResearchDeskError
from ..events import Task
from ..settings import ModelConfig
from ..models.configured import effective_config
from .writing import WritingOperations

RATING_KEY = "model_ratings"  # the library's record of its last `models rate` (library.json)
QUESTIONS = 30  # generated questions a model answers when rated
# A rating question is answered like any question, less what measures the judge rather than the
# writer (the judge is rated on the labelled pairs): the direct answer only, the first turn fixed.
RATE_OVERRIDES = {"check_support": False, "answer_check": False, "rewrite_faulted": False,
                  "key_sentences": 1, "quote_candidates": 0, "first_turn_claims": 1,
                  "withdraw_unstated": False, "withdraw_unsupported": False, "first_claim_tokens": 300,
                  "focus_tokens": None}  # None: the setting, not sized by the desk's own chat model (every model reads alike)


class RatingOperations(WritingOperations):
    def model_config_for(self, target: str | ModelConfig | None) -> ModelConfig:
        """The config of a model named by a catalog id, a GGUF path or a model on the chat's server
        (or given whole, as the settings dialog edits it); None/"": the judge the settings name, else the chat model."""
        from ..models import catalog, provision

        if isinstance(target, ModelConfig):
            return effective_config(target, "chat")
        if not target:
            return self.judge_config() or self.chat_config()
        entry = next((e for e in catalog.entries() if e.id == target and e.role == "chat"), None)
        if entry is not None:
            if not provision.is_provisioned(entry):
                raise ResearchDeskError(f"{entry.id} is not provisioned yet.", f"Run `research-desk models setup {entry.id}`.")
            return ModelConfig(path=str(provision.model_path(entry.id)), catalog_id=entry.id, context_length=4096,
                               threads=self.settings.chat.threads)
        path = Path(target).expanduser()
        if path.suffix == ".gguf" or path.is_file():
            if not path.is_file():
                raise ResearchDeskError(f"GGUF file not found: {path}", "Give the path of a .gguf file or a catalog id.")
            return ModelConfig(path=str(path.resolve()), context_length=4096, threads=self.settings.chat.threads)
        chat = self.settings.chat
        if chat.backend == "llamacpp":
            raise ResearchDeskError(f"No model {target!r}: not a catalog id or a GGUF file.",
                                    "Give a catalog id (`research-desk models list`), a .gguf path, or choose a server in Settings.")
        return replace(chat, model=target)

    def calibrate_judge(self, target: str | ModelConfig | None = None, task: Task | None = None):
        """Run the labelled pairs through a judge, choose and keep its cut-offs (rating/calibrate.py).
        Returns the Calibration; the loaded models take the new cut-offs at once."""
        from ..models.factory import make_chat
        from ..rating.calibrate import calibrate

        task = task or Task()
        cfg = self.model_config_for(target)
        task.stage("loading the judge", 1, 2, cfg.describe())
        judge = make_chat(cfg)
        try:
            task.stage("reading the labelled pairs", 2, 2)
            cal = calibrate(judge, progress=lambda n, total: task.progress(n, total, "pairs"), cancelled=task.token)
            _keep(cfg, judge.name, cal)
        finally:
            judge.close()
        for loaded in (self._chat, self._judge):
            if loaded is not None and cal.calibrated and repr(cfg) in (self._chat_key, self._judge_key):
                loaded.judge_cutoffs = cal.cutoffs
        return cal

    def choose_judge(self, target: str | None) -> str:
        """Make `target` the support check's judge (None/"same": the chat model). The model is loaded
        first: one that does not load, or a server that is down, raises and the previous judge stays."""
        from ..models.factory import make_chat

        if not target or target == "same":
            self.settings.judge = ModelConfig(backend="")
        else:
            cfg = self.model_config_for(target)
            try:
                make_chat(cfg).close()
            except ResearchDeskError as exc:
                raise type(exc)(f"{exc.message} The judge stays {self.judge_description()}.", exc.hint) from None
            self.settings.judge = cfg
        self.settings.save()
        return f"judge: {self.judge_description()}"

    def judge_description(self) -> str:
        cfg = self.judge_config()
        return "the chat model" if cfg is None else cfg.describe()

    def rating_candidates(self, targets: list[str] | None = None) -> list[tuple[str, ModelConfig]]:
        """(name, config) of each model to rate: the given ones, else the provisioned catalog chat
        models, the configured chat model and judge, and the models of a configured server."""
        from ..models import provision
        from ..models.factory import list_models

        if targets:
            return [(t, self._config_or_error(t)) for t in targets]
        out: list[tuple[str, ModelConfig]] = []
        for status in provision.list_available():
            if status.entry.role == "chat" and status.provisioned:
                out.append((status.entry.id, ModelConfig(path=str(status.path), catalog_id=status.entry.id, context_length=4096,
                                                         threads=self.settings.chat.threads)))
        for cfg in (self.settings.chat, self.settings.judge):
            if cfg.backend == "llamacpp" and cfg.path and all(Path(c.path) != Path(cfg.path) for _, c in out):
                out.append((Path(cfg.path).stem, replace(cfg, context_length=4096)))
            elif cfg.backend in ("openai", "lmstudio"):
                try:
                    served = [m.id for m in list_models(cfg) if m.kind in ("", "llm")]
                except ResearchDeskError:
                    served = [cfg.model] if cfg.model else []  # rated as "not rated: the server is down"
                for model in served or [cfg.model]:
                    if all(c.backend != cfg.backend or c.model != model for _, c in out):
                        out.append((model or cfg.describe(), replace(cfg, model=model)))
        return out

    def _config_or_error(self, target: str):
        try:
            return self.model_config_for(target)
        except ResearchDeskError as exc:  # rated as "not rated: …", the others still are
            return exc

    def rate_models(self, targets: list[str] | None = None, task: Task | None = None, *, questions: int = QUESTIONS):
        """Rate each model (rating/rate.py) and keep the report in the library; returns it."""
        from ..rating.questions import pick
        from ..rating.rate import ModelRating, RatingReport, recommend

        task = task or Task()
        started = time.monotonic()
        texts = self._library_texts()
        asked = pick(self._library_questions(texts), questions)
        if not asked:
            raise ResearchDeskError("The library has no sentence to make a question from.", "Import papers first.")
        candidates = self.rating_candidates(targets)
        report = RatingReport(questions=len(asked))
        for n, (name, cfg) in enumerate(candidates, 1):
            if isinstance(cfg, ResearchDeskError):
                report.models.append(ModelRating(name, "llamacpp" if name.endswith(".gguf") else "", error=cfg.message))
                continue
            task.stage(f"rating {name}", n, len(candidates), cfg.describe())
            report.models.append(self._rate_one(name, cfg, asked, max(texts.values(), key=len), task))
        report.chat, report.judge = recommend(report.models)
        report.seconds = time.monotonic() - started
        report.when = datetime.now().isoformat(timespec="seconds")
        self.library.set_meta(**{RATING_KEY: report.to_stored()})
        return report

    def last_rating(self):
        """The library's last rating report (None before the first)."""
        from ..rating.rate import RatingReport

        stored = self.library.meta().get(RATING_KEY)
        return RatingReport.from_stored(stored) if stored else None

    def _rate_one(self, name: str, cfg: ModelConfig, questions, sample: str, task: Task):
        from ..models.factory import make_chat
        from ..rating.rate import ModelRating, PeakMemory, measure_speed

        rating = ModelRating(name, cfg.backend)
        try:
            with PeakMemory() as memory:
                chat = make_chat(cfg)
                try:
                    rating.name = chat.name or name  # as a loaded model names itself (first_turn_size.py finds it so)
                    rating.context_length = chat.context_length
                    rating.read_tps, rating.write_tps = measure_speed(chat, sample)
                    rating.judge = self._judge_rating(cfg, chat, task)
                    self._answer(rating, chat, questions, task)
                finally:
                    chat.close()
            rating.peak_mb = memory.peak_mb if cfg.backend == "llamacpp" else None
        except Cancelled:
            raise
        except ResearchDeskError as exc:
            rating.error = exc.message
        return rating

    def _judge_rating(self, cfg: ModelConfig, chat, task: Task):
        """From the model's stored calibration, else calibrated now (and kept)."""
        from ..models import calibrations
        from ..rating.calibrate import calibrate, rescored
        from ..rating.rate import JudgeRating

        stored = calibrations.lookup(calibrations.model_key(cfg, chat.name)) if chat.gives_probabilities else None
        # Its P(yes) kept: scored at its cut-offs by today's rules and labels; without them, as measured then.
        cal = rescored(chat.name, stored.p_yes, stored.cutoffs) if stored is not None and stored.p_yes else None
        if stored is not None and cal is None:
            return JudgeRating(stored.agreement, stored.misattributions_passed, stored.misattributions, asdict(stored.cutoffs))
        if cal is None:
            cal = calibrate(chat, progress=lambda n, total: task.progress(n, total, "labelled pairs"), cancelled=task.token)
            _keep(cfg, chat.name, cal)
        s = cal.score
        cuts = asdict(cal.cutoffs) if cal.cutoffs else None
        return JudgeRating(round(s.agreement, 4), s.misattributions_passed, s.misattributions, cuts)

    def _answer(self, rating, chat, questions, task: Task) -> None:
        """Ask each question against the library with `chat` writing; count answers that state what was left out."""
        from ..rating.questions import is_right

        seconds = []
        for n, q in enumerate(questions, 1):
            task.check()
            task.progress(n - 1, len(questions), "questions", q.text[:80])
            funnel = self.funnel(Task(token=task.token), RATE_OVERRIDES)
            funnel.chat_model = lambda: chat
            t = time.monotonic()
            try:
                result = funnel.run(q.text)
            except Cancelled:
                raise
            except ModelError:
                raise  # the model failed: it is not rated (the caller says why)
            except ResearchDeskError:
                result = None  # no evidence for this question: counted as asked, not right
            seconds.append(time.monotonic() - t)
            rating.asked += 1
            said = " ".join(c.text for c in result.model_claims()) if result and result.claims else (result.answer if result else "")
            rating.right += is_right(q, said)
        rating.answer_s_p50 = statistics.median(seconds) if seconds else None

    def _library_texts(self) -> dict[str, str]:
        """Each indexed paper's running text, its content chunks in order."""
        from ..library.schema import CONTENT_CHUNKS

        table = self.library.chunks_table(CONTENT_CHUNKS).to_arrow().select(["paper_id", "chunk_index", "source_type", "text"])
        rows = sorted(zip(*(table.column(c).to_pylist() for c in ("paper_id", "chunk_index", "source_type", "text"))),
                      key=lambda r: (r[0], r[1]))
        texts: dict[str, list[str]] = {}
        for paper_id, _, kind, text in rows:
            if kind in ("content", "", None):
                texts.setdefault(paper_id, []).append(text or "")
        return {pid: "\n".join(parts) for pid, parts in texts.items()}

    @staticmethod
    def _library_questions(texts: dict[str, str]):
        from ..rating.questions import questions_from

        return {pid: questions_from(pid, text) for pid, text in texts.items()}


def _keep(cfg: ModelConfig, served_name: str, cal) -> None:
    """Store a calibration's cut-offs for `cfg`'s model (a judge in words has none to keep)."""
    from ..models import calibrations

    if not cal.calibrated:
        return
    s = cal.score
    name = Path(cfg.path).name if cfg.backend == "llamacpp" and cfg.path else served_name
    calibrations.save(calibrations.StoredCalibration(
        calibrations.model_key(cfg, served_name), name, cal.cutoffs.supported, cal.cutoffs.partial,
        round(s.agreement, 4), s.misattributions_passed, s.misattributions, s.pairs, cal.when, cal.p_yes,
        cal.cutoffs.not_found))
