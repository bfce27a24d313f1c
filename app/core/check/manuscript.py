"""Check a manuscript: every citing sentence against the library paper it cites.

Per sentence: embed it once. Per (sentence, cited paper): the cited paper is read whole
(once per check) and its sentence windows ranked against the sentence (locate.py);
the rules settle the pair where the text leaves no doubt — a number or a name the paper
does not state anywhere near the sentence's terms (looked for around the best windows and
then in the whole paper), the opposite direction, near-verbatim agreement — and the model
reads the best window with its neighbouring sentences only where they cannot tell, then,
if it finds no support there, one other place of the paper (judge.py: short calls, a
verdict each). Supported and partial keep their verdict (missing words alone never make a
claim partial: they only send it to the model); unsupported means "not found in the cited paper", with the best passage
and its page offered. Another paper's passage (a hybrid search
of the whole library) that the support check's rules accept and that is closer to the
sentence than anything in the cited paper is suggested as `better_source` (rules only:
a second model call per citation would double the time).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from .. import events
from ..errors import Cancelled, ResearchDeskError
from ..library.store import CONTENT_CHUNKS
from ..models.base import ChatModel
from ..records import Evidence, Paper, Support
from ..research.evidence import retrieval
from ..research.evidence.not_evidence import is_reference_list
from ..research.check.support import Pair, check_pairs
from .draft import CitingSentence, Draft
from .judge import DOUBTED, PARTIAL_NOTE, claim_in_context, model_reads, model_verdict, rule_ruling
from .locate import PaperText, Window, best_windows, read_paper
from .parse import parse_draft
from .report import CheckedCitation, CheckedSentence, CheckReport, Source, Verdict
from .resolve import BibEntry, Resolution, Resolver, bibitem_entries, read_bib

log = logging.getLogger(__name__)

LIBRARY_WIDE = 12  # passages fetched from the whole library (better sources)
BETTER_MIN_COSINE = 0.45  # a suggestion for a key not in the library must be at least this close
BETTER_MARGIN = 0.02  # …and for a cited paper, this much closer than the cited paper's best passage
MODEL_TIMEOUT_S = 120.0
# The model's readings of one citation, worst first: of two places read, the better one stands
# (a failed reading ranks above "not stated": the check then says it was read by rules only).
BETTER = (Support.UNSUPPORTED.value, "", Support.PARTIAL.value, Support.SUPPORTED.value)
# The paper's best windows by terms re-ranked by their own embeddings (locate.PRESELECT of
# them, ~5-12 ms each): a paraphrase shares the meaning, not the rare words.
RERANK_WINDOWS = True
SentenceSink = Callable[[CheckedSentence], None]

VERDICT_OF = {
    Support.SUPPORTED.value: Verdict.SUPPORTED.value,
    Support.PARTIAL.value: Verdict.PARTIAL.value,
    Support.UNSUPPORTED.value: Verdict.NOT_FOUND.value,
}


@dataclass
class _Cited:
    key: str
    resolution: Resolution
    paper: Paper | None


def check_manuscript(desk, draft: Path, bib: Path | None, task: events.Task,
                     on_sentence: SentenceSink | None = None) -> CheckReport:
    """The report on every citing sentence of `draft` (cancel: what is done, marked partial).

    `on_sentence` receives each sentence's result as soon as it is checked (the Check tab
    colours the manuscript while the rest is checked).
    """
    started = time.monotonic()
    draft = Path(draft)
    task.stage("Reading the manuscript", 1, 2, draft.name)
    parsed = parse_draft(draft)
    report = CheckReport(draft=str(draft), problems=list(parsed.problems), total_sentences=len(parsed.sentences))
    bib_path = _bib_path(draft, bib, parsed, report)
    entries: dict[str, BibEntry] = {}
    if bib_path is not None:
        report.bib = str(bib_path)
        entries, problems = read_bib(bib_path)
        report.problems += problems
    elif parsed.bibitems:
        entries = bibitem_entries(parsed.bibitems)
        report.bib = f"{draft.name} (thebibliography)"
    papers = [p for p in desk.library.list_papers() if p.complete]
    if not papers:
        report.problems.append("The library has no indexed papers: every citation is reported as not in the library (add the PDFs you cite).")
    resolver = Resolver(papers)
    cited = _resolve_all(parsed, entries, resolver, bib_path is not None or bool(parsed.bibitems), report)
    if words_only := {c.paper.id for c in cited.values() if c.paper is not None and c.paper.vectors_pending}:
        # Their passages are found by BM25 alone until import's vectors phase reaches them (ingest/vectors.py).
        report.problems.append(retrieval.words_only_note(len(words_only)) + " Check again when the import has finished.")
    report.timings["parse_s"] = round(time.monotonic() - started, 3)

    checker = _Checker(desk, {p.id: p for p in papers}, report, task)
    total = len(parsed.sentences)
    task.stage("Checking citations", 2, 2, f"{total} citing sentences")
    task.progress(0, total, "sentences")
    t = time.monotonic()
    for n, sentence in enumerate(parsed.sentences, 1):
        if task.cancelled:
            report.partial = True
            break
        try:
            checked = checker.sentence(sentence, [cited[c.key] for c in sentence.cites])
        except Cancelled:
            report.partial = True
            break
        report.sentences.append(checked)
        if on_sentence is not None:
            on_sentence(checked)
        task.progress(n, total, "sentences", sentence.text[:80])
    n_citations = sum(len(s.citations) for s in report.sentences)
    report.timings.update({k: round(v, 3) for k, v in checker.spent.items()})
    report.timings.update(checker.counts)
    report.timings["check_s"] = round(time.monotonic() - t, 3)
    report.timings["per_citation_s"] = round(report.timings["check_s"] / max(1, n_citations), 3)
    report.timings["total_s"] = round(time.monotonic() - started, 3)
    return report


def _bib_path(draft: Path, bib: Path | None, parsed: Draft, report: CheckReport) -> Path | None:
    if bib is not None:
        bib = Path(bib)
        if not bib.is_file():
            report.problems.append(f"{bib}: no such .bib file; keys resolve by their own form only")
            return None
        return bib
    if parsed.bib_hint:
        hint = draft.parent / parsed.bib_hint
        for candidate in (hint, hint.with_name(hint.name + ".bib")):
            if candidate.is_file():
                return candidate
        report.problems.append(f"{draft.name} names {parsed.bib_hint} as its bibliography, but no such file is beside it; keys resolve by their own form only")
    elif not parsed.bibitems and parsed.sentences:
        report.problems.append("No .bib given (--bib) and the draft carries no reference list: keys resolve by their own form only (e.g. smith2020 → Smith, 2020).")
    return None


def _resolve_all(parsed: Draft, entries: dict[str, BibEntry], resolver: Resolver, has_refs: bool, report: CheckReport) -> dict[str, _Cited]:
    by_id = {p.id: p for p in resolver.papers}
    out: dict[str, _Cited] = {}
    for s in parsed.sentences:
        for c in s.cites:
            if c.key in out:
                continue
            entry = entries.get(c.key) if c.kind == "key" else _author_year_entry(c.key, entries)
            r = resolver.resolve(c.key, entry, author_year=c.kind == "author-year")
            if r.paper_id:
                out[c.key] = _Cited(c.key, r, by_id[r.paper_id])
                continue
            if resolver.papers:
                if entry is None and has_refs and c.kind == "key":
                    r.problem = "missing from the reference list (.bib), and its form matches no library paper"
                report.problems.append(f"{c.key}: {r.problem} (line {s.line}) — not in the library")
            out[c.key] = _Cited(c.key, r, None)
    return out


def _author_year_entry(key: str, entries: dict[str, BibEntry]) -> BibEntry | None:
    """The .bib entry whose first author and year a text citation ("Zeileis 2004") names."""
    from .resolve import fold

    parts = key.rsplit(" ", 1)
    if len(parts) != 2:
        return None
    name, year = fold(parts[0]).replace(" ", ""), parts[1][:4]
    hits = [e for e in entries.values() if e.authors and e.authors[0].replace(" ", "") == name and e.year == year]
    return hits[0] if len(hits) == 1 else None


class _Checker:
    def __init__(self, desk, papers: dict[str, Paper], report: CheckReport, task: events.Task) -> None:
        self.desk = desk
        self.papers = papers
        self.report = report
        self.task = task
        self._chat: ChatModel | None = None
        self._chat_failed = False
        self._embedder = desk.embedder() if papers else None
        self._table = desk.library.chunks_table(CONTENT_CHUNKS) if papers else None
        self._texts: dict[str, PaperText] = {}  # each cited paper read once per check
        self.spent: dict[str, float] = {}  # seconds per step, summed over sentences
        self.counts: dict[str, int] = {"rule_pairs": 0, "model_pairs": 0}

    def _spent(self, what: str, since: float) -> None:
        self.spent[what] = self.spent.get(what, 0.0) + time.monotonic() - since

    def chat(self) -> ChatModel | None:
        if self._chat is None and not self._chat_failed:
            try:
                self._chat = self.desk.chat()
            except ResearchDeskError as exc:
                self._chat_failed = True
                self.report.problems.append(f"The chat model could not be loaded ({exc.message}): the rules alone judged support.")
        return self._chat

    def _paper_text(self, paper_id: str) -> PaperText:
        if paper_id not in self._texts:
            self._texts[paper_id] = read_paper(self._table, paper_id)
        return self._texts[paper_id]

    def sentence(self, s: CitingSentence, cited: list[_Cited]) -> CheckedSentence:
        out = CheckedSentence(s.text, s.line, s.column)
        in_library = [c for c in cited if c.paper is not None]
        if not in_library and not self.papers:
            out.citations = [self._absent(c) for c in cited]
            return out
        t = time.monotonic()
        qvec = self._embedder.embed_one(s.text)
        self._spent("embed_s", t)
        t = time.monotonic()
        # The whole library, for better sources; the cited papers are read whole (locate.py).
        wide = _evidence(retrieval.search(self._table, qvec, s.text, limit=LIBRARY_WIDE), s.text)
        reranker = self._embedder if RERANK_WINDOWS else None
        windows = {c.paper.id: best_windows(s.text, qvec, self._paper_text(c.paper.id), reranker) for c in in_library}
        self._spent("search_s", t)
        cited_ids = {c.paper.id for c in in_library}
        for c in cited:
            if c.paper is None:
                checked = self._absent(c)
            else:
                checked = self._check(s.text, c.key, c.paper, windows[c.paper.id], s.before)
            if checked.verdict != Verdict.SUPPORTED.value:
                found = windows.get(c.paper.id, []) if c.paper else []
                best_here = max((w.chunk_cosine for w in found), default=None)
                checked.better_source = self._better(s.text, wide, cited_ids, best_here)
            out.citations.append(checked)
        return out

    @staticmethod
    def _absent(c: _Cited) -> CheckedCitation:
        return CheckedCitation(c.key, None, Verdict.NOT_IN_LIBRARY.value, note=c.resolution.problem)

    def _check(self, claim: str, key: str, paper: Paper, windows: list[Window], before: str = "") -> CheckedCitation:
        if not windows:
            return CheckedCitation(key, paper.id, Verdict.NOT_FOUND.value,
                                   note="the paper has no indexed text to search (re-index it)")
        context = " ".join([paper.title, *paper.authors])
        text = self._paper_text(paper.id)
        ruling = rule_ruling(claim, windows, text, context)
        verdict, note, w = ruling.verdict, ruling.reason, ruling.window
        if verdict:
            self.counts["rule_pairs"] += 1
        else:
            chat = self.chat()
            failure = "no chat model"
            if chat is not None:
                # The model reads the window with its neighbours; where it finds no support
                # there (or only doubts it), one other place of the paper that holds as much of
                # the sentence. The better of the two readings stands.
                read = []
                for place in model_reads(ruling.window, windows, text):
                    t = time.monotonic()
                    # The model reads the sentence with the one before it where it refers back to it.
                    said, why = model_verdict(chat, claim_in_context(claim, before), place, cancelled=self.task.token,
                                              timeout_s=MODEL_TIMEOUT_S, acronyms=text.acronyms)
                    self._spent("model_s", t)
                    self.counts["model_pairs"] += 1
                    read.append((said, why, place))
                    if not said or (said != Support.UNSUPPORTED.value and why != DOUBTED):
                        break  # settled (or the model failed: the rules' verdict stands, below)
                verdict, failure, w = max(read, key=lambda r: (BETTER.index(r[0]), r[1] != DOUBTED))
            if not verdict:  # no model verdict: the rules found nothing wrong, but nothing settles it either
                w = ruling.window
                verdict, note = Support.PARTIAL.value, f"checked by rules only ({failure}): read the quote"
            elif verdict == Support.UNSUPPORTED.value:
                w = ruling.window
                note = "the model judged the paper's closest passages not to state this"
            elif verdict == Support.PARTIAL.value:
                # A doubt says so; else the model's reading, never a list of the claim's words the
                # passage lacks: a paraphrase lacks words and states the claim all the same.
                note = failure or PARTIAL_NOTE
        e = w.evidence
        return CheckedCitation(key, paper.id, VERDICT_OF[verdict], e.page, e.page_label or str(e.page),
                               " ".join(w.text.split()), note=note)

    def _better(self, claim: str, wide: list[Evidence], cited: set[str], best_here: float | None) -> Source | None:
        floor = BETTER_MIN_COSINE if best_here is None else max(BETTER_MIN_COSINE, best_here + BETTER_MARGIN)
        others = [e for e in wide if e.paper_id not in cited and e.paper_id in self.papers and e.score >= floor][:3]
        if not others:
            return None
        for e in others:
            paper = self.papers[e.paper_id]
            p = check_pairs([Pair(claim, e)], None, context=" ".join([paper.title, *paper.authors]))[0]
            if p.rule == Support.SUPPORTED.value:
                e = p.evidence
                return Source(e.paper_id, e.page, e.page_label or str(e.page), p.quote)
        return None


def _evidence(hits: list[retrieval.Candidate], query: str) -> list[Evidence]:
    """Search hits as evidence passages, reference lists left out (they match every keyword)."""
    out = []
    for c in hits:
        if not c.text.strip() or is_reference_list(c.text, c.section):
            continue
        out.append(Evidence(number=len(out) + 1, paper_id=c.paper_id, page=c.page, page_label=c.page_label, section=c.section,
                            text=c.text, score=round(float(np.clip(c.cosine, -1, 1)), 4), stage="check", query=query,
                            char_start=c.char_start, char_end=c.char_end))
    return out
