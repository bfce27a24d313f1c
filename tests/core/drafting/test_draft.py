"""Section drafting: the real pipeline on a small real library with the tiny GGUF
(in-process and through the CLI), plus control-flow edge cases with a scripted
chat model and unit checks of the pieces (context file, queries, evidence
diversity, reply salvage, citation clean-up, LaTeX)."""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import bibtexparser
import pymupdf
import pytest

from app.core.bibtex import citation_keys
from app.core.drafting import DraftContext, context_from_dict, default_queries, load_context
from app.core.drafting.draft import (
    DraftParams,
    Paragraph,
    draft_section,
    finish_paragraph,
    parse_paragraphs,
    select_evidence,
    trim_repetition,
)
from app.core.drafting.outputs import paragraph_latex, write_outputs
from app.core.errors import ModelError, ResearchDeskError
from app.core.events import ClaimWritten, Notice, Round, Stage, Task
from app.core.records import Evidence, Paper
from app.core.settings import DeepParams, Settings
from tests.support.chat import ScriptedChat, TimedChat
from tests.support.clock import FakeClock
from tests.support.library import desk_on, tiny_settings
from tests.support.papers import paper
from tests.support.paths import REPO

PAPERS = {
    "hac.pdf": (
        "Econometric Computing with HC and HAC Covariance Matrix Estimators",
        ["Achim Zeileis"],
        "D:20040301000000",
        [
            "# Abstract\n\nData described by econometric models typically contain autocorrelation and heteroskedasticity. "
            "Covariance matrix estimators that stay consistent in their presence are called HC and HAC estimators.",
            "# HC estimators\n\nThe sandwich estimator combines a bread matrix with a meat matrix. The HC3 estimator applies "
            "a jackknife-type adjustment to the residuals and performs well in small samples.",
            "# HAC estimators\n\nHAC estimators weight the autocovariances with a kernel such as the quadratic spectral "
            "kernel, and the bandwidth is chosen by automatic selection procedures.",
        ],
    ),
    "clustered.pdf": (
        "Various Versatile Variances: Clustered Covariances in R",
        ["Susanne Berger", "Nathaniel Graham", "Achim Zeileis"],
        "D:20170601000000",
        [
            "# Abstract\n\nClustered covariances are implemented for cross-section and panel data models, "
            "including generalized linear models and count data models.",
            "# Clustered covariances\n\nClustered standard errors allow errors to be correlated within clusters such as "
            "firms or schools. With few clusters they are biased downwards, and an HC1 or HC3 type bias adjustment helps.",
            "# Simulation\n\nIn a Monte Carlo simulation with 10 to 50 clusters the coverage of clustered confidence "
            "intervals stayed below nominal with HC0 and came close to nominal with the HC3 adjustment.",
        ],
    ),
    "panel.pdf": (
        "Panel-Corrected Standard Errors for Time-Series Cross-Section Data",
        ["Nathaniel Beck", "Jonathan Katz"],
        "D:19950901000000",
        [
            "# Abstract\n\nTime-series cross-section data have errors that are correlated across panels and "
            "heteroskedastic. Panel-corrected standard errors account for this contemporaneous correlation.",
            "# Two-way clustering\n\nWhen errors are correlated both within firms and within years, clustering along "
            "both dimensions gives standard errors that remain reliable.",
        ],
    ),
}

CONTEXT = {
    "concept": "Cluster-robust covariance estimation for regression models with grouped data in R, "
               "comparing clustered sandwich estimators with HC and HAC covariances.",
    "open_questions": "How accurate are clustered standard errors with few clusters?",
    "method": "A Monte Carlo simulation of coverage of clustered confidence intervals with 10 to 50 clusters.",
}
FAST_DEEP = DeepParams(candidates=8, keep_per_search=4)  # two scoring calls per search with the tiny model


def _settings(tiny_models) -> Settings:
    return tiny_settings(tiny_models, deep=FAST_DEEP)


@pytest.fixture(scope="module")
def draft_library(tmp_path_factory, tiny_models):
    """A real library of three short papers on robust covariances, built once for this module."""
    papers = {name: (title, authors, pages, {"metadata": {"creationDate": date}})
              for name, (title, authors, date, pages) in PAPERS.items()}
    with desk_on(tmp_path_factory.mktemp("drafting"), papers, _settings(tiny_models)) as desk:
        yield desk


@pytest.fixture(scope="module")
def real_draft(draft_library, tmp_path_factory):
    """One real run with the tiny model: related work, 45 s budget, at most one custom search."""
    seen: list = []
    result = draft_section(
        draft_library, "related-work", context_from_dict(CONTEXT), time_minutes=0.75,
        params=DraftParams(max_custom_searches=1), task=Task(sink=seen.append),
    )
    out = tmp_path_factory.mktemp("draft-out")
    return result, write_outputs(result, out), seen


def _check_files(files: dict[str, Path], library_papers: list[Paper]) -> list[str]:
    """The invariants every draft must meet, checked on the written files. Returns the cited keys."""
    md = files["markdown"].read_text(encoding="utf-8")
    body = md.split("## References")[0]
    cited = sorted({k for group in re.findall(r"\[(@[^\[\]]+)\]", body) for k in re.findall(r"@([\w:\-]+)", group)})
    assert cited, f"the draft has no citation key:\n{md}"

    library = bibtexparser.parse_string(files["bibtex"].read_text(encoding="utf-8"))
    assert not library.failed_blocks, [b.error for b in library.failed_blocks]
    bib_keys = {e.key for e in library.entries}
    assert set(cited) == bib_keys, (cited, bib_keys)  # every key is in the .bib, and only cited papers are
    keys = citation_keys(library_papers)
    by_key = {k: pid for pid, k in keys.items()}
    for entry in library.entries:
        pid = by_key[entry.key]  # every entry is a library paper, under its stable key
        assert pid in entry.fields_dict["note"].value
        paper = next(p for p in library_papers if p.id == pid)
        assert entry.fields_dict["year"].value == paper.year

    tex = files["latex"].read_text(encoding="utf-8")
    tex_keys = sorted({k for group in re.findall(r"\\cite\{([^}]*)\}", tex) for k in group.split(",")})
    assert tex_keys == cited

    with files["ledger_csv"].open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert rows and {r["key"] for r in rows} == set(cited)
    return cited


def _assert_pages_hold_quotes(desk, rows) -> None:
    """Every ledger page exists in its paper and holds the quoted words."""
    for row in rows:
        paper = desk.library.get_paper(row["paper_id"])
        page = int(row["page"])
        assert 1 <= page <= paper.page_count
        assert len(row["quote"].split()) <= 31  # 30 words (+ an ellipsis)
        with pymupdf.open(desk.library.pdf_path(paper.id)) as doc:
            page_words = set(re.findall(r"[a-z0-9]+", doc[page - 1].get_text().lower()))
        quote_words = [w for w in re.findall(r"[a-z0-9]+", row["quote"].lower()) if len(w) > 3]
        assert quote_words and sum(w in page_words for w in quote_words) >= 0.8 * len(quote_words), (row, page)


# -- real end to end ---------------------------------------------------------------------
@pytest.mark.slow
def test_real_draft_cites_library_papers_and_pages(draft_library, real_draft):
    result, files, events = real_draft
    papers = draft_library.library.list_papers()
    cited = _check_files(files, papers)
    assert cited == sorted(result.cited_keys())
    with files["ledger_csv"].open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    _assert_pages_hold_quotes(draft_library, rows)
    for row in rows:
        for score in ("vector_score", "combined_score"):
            assert 0.0 <= float(row[score]) <= 1.0
    # Every paragraph carries a citation, and every citation span points at its key.
    assert result.paragraphs and all(p.keys for p in result.paragraphs)
    md = result.markdown
    for c in result.citations:
        assert md[c.start:c.end] == "@" + result.keys[c.paper_id]
    # The searches are tracked: the default queries first, and all evidence came from them.
    assert result.searches[0].kind == "default"
    assert {e.query for e in result.gathered} <= {s.query for s in result.searches}
    assert len([s for s in result.searches if s.kind == "custom"]) <= 1
    assert result.timings["total_s"] < 45 + 75  # the budget, plus the writer's bounded grace
    rounds = [e.record for e in events if isinstance(e, Round)]
    assert rounds and {r.index for r in rounds} == {s.number for s in result.searches}
    assert any(isinstance(e, ClaimWritten) and isinstance(e.claim, Paragraph) for e in events), "the section streamed"
    ledger_md = files["ledger_md"].read_text(encoding="utf-8")
    assert "## Searches" in ledger_md and result.searches[0].query[:40] in ledger_md


@pytest.mark.slow
def test_cli_draft_writes_all_files(draft_library, tmp_path, tiny_models):
    config = tmp_path / "cfg"
    _settings(tiny_models).save(config / "settings.json")
    (tmp_path / "ctx.yaml").write_text(
        "concept: Clustered standard errors for grouped regression data in R.\n"
        "open_questions:\n  - How many clusters are needed?\n  - Which bias adjustment works best?\n"
        "method: Monte Carlo simulation of coverage with HC3 adjusted clustered covariances.\n",
        encoding="utf-8",
    )
    out = tmp_path / "drafts"
    env = {**os.environ, "RESEARCH_DESK_CONFIG_DIR": str(config)}
    lib = str(draft_library.library.root)
    run = subprocess.run(
        [sys.executable, "-m", "app.cli", "--library", lib, "draft", "related-work", "--context", str(tmp_path / "ctx.yaml"),
         "--time", "1", "--out", str(out)],
        capture_output=True, text=True, cwd=REPO, env=env, timeout=400,
    )
    assert run.returncode == 0, run.stderr
    files = {
        "markdown": out / "related-work.md", "latex": out / "related-work.tex", "bibtex": out / "related-work.bib",
        "ledger_csv": out / "related-work_ledger.csv", "ledger_md": out / "related-work_ledger.md",
    }
    for path in files.values():
        assert path.is_file() and path.stat().st_size > 0, path
    _check_files(files, draft_library.library.list_papers())
    assert "# Related Work" in run.stdout and "wrote" in run.stdout
    # Piped, the CLI draws no progress bar: stderr holds only what the user should know, no traceback.
    assert "Traceback" not in run.stderr and "Stage 1/3" not in run.stderr
    assert "## Searches" in files["ledger_md"].read_text(encoding="utf-8")

    # A context file with a typo fails clearly, naming the key, before any model loads.
    (tmp_path / "bad.yaml").write_text("concept: x\nhypotesis: y\nfoo: 1\n", encoding="utf-8")
    bad = subprocess.run(
        [sys.executable, "-m", "app.cli", "--library", lib, "draft", "methods", "--context", str(tmp_path / "bad.yaml")],
        capture_output=True, text=True, cwd=REPO, env=env, timeout=120,
    )
    assert bad.returncode == 1
    assert "unknown keys: hypotesis, foo" in bad.stderr and "hypothesis" in bad.stderr


# -- control flow with a scripted model ----------------------------------------------------
def draft_chat(decisions=(), writer=None, verdicts=()) -> ScriptedChat:
    """The scripted model as these tests use it (tests/support/chat.py): every passage scored 0.8,
    drafting's decisions from `decisions` (then sufficient), the section from `writer`, the support
    check's verdicts from `verdicts` (then "supported"), "ok" to deep research's speed calibration."""
    return ScriptedChat(decisions=list(decisions), writer=writer, verdicts=[*verdicts, *["supported"] * 24],
                        summary="Relevant to clustered covariances.", answer="ok", stream="silent", hears_cancel=False)


@pytest.fixture
def scripted_desk(draft_library, tiny_models):
    from app.core.desk import Desk

    desks = []

    def make(chat: ScriptedChat):
        desk = Desk(_settings(tiny_models), library=str(draft_library.library.root))
        desk.set_chat_model(chat)
        desks.append(desk)
        return desk

    yield make
    for desk in desks:
        desk.close()


def _simple_writer(keys, on_token):
    reply = json.dumps({"paragraphs": [{"cites": [keys[0]], "text": "Clustered standard errors are biased downwards with few clusters."}]})
    for i in range(0, len(reply), 4):  # streamed as a model streams, a few characters a token
        if on_token is not None:
            on_token(reply[i : i + 4])
    return reply


def test_agent_stops_at_the_custom_search_cap(scripted_desk):
    topics = iter(f"distinct topic number {i} about bandwidth kernels" for i in range(20))
    chat = draft_chat([{"sufficient": False, "missing": ["more"], "nextQuery": next(topics)} for _ in range(20)], _simple_writer)
    result = draft_section(scripted_desk(chat), "methods", context_from_dict(CONTEXT), time_minutes=None)
    custom = [s for s in result.searches if s.kind == "custom"]
    assert len(custom) == 5 and chat.roles.count("decide") == 5
    assert "custom search cap (5)" in result.limits_hit
    assert [s.number for s in result.searches] == list(range(1, len(result.searches) + 1))


def test_draft_reports_stages_searches_and_paragraphs_as_typed_events(scripted_desk):
    seen: list = []
    chat = draft_chat([{"sufficient": False, "missing": ["bandwidth choice"], "nextQuery": "kernel bandwidth selection rules"},
                         {"sufficient": True, "missing": [], "nextQuery": ""}], _simple_writer)
    result = draft_section(scripted_desk(chat), "methods", context_from_dict(CONTEXT), time_minutes=None, task=Task(sink=seen.append))
    stages = [(e.name, e.index, e.total) for e in seen if isinstance(e, Stage) and e.total == 3]
    assert [name for name, *_ in stages][:3] == ["gather", "write", "check"] and stages[-1][0] == "check"
    last = {}
    for e in seen:
        if isinstance(e, Round):
            last[e.index] = e.record
    assert sorted(last) == [s.number for s in result.searches]
    for s in result.searches:  # each search's final snapshot says what its record says
        r = last[s.number]
        assert (r.topic, r.kind, r.found, r.state) == (s.query, s.kind, s.found, "done")
        assert sorted(set(r.papers)) == s.papers and r.clock is not None
    custom = next(s for s in result.searches if s.kind == "custom")
    assert custom.query == "kernel bandwidth selection rules" and last[custom.number].gap == "bandwidth choice"
    reviewed = [r for r in last.values() if r.decision is not None]
    assert [r.decision["sufficient"] for r in reviewed] == [False, True]
    streamed = [e for e in seen if isinstance(e, ClaimWritten)]
    assert streamed and streamed[-1].claim.text.startswith("Clustered standard errors")
    assert not any(isinstance(e, Notice) and e.message.startswith("Stage") for e in seen)


def test_agent_stops_when_evidence_is_sufficient(scripted_desk):
    chat = draft_chat([{"sufficient": True, "missing": [], "nextQuery": ""}], _simple_writer)
    result = draft_section(scripted_desk(chat), "introduction", context_from_dict(CONTEXT), time_minutes=None)
    assert [s.kind for s in result.searches] == ["default"]
    assert result.stop_reason == "the model judged the evidence sufficient"
    assert result.paragraphs[0].keys


def test_agent_never_repeats_a_search(scripted_desk):
    ctx = context_from_dict(CONTEXT)
    first = default_queries("methods", ctx)[0][0]
    chat = draft_chat([
        {"sufficient": False, "missing": ["two-way clustering"], "nextQuery": first},  # a repeat: the gap is searched instead
        {"sufficient": False, "missing": ["Two-way  clustering!"], "nextQuery": ""},  # same query once normalised
    ], _simple_writer)
    result = draft_section(scripted_desk(chat), "methods", ctx, time_minutes=None)
    assert [s.query for s in result.searches] == [first, "two-way clustering"]
    assert result.searches[1].gap == "two-way clustering"
    assert result.stop_reason.startswith("no new search")


def test_invented_citations_are_removed_with_warnings(scripted_desk, draft_library):
    keys = citation_keys(draft_library.library.list_papers())

    def writer(offered, on_token):
        real = offered[0]
        text = (f"Sandwich estimators are consistent under heteroskedasticity [@{real}; @smith2020made]. "
                "Clustered errors were studied long ago (Nobody 1999). "
                "Kernel weights matter for HAC estimation \\cite{ghost2001}.")
        return json.dumps({"paragraphs": [{"cites": offered[:2], "text": text}]})

    result = draft_section(scripted_desk(draft_chat([], writer)), "related-work", context_from_dict(CONTEXT), time_minutes=None)
    text = result.paragraphs[0].text
    for invented in ("smith2020made", "Nobody 1999", "ghost2001"):
        assert invented not in text
        assert any(invented in w for w in result.warnings), result.warnings
    offered_keys = {keys[e.paper_id] for e in result.offered}
    assert set(result.cited_keys()) <= offered_keys and result.cited_keys()
    assert all(row.key in offered_keys for row in result.ledger)


def test_support_check_drops_a_redundant_unsupported_citation_and_flags_a_lone_one(scripted_desk, tmp_path):
    used: list[str] = []

    def writer(offered, on_token):
        a, b = offered[:2]
        used.extend((a, b))
        text = (f"Clustered standard errors are biased downwards when there are few clusters [@{a}; @{b}]. "
                f"Kernel weights for the autocovariances are chosen by automatic bandwidth selection [@{b}]. "
                f"Coverage reached 99 percent with the bias adjustment [@{a}].")
        return json.dumps({"paragraphs": [{"cites": [a, b], "text": text}]})

    # The model's verdicts, pair by pair in the order of the text: the first sentence's second key and the
    # second sentence's only key are unsupported; the third is "supported" by the model, but its passage
    # states no 99: the rules (the stricter judge) make it unsupported. One implementation: support.check_pairs.
    chat = draft_chat([], writer, verdicts=["supported", "unsupported", "unsupported", "supported"])
    result = draft_section(scripted_desk(chat), "related-work", context_from_dict(CONTEXT), time_minutes=None)
    a, b = used
    assert chat.roles.count("check") == 1
    text = result.paragraphs[0].text
    assert f"few clusters [@{a}]." in text, text  # dropped: the sentence keeps its supported citation
    assert f"selection [@{b}]." in text and f"adjustment [@{a}]." in text  # kept, flagged: their only source
    assert any(w.startswith(f"Paragraph 1: removed [@{b}]") and "does not state this" in w for w in result.warnings), result.warnings
    verdicts = [(r.key, r.support, r.status) for r in result.ledger]
    assert verdicts == [(a, "supported", "verified"), (b, "unsupported", "unsupported"), (a, "unsupported", "unsupported")], verdicts
    assert "99" in result.ledger[2].support_note  # why: the passage does not state 99
    assert [c.status for c in result.citations] == [r.status for r in result.ledger]
    for c in result.citations:  # spans still point at their keys after the removal
        assert result.markdown[c.start:c.end] == "@" + c.note
    assert any("2 not supported by the passage they cite" in w for w in result.warnings), result.warnings
    files = write_outputs(result, tmp_path)
    with files["ledger_csv"].open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["support"] for r in rows] == ["supported", "unsupported", "unsupported"]
    assert "✗ unsupported" in files["ledger_md"].read_text(encoding="utf-8")


def test_reply_cut_off_mid_paragraph_is_salvaged(scripted_desk):
    def writer(keys, on_token):
        reply = ('{"paragraphs": [{"cites": ["%s"], "text": "Clustered covariances correct for correlation within firms. '
                 'With few clusters the HC3 adjustment helps."}, {"cites": ["%s"], "text": "HAC estimators weight the '
                 'autocovariances with a kernel. The bandwidth is chosen auto' % (keys[0], keys[-1]))
        for piece in re.findall(r".{1,8}", reply, re.S):
            on_token(piece)
        raise ModelError("The model's JSON reply was cut off at the 96-token limit.")

    result = draft_section(scripted_desk(draft_chat([], writer)), "discussion", context_from_dict(CONTEXT), time_minutes=None)
    assert len(result.paragraphs) == 2 and not result.paragraphs[1].complete
    assert result.paragraphs[1].text.endswith("kernel [@%s]." % result.paragraphs[1].keys[0])
    assert any("cut off" in w for w in result.warnings)


# -- the budget's promise on a fake clock --------------------------------------------------
KESTREL_CONTEXT = {
    "concept": "Autumn departure of kestrels from alpine valleys after the breeding season.",
    "open_questions": "Does the altitude of the breeding site change the departure date?",
    "hypothesis": "Cold nights and scarce voles trigger the departure from the valleys.",
    "method": "GPS loggers carried by kestrels and years of ringing data in the valleys.",
    "results": "Young kestrels left the valleys later than the adults.",
}


def _timed_drafter(desk, chat, clock, section, context, minutes):
    from app.core.drafting.draft import SectionDrafter

    funnel = desk.funnel(overrides={"cutoff_evidence": 0.0, "cutoff_summaries": 0.0})
    funnel.chat_model = lambda: chat
    return SectionDrafter(funnel, DeepParams(), section, context_from_dict(context), time_minutes=minutes, clock=clock)


@pytest.mark.slow
def test_draft_budget_too_small_for_scoring_writes_from_retrieval_within_the_budget(wide_library):
    clock = FakeClock()
    # Writing and checking a full methods section: ~110 s; a scoring round ~50 s.
    chat = TimedChat(clock, summary="Relevant.", name="timed")
    drafter = _timed_drafter(wide_library, chat, clock, "methods", KESTREL_CONTEXT, 1.0)
    result = drafter.run()
    assert "score" not in chat.kinds and "decide" not in chat.kinds, chat.kinds
    assert "time (too short for scoring or agent searches)" in result.limits_hit
    assert result.searches and all(s.note == "ranked by retrieval alone" for s in result.searches)
    assert result.paragraphs and all(p.keys for p in result.paragraphs)
    assert result.ledger and all(r.support == "supported" for r in result.ledger) and "check" in chat.kinds
    assert drafter.budget.elapsed() <= 1.1 * 60, drafter.budget.elapsed()


@pytest.mark.slow
def test_draft_bigger_budget_keeps_searching_to_its_deadline(wide_library):
    clock = FakeClock()
    chat = TimedChat(clock, summary="Relevant.", name="timed")  # the agent judges the evidence sufficient at once
    drafter = _timed_drafter(wide_library, chat, clock, "methods", KESTREL_CONTEXT, 5.0)
    result = drafter.run()
    kinds = [s.kind for s in result.searches]
    assert kinds[0] == "default" and "widen" in kinds, kinds
    assert chat.kinds.count("decide") == 1, "the agent had its say once; the code widened after it"
    assert result.stop_reason.startswith("the model judged the evidence sufficient") or "time" in result.limits_hit
    used = drafter.budget.elapsed()
    assert 0.8 * 300 <= used <= 1.1 * 300, used
    assert result.paragraphs and all(p.keys for p in result.paragraphs) and result.ledger


# -- units ------------------------------------------------------------------------------
def test_context_file_validation(tmp_path):
    good = tmp_path / "c.yaml"
    good.write_text('concept: Robust covariances.\nopen_questions: ["few clusters?", "two-way?"]\nverdict: null\n', encoding="utf-8")
    ctx = load_context(good)
    assert ctx.concept == "Robust covariances." and ctx.open_questions == "few clusters?; two-way?" and ctx.verdict == ""
    as_json = tmp_path / "c.json"
    as_json.write_text(json.dumps({"concept": "X", "results": "HC3 covered 94%"}), encoding="utf-8")
    assert load_context(as_json).results == "HC3 covered 94%"

    cases = {
        "concept: x\nmethods: y\n": ["unknown key: methods", "`methods` → `method`?"],
        "hypothesis: only\n": ["no `concept`"],
        "concept: {a: 1}\n": ["`concept` must be text"],
        "- a list\n": ["must be a mapping"],
        "": ["is empty"],
        "concept: [unclosed\n": ["not valid YAML"],
    }
    for text, needles in cases.items():
        bad = tmp_path / "bad.yaml"
        bad.write_text(text, encoding="utf-8")
        with pytest.raises(ResearchDeskError) as info:
            load_context(bad)
        shown = str(info.value)
        for needle in needles:
            assert needle in shown, (text, shown)
    with pytest.raises(ResearchDeskError, match="not found"):
        load_context(tmp_path / "missing.yaml")
    example = load_context(REPO / "bench" / "draft-example.yaml")
    assert set(example.present()) == {"concept", "open_questions", "hypothesis", "method", "results", "verdict"}


def test_default_queries_follow_the_seed():
    full = DraftContext(concept="C", open_questions="Q", hypothesis="H", method="M", results="R", verdict="V")
    expect = {
        "introduction": ["C. Q. H."], "related-work": ["C. Q.", "M. H."], "methods": ["M. H."], "results": ["R."],
        "discussion": ["V. R."], "abstract": ["C. R."], "conclusion": ["V. C."],
    }
    for section, queries in expect.items():
        assert default_queries(section, full)[0] == queries, section
    queries, notes = default_queries("results", DraftContext(concept="Only the concept"))
    assert queries == ["Only the concept."] and "searching with the concept" in notes[0]
    with pytest.raises(ResearchDeskError, match="Unknown section"):
        default_queries("appendix", full)


def ev(pid, page, score, query="q1", text="text"):
    return Evidence(number=0, paper_id=pid, page=page, page_label=str(page), section="", text=text, score=score, query=query)


def test_evidence_selection_prefers_different_papers():
    pool = [ev("a", 1, 0.9), ev("a", 2, 0.88), ev("a", 3, 0.87), ev("b", 1, 0.5), ev("c", 4, 0.4), ev("a", 5, 0.3, query="q2")]
    chosen = select_evidence(pool, limit=4)
    # Each paper's best first; then a's page 5, the only passage found by q2 (needed); nothing else fits.
    assert [(e.paper_id, e.page) for e in chosen] == [("a", 1), ("b", 1), ("c", 4), ("a", 5)]
    roomy = select_evidence(pool, limit=10, max_per_paper=2)
    assert [(e.paper_id, e.page) for e in roomy] == [("a", 1), ("b", 1), ("c", 4), ("a", 5)]
    assert len(select_evidence(pool, limit=10, max_per_paper=3)) == 5


def test_reply_parsing_repetition_and_citation_placement():
    complete = '{"paragraphs": [{"cites": ["k1"], "text": "One."}]}'
    assert parse_paragraphs(complete) == [({"cites": ["k1"], "text": "One."}, True)]
    cut = '{"paragraphs": [{"cites": ["k1"], "text": "One."}, {"cites": ["k2", "k1"], "text": "Two \\"q\\" and \\u00e9t\\u00'
    items = parse_paragraphs(cut)
    assert items[1] == ({"cites": ["k2", "k1"], "text": 'Two "q" and ét'}, False)
    assert parse_paragraphs('{"paragraphs": [{"cites": ["k1"], "te') == []

    looped = "Sandwich estimators are robust. " + "the performance of methods that are designed to improve " * 4
    text, looped_flag = trim_repetition(looped)
    assert looped_flag and text == "Sandwich estimators are robust."

    papers = {"p1": paper("p1", "Panel-Corrected Standard Errors", authors=["Nathaniel Beck"], published="1995"),
              "p2": paper("p2", "Econometric Computing", authors=["Achim Zeileis"], published="2004")}
    keys = {"p1": "beck1995panel", "p2": "zeileis2004econometric"}
    offered = [ev("p1", 2, 0.6, text="Panel-corrected standard errors handle contemporaneous correlation across panels."),
               ev("p2", 3, 0.7, text="The HC3 estimator performs well in small samples.")]
    text = ("Small samples call for the HC3 estimator. Panel data often show contemporaneous correlation across panels "
            "(Beck 1995). Other work exists (Zeileis et al., 2010) [@madeup2020x].")
    paragraph, warnings = finish_paragraph(1, text, ["zeileis2004econometric", "nokey"], True, offered, keys, papers)
    assert paragraph.text == ("Small samples call for the HC3 estimator [@zeileis2004econometric]. Panel data often show "
                              "contemporaneous correlation across panels [@beck1995panel]. Other work exists.")
    assert len(warnings) == 3  # (Zeileis et al., 2010), [@madeup2020x], the listed key "nokey"
    assert paragraph.keys == ["zeileis2004econometric", "beck1995panel"]


def test_narrative_mentions_get_their_key_and_unknown_ones_are_flagged():
    papers = {"p1": paper("p1", "Various Versatile Variances", authors=["Susanne Berger", "Achim Zeileis", "N G"],
                          published="2017")}
    offered = [ev("p1", 2, 0.6, text="Clustered covariances for panel data.")]
    text = "For example, Berger et al. (2017) implement clustered covariances. Smith and Jones (2019) disagree."
    paragraph, warnings = finish_paragraph(1, text, ["berger2017various"], True, offered, {"p1": "berger2017various"}, papers)
    assert paragraph.text == ("For example, Berger et al. (2017) implement clustered covariances [@berger2017various]. "
                              "Smith and Jones (2019) disagree.")
    assert warnings == ["Paragraph 1 mentions 'Smith and Jones (2019)', but no paper in the evidence matches it; check or remove that mention."]


def test_latex_conversion():
    text = "Costs are 5% & rising_fast **here** [@a2004x; @b2010y], see *this* [@c1999z]."
    assert paragraph_latex(text) == (r"Costs are 5\% \& rising\_fast \textbf{here}~\cite{a2004x,b2010y}, "
                                     r"see \emph{this}~\cite{c1999z}.")
