"""The answer engine: focused evidence, claim-bound structured answers, the support check.

Real library, real MiniLM and real SmolLM2 through llama.cpp's grammar for the end-to-end
path; scripted chat models only where a failure (broken structure, cancel) is injected.
"""

from __future__ import annotations

import json
import re

import pytest

from app.core.events import ClaimWritten, EvidenceFound, Stage, Task, Token
from app.core.errors import Cancelled
from app.core.models.base import ChatModel
from app.core.records import Claim, Evidence, Sentence, Support
from app.core.research.answer.claims import ClaimStream, claims_schema, parse_claims
from app.core.research.answer.synthesis import RETRY_TEMPERATURE
from app.core.research.check.support import Pair, check_pairs, check_specifics, quote_for
from tests.support.answers import answer_with, assert_cited_in_place, judge_and_restate
from tests.support.chat import ScriptedChat
from tests.support.evidence_factory import focused_passage


def ids(desk):
    return {p.title.split()[0]: p.id for p in desk.library.list_papers()}


# -- focused evidence -----------------------------------------------------------------

def test_focus_keeps_the_answer_sentence_with_its_exact_span(fact_library):
    from app.core.research.answer.synthesis import focus_into

    funnel = fact_library.funnel()
    question = "How heavy were the GPS loggers fitted to the birds?"
    result = funnel.run(question, evidence_only=True)
    whole = sum(len(e.text) for e in result.evidence)
    focus_into(funnel, result)
    kept = [s for e in result.evidence for s in e.sentences]
    assert kept, "no sentence was kept"
    assert any("4 gram GPS loggers" in s.text for s in kept)
    for e in result.evidence:
        for s in e.sentences:
            # The span is in the page's markdown, like the passage's: the slice is the sentence.
            assert e.text[s.char_start - e.char_start : s.char_end - e.char_start] == s.text
    assert sum(len(e.focus_text) for e in result.evidence) < whole
    best = max(kept, key=lambda s: s.score)
    assert "logger" in best.text.lower()


def test_focus_respects_the_token_budget(fact_library):
    from app.core.research.evidence.focus import focus_evidence

    funnel = fact_library.funnel()
    result = funnel.run("When do kestrels depart from alpine valleys in autumn?", evidence_only=True)
    qvec = fact_library.embedder().embed_one(result.query)
    tight = focus_evidence(result.query, qvec, result.evidence, fact_library.embedder(), token_budget=60)
    loose = focus_evidence(result.query, qvec, result.evidence, fact_library.embedder(), token_budget=2000)
    n_tight = sum(len(e.sentences) for e in tight)
    n_loose = sum(len(e.sentences) for e in loose)
    assert 1 <= n_tight < n_loose
    cost = sum(len(s.text) // 4 + 1 for e in tight for s in e.sentences) + 24 * len(tight)
    assert cost <= 60
    # The budget keeps the best: the tight pick is the top of the loose one.
    best_loose = max((s for e in loose for s in e.sentences), key=lambda s: s.score)
    assert best_loose.text in {s.text for e in tight for s in e.sentences}
    assert any("14 September" in s.text for e in loose for s in e.sentences)


def test_focus_keeps_a_contiguous_window_around_the_best_sentence(fact_library):
    """The best passage keeps a run of sentences, not scattered ones: the sentence after the
    answer sentence carries its number, and only a window keeps the two together."""
    from app.core.records import Evidence
    from app.core.research.evidence.focus import PASSAGE_TOKENS, focus_evidence

    filler = [f"Field crews also noted weather condition number {k} at the ringing station." for k in range(10)]
    body = filler[:5] + ["Birds were fitted with GPS loggers before the autumn migration.",
                         "Each logger weighed 4 grams, under three percent of body mass."] + filler[5:]
    text = " ".join(body)
    other = " ".join(f"Glacier survey note {k}: the drone flew a standard grid pattern." for k in range(12))
    evidence = [
        Evidence(1, "kestrel", 2, "2", "Methods", text, 0.8, char_start=100, char_end=100 + len(text)),
        Evidence(2, "glacier", 3, "3", "Method", other, 0.3, char_start=0, char_end=len(other)),
    ]
    question = "How heavy were the GPS loggers fitted to the birds?"
    qvec = fact_library.embedder().embed_one(question)
    focused = focus_evidence(question, qvec, evidence, fact_library.embedder(), token_budget=400, first_tokens=120)
    assert focused and focused[0].paper_id == "kestrel"
    kept = [s.text for s in focused[0].sentences]
    assert any("fitted with GPS loggers" in t for t in kept) and any("4 grams" in t for t in kept)
    positions = [body.index(t) for t in kept]
    assert positions == list(range(positions[0], positions[0] + len(positions))), "the window has a gap"
    for s in focused[0].sentences:  # spans stay exact on the page
        assert text[s.char_start - 100 : s.char_end - 100] == s.text
    # The best passage's window grows to the first turn's size; without it, to PASSAGE_TOKENS.
    wide = focus_evidence(question, qvec, evidence, fact_library.embedder(), token_budget=2000, first_tokens=PASSAGE_TOKENS + 200)
    narrow = focus_evidence(question, qvec, evidence, fact_library.embedder(), token_budget=2000)
    assert len(wide[0].sentences) > len(narrow[0].sentences)


@pytest.mark.parametrize("caption_weight, keeps_result", [(None, True), (1.0, False)])
def test_a_figure_caption_does_not_anchor_the_window(fact_library, monkeypatch, caption_weight, keeps_result):
    """A caption restates the question's words, but the figure's numbers are not in the text:
    the window must grow around the sentence that states the result. With the caption at full
    weight (the old scoring) the window anchors on the caption and its axis labels instead."""
    from app.core.research.evidence import focus

    if caption_weight is not None:
        monkeypatch.setattr(focus, "FIGURE_CAPTION_WEIGHT", caption_weight)
    body = [
        "The dense retriever is far ahead of BM25 when few passages are retrieved (78.4% against 59.1% top-20 accuracy).",
        *[f"Training batch {k} was drawn from the shuffled question pool without replacement." for k in range(8)],
        "Figure 3: Top-20 retrieval accuracy of the dense passage retriever and BM25 on Natural Questions.",
        "Accuracy is plotted against the number of retrieved passages on a log scale.",
        *[f"Checkpoint {k} was written to disk after every epoch of training." for k in range(4)],
    ]
    text = " ".join(body)
    evidence = [Evidence(1, "dpr", 5, "5", "Results", text, 0.8, char_start=0, char_end=len(text))]
    question = "What top-20 retrieval accuracy does the dense passage retriever reach on Natural Questions compared with BM25?"
    qvec = fact_library.embedder().embed_one(question)
    focused = focus.focus_evidence(question, qvec, evidence, fact_library.embedder(), token_budget=120, first_tokens=90)
    kept = " ".join(s.text for s in focused[0].sentences)
    assert ("78.4%" in kept) is keeps_result, kept


# -- claims: schema, streaming parse --------------------------------------------------

REPLY = json.dumps({"claims": [
    {"text": "Kestrels leave in mid-September, with \"median\" 14 September.", "sources": [2]},
    {"text": "Young birds leave 9 days after adults {not braces}.", "sources": [2, 7, 2]},
]})


def test_claim_stream_hands_over_each_claim_as_it_closes():
    seen: list[tuple[int, str]] = []
    stream = ClaimStream({2, 3}, lambda c: seen.append((len(chars), c.text)))
    chars: list[str] = []
    for ch in REPLY:
        chars.append(ch)
        stream.feed(ch)
    assert [t for _, t in seen] == [
        'Kestrels leave in mid-September, with "median" 14 September.',
        "Young birds leave 9 days after adults {not braces}.",
    ]
    assert seen[0][0] < len(REPLY) // 2 + 10, "the first claim came only at the end"
    # Unknown and repeated source numbers are dropped, the order kept.
    assert stream.claims[1].sources == [2]
    assert parse_claims(REPLY, {2, 3})[1].sources == [2]


def test_claims_schema_holds_sources_to_the_passages_shown():
    schema = claims_schema([3, 1, 2])
    item = schema["properties"]["claims"]["items"]
    assert item["properties"]["sources"]["items"]["enum"] == [1, 2, 3]
    with pytest.raises(ValueError):
        parse_claims('{"answer": "x"}', {1})


# -- the support check ------------------------------------------------------------------

PASSAGE = ("The median departure date was 14 September. Young birds departed 9 days later than adults. "
           "Adult kestrels in the eastern valleys were tracked with 4 gram loggers.")


def _evidence(text: str = PASSAGE) -> Evidence:
    return Evidence(number=1, paper_id="kestrel", page=3, page_label="3", section="Results", text=text, score=0.7)


@pytest.mark.parametrize("claim, cap", [
    ("Young birds left 9 days after the adults.", Support.SUPPORTED.value),
    ("Young birds left 12 days after the adults.", Support.UNSUPPORTED.value),  # number changed
    ("The median departure was 14 September for Falco naumanni.", Support.UNSUPPORTED.value),  # a name the passage lacks
    ("The median departure date was 14 Sept in 2019.", Support.UNSUPPORTED.value),  # a year it does not state
    ("Young birds departed 9 days earlier than adults.", Support.UNSUPPORTED.value),  # the direction reversed
    ("Adult kestrels were tracked with 4-gram loggers in the Eastern valleys.", Support.SUPPORTED.value),
    # A word the passage lacks ("always", "any") is no rule's to cap: the judge weighs it.
    ("Young birds always depart 9 days later than adults.", Support.SUPPORTED.value),
    ("Any kestrel can be tracked with 4 gram loggers.", Support.SUPPORTED.value),
    # The passage's comparison with its two sides swapped: its words, the opposite finding.
    ("Adults departed 9 days later than young birds.", Support.UNSUPPORTED.value),
])
def test_specifics_must_agree(claim, cap):
    assert check_specifics(claim, PASSAGE)[0] == cap


@pytest.mark.parametrize("claim, passage, cap", [
    # An acronym of the claim spelled out in the passage, and the reverse.
    ("The DECam survey recorded 1377 measurements.", "With the Dark Energy Camera we recorded 1377 measurements.", Support.SUPPORTED.value),
    ("It found 235 near-Earth objects.", "In year 1 it found 235 unique NEOs.", Support.SUPPORTED.value),
    ("LMWH gave a bleeding risk of 3.9%.", "Low molecular weight heparin gave a bleeding risk of 3.9%.", Support.SUPPORTED.value),
    ("Patients in the UK were enrolled.", "Patients in the United Kingdom were enrolled.", Support.SUPPORTED.value),
    # A different acronym, or two lower-case words that happen to share its letters, do not count.
    ("The DESI survey recorded 1377 measurements.", "With the Dark Energy Camera we recorded 1377 measurements.", Support.UNSUPPORTED.value),
    ("GC runs were repeated.", "The global climate runs were repeated.", Support.UNSUPPORTED.value),
    ("UFH gave a bleeding risk of 3.9%.", "Low molecular weight heparin (LMWH) gave a bleeding risk of 3.9%.", Support.UNSUPPORTED.value),
])
def test_abbreviations_and_their_expansions_agree(claim, passage, cap):
    assert check_specifics(claim, passage)[0] == cap


NURSES = "Across all cases, the median specialty scores were higher for scrubs than circulators (0.450 and 0.265)."


@pytest.mark.parametrize("claim, cap", [
    ("Scrub nurses had higher median specialty scores than circulating nurses.", Support.SUPPORTED.value),
    ("Circulating nurses had higher median specialty scores than scrub nurses.", Support.UNSUPPORTED.value),
    ("Median specialty scores of scrub nurses were higher than those of circulators.", Support.SUPPORTED.value),
])
def test_a_comparison_must_keep_its_sides(claim, cap):
    assert check_specifics(claim, NURSES)[0] == cap


def test_quote_is_the_exact_sentence_the_claim_rests_on():
    e = _evidence()
    quote = quote_for("Juveniles departed 9 days later than the adults did.", e)
    assert quote in e.text
    assert quote.startswith("Young birds departed 9 days later")
    e.sentences = [Sentence("Adult kestrels in the eastern valleys were tracked with 4 gram loggers.", 96, 168)]
    assert quote_for("They carried 4 gram loggers.", e) == e.sentences[0].text


def test_the_quote_is_the_sentence_with_the_claims_figure_not_the_one_framed_like_the_question():
    """An answer repeats the question's words, and so does the sentence that frames the study: the
    quote must be the sentence that states what the claim asserts (the judge reads around it)."""
    text = ("We analyzed data from the first year of a survey for near-Earth objects that we carry out "
            "with the Dark Energy Camera on the Blanco telescope. We implanted synthetic objects into the "
            "data stream to derive our nightly detection efficiency. We find that there are 10^6.6 "
            "near-Earth objects larger than 10 meters.")
    e = Evidence(1, "trilling2017", 1, "1", "", text, 0.5)
    question = "From the first year of the Dark Energy Camera near-Earth object survey, how many objects larger than 10 m are there?"
    claim = "From the first year of the Dark Energy Camera near-Earth object survey, there are 10^6.6 near-Earth objects larger than about 10 meters."
    assert quote_for(claim, e, question) == "We find that there are 10^6.6 near-Earth objects larger than 10 meters."
    pairs = check_pairs([Pair(claim, e)], None, context=question)
    assert pairs[0].quote == "We find that there are 10^6.6 near-Earth objects larger than 10 meters."


@pytest.mark.slow
def test_support_check_with_the_real_model_never_passes_a_changed_number(tiny_models):
    from app.core.models.llamacpp import LlamaCppChat
    from app.core.settings import ModelConfig

    chat = LlamaCppChat(ModelConfig(path=str(tiny_models["chat"]), context_length=2048))
    try:
        pairs = [Pair("Young birds departed 12 days later than adults.", _evidence()),
                 Pair("Young birds departed 9 days later than adults.", _evidence())]
        check_pairs(pairs, chat, context="When do kestrels leave?")
    finally:
        chat.close()
    assert pairs[0].verdict == Support.UNSUPPORTED.value
    assert "12" in pairs[0].reason
    assert pairs[1].verdict in {v.value for v in Support}
    assert all(p.quote in PASSAGE for p in pairs)


@pytest.mark.slow
def test_the_judge_reads_a_probability_and_a_restored_beginning_changes_nothing(tiny_models):
    """With llama.cpp the model's verdict is cut from P(yes); the judge's fixed beginning,
    read once and restored after other prompts evicted it, gives the probability a cold read gives."""
    from app.core.models.llamacpp import LlamaCppChat
    from app.core.research.check.support import judge_beginning, support_probability, verdict_for
    from app.core.settings import ModelConfig

    chat = LlamaCppChat(ModelConfig(path=str(tiny_models["chat"]), context_length=2048, threads=2))
    claim, quote = "Young birds departed 9 days later than adults.", "Young birds departed 9 days later than adults did."
    hello = [{"role": "user", "content": "Say hello."}]
    try:
        cold = support_probability(chat, claim, quote)
        chat.chat(hello, max_tokens=4, temperature=0.0)
        assert chat.prefill(judge_beginning()) > 20
        chat.chat(hello, max_tokens=4, temperature=0.0)  # the beginning is evicted again
        warm = support_probability(chat, claim, quote)
        pairs = [Pair(claim, _evidence())]
        check_pairs(pairs, chat, context="When do kestrels leave?")
    finally:
        chat.close()
    assert cold is not None and 0.0 < cold < 1.0
    assert abs(cold - warm) < 0.02
    assert pairs[0].confidence is not None and pairs[0].verdict == verdict_for(pairs[0].confidence, chat.judge_cutoffs)


def test_the_verdict_is_cut_where_the_models_catalog_entry_says():
    from app.core.models.catalog import JudgeCutoffs
    from app.core.research.check.support import PARTIAL_AT, SUPPORTED_AT, verdict_for

    between = (SUPPORTED_AT + PARTIAL_AT) / 2
    assert verdict_for(between) == Support.PARTIAL.value  # no entry: the defaults
    assert verdict_for(between, JudgeCutoffs(supported=between, partial=0.3)) == Support.SUPPORTED.value
    assert verdict_for(between, JudgeCutoffs(supported=0.9, partial=0.8)) == Support.UNSUPPORTED.value


# -- the whole engine on a real library with the real tiny model -------------------------

@pytest.mark.slow
@pytest.mark.parametrize("overrides", [
    {"first_claim_tokens": 300},  # one turn: the evidence fits the first
    {"first_claim_tokens": 1},  # the first turn, then key sentences (the default)
    {"first_claim_tokens": 1, "first_turn_claims": 1, "key_sentences": 0},  # two turns, the second under the grammar too
])
def test_structured_answer_end_to_end_with_the_real_model(fact_library, overrides):
    events: list = []
    funnel = fact_library.funnel(Task(sink=events.append), overrides=overrides)
    result = funnel.run("When do kestrels depart from alpine valleys in autumn?")
    tokens = [e.text for e in events if isinstance(e, Token)]
    # The focused evidence reaches the screen before any claim.
    focused = [i for i, e in enumerate(events) if isinstance(e, EvidenceFound) and any(x.sentences for x in e.evidence)]
    assert focused, "no focused evidence event"
    claimed = [i for i, e in enumerate(events) if isinstance(e, ClaimWritten)]
    if claimed:
        assert focused[0] < claimed[0]
    assert_cited_in_place(result)
    assert "".join(tokens).strip()
    for c in result.citations:
        assert c.support in {v.value for v in Support}
        assert c.quote and c.quote in next(e.text for e in result.evidence if e.number == c.evidence_number)
    assert {"evidence_s", "synthesis_s", "check_s", "total_s"} <= result.timings.keys()
    view = result.claims_view()
    assert [v["text"] for v in view] == [c.text for c in result.claims if not c.quoted]
    assert len(result.key_passages_view()) == sum(1 for c in result.citations if result.claims[c.claim].quoted)
    for v in view:
        for c in v["citations"]:
            assert set(c) == {"paper_id", "page", "printed_page", "support", "quote"}


@pytest.mark.slow
def test_prose_answer_reads_only_the_focused_sentences_with_the_real_model(fact_library):
    """The free-text path (structured_answers off) reads the same focused evidence as claims:
    the sentences on the question, shown before any word is written, not whole passages."""
    events: list = []
    funnel = fact_library.funnel(Task(sink=events.append), overrides={"structured_answers": False})
    real = funnel.chat_model()
    prompts: list[str] = []

    class Recording(ChatModel):  # the real model; the prompt is kept to look at
        name, context_length = real.name, real.context_length

        def count_tokens(self, text):
            return real.count_tokens(text)

        def chat(self, messages, **kwargs):
            prompts.append("\n".join(m["content"] for m in messages))
            return real.chat(messages, **kwargs)

    funnel.chat_model = Recording
    result = funnel.run("When do kestrels depart from alpine valleys in autumn?")
    shown = next(i for i, e in enumerate(events) if isinstance(e, EvidenceFound) and any(x.sentences for x in e.evidence))
    first_token = next(i for i, e in enumerate(events) if isinstance(e, Token))
    assert shown < first_token
    answer_prompt = prompts[0]
    assert all(e.sentences for e in result.evidence)
    left_out = 0
    for e in result.evidence:
        assert e.focus_text in answer_prompt
        dropped = [s for s in e.text.split(". ") if len(s) > 30 and all(s not in k.text for k in e.sentences)]
        for sentence in dropped:  # a sentence the focus left out never reaches the model
            assert sentence not in answer_prompt
        left_out += len(dropped)
    assert left_out, "the focus kept every sentence: nothing here shows it was applied"
    assert result.answer.strip()
    assert "first_words_s" in result.timings and result.timings["first_words_s"] <= result.timings["total_s"]
    for c in result.citations:  # checked in the run, like claims
        assert c.support in {v.value for v in Support} | {""}


def test_broken_structure_is_retried_once_then_answered_as_free_text(fact_library):
    chat = ScriptedChat(["{\"claims\": [", "not json at all", "Kestrels leave on 14 September [1]."])
    result, _ = answer_with(fact_library, chat, "When do kestrels depart from alpine valleys in autumn?")
    schemas = [c["schema"] is not None for c in chat.calls]
    assert schemas[:3] == [True, True, False], schemas
    # greedy first (the default), then a sample: the same prompt at temperature 0 breaks the same way again
    assert [c["temperature"] for c in chat.calls[:2]] == [0.0, RETRY_TEMPERATURE]
    assert any("free text" in m for m in result.messages)
    assert "14 September" in result.answer
    assert not result.claims


def test_cancel_keeps_the_claims_already_on_screen(fact_library):
    reply = json.dumps({"claims": [{"text": "The median departure date was 14 September.", "sources": [1]},
                                   {"text": "Young birds departed 9 days later than adults.", "sources": [1]}]})
    chat = ScriptedChat([reply], cancel_after=len(reply) - 20)
    fact_library.set_chat_model(chat)
    claims: list = []
    funnel = fact_library.funnel(Task(sink=lambda e: claims.append(e) if isinstance(e, ClaimWritten) else None))
    try:
        with pytest.raises(Cancelled):
            funnel.run("When do kestrels depart from alpine valleys in autumn?")
    finally:
        fact_library._chat = None
    assert [(c.index, c.claim.text) for c in claims] == [(0, "The median departure date was 14 September.")]


def test_first_claim_comes_from_the_best_passages_then_the_rest_extend_the_same_conversation(fact_library):
    def number_of(messages, words: str) -> int:
        prompt = "\n".join(m["content"] for m in messages)
        return int(re.findall(r"\[(\d+)\] \([^)]*\)\n[^\[]*" + words, prompt)[0])

    first = json.dumps({"claims": [{"text": "The glacier front retreated 38 metres per year.", "sources": [1]}]})
    more = lambda m: json.dumps({"claims": [{"text": "Young birds departed 9 days later than adults.",  # noqa: E731
                                             "sources": [number_of(m, "Young birds")]}]})
    chat = ScriptedChat([first, more, '{"verdicts": [{"pair": 1, "verdict": "supported"}, {"pair": 2, "verdict": "supported"}]}'])
    result, events = answer_with(fact_library, chat, "When do kestrels depart from alpine valleys in autumn?",
                                 {"first_claim_tokens": 1, "first_turn_claims": 1, "key_sentences": 0})
    a, b, check, *recited = chat.calls
    # Phase 1 sees only the best passage and may write one claim; phase 2 continues that conversation.
    assert a["schema"]["properties"]["claims"]["maxItems"] == 1
    assert b["messages"][: len(a["messages"])] == a["messages"]
    assert b["messages"][len(a["messages"])]["role"] == "assistant"
    assert "[2]" not in a["messages"][-1]["content"] and "[2]" in b["messages"][-1]["content"]
    # The check continues the same conversation (its cache holds the evidence and the claims).
    assert check["messages"][: len(b["messages"])] == b["messages"]
    assert [c.text for c in result.claims] == ["The glacier front retreated 38 metres per year.",
                                                "Young birds departed 9 days later than adults."]
    assert sum(isinstance(e, ClaimWritten) for e in events) == 2
    assert result.timings["first_claim_s"] <= result.timings["synthesis_s"] + result.timings["evidence_s"]
    # The model called both supported; the rules overrule it where the cited passage lacks the number,
    # and the claim is re-cited to the passage that states it (one more check).
    glacier, young = result.citations
    assert "38" not in next(e.text for e in result.evidence if e.number == 1)
    assert len(recited) == 1 and glacier.evidence_number != 1
    assert "38 metres" in next(e.text for e in result.evidence if e.number == glacier.evidence_number)
    assert glacier.support == "supported" and any("now points to the passage" in m for m in result.messages)
    assert young.support == "supported" and young.quote == "Young birds departed 9 days later than adults."


def test_repeated_claims_are_dropped():
    from app.core.records import Claim
    from app.core.research.answer.second_turn import repeats

    first = [Claim("The default estimator of vcovHC is HC3.", [1])]
    assert repeats(Claim("vcovHC uses the HC3 estimator by default.", [2]), first)
    assert not repeats(Claim("HC4 corrects for high-leverage points such as Alaska.", [2]), first)


def test_a_claim_that_copies_the_prompts_instructions_is_dropped():
    from app.core.paths import load_prompt
    from app.core.research.answer.second_turn import MORE_CLAIMS, echoes

    told = load_prompt("synthesis_more.md").format(evidence="", query="", n=MORE_CLAIMS)
    # Seen on the answer bench (q41): the starter model turned the instruction into a "claim".
    assert echoes('A daily series can be obtained by adding up to 3 further claims for the question "Using zoo…"', told)
    assert not echoes("rollapply(r, 10, sd) gives the 10-day rolling standard deviation of every column.", told)
    assert not echoes("The first claim of the paper is that the passages of the text state a number.", told)


def test_streamed_claims_read_exactly_as_the_rendered_answer():
    from app.core.records import Claim, ResearchResult
    from app.core.research.answer.claims import claim_separator, claim_sentence
    from app.core.research.answer.synthesis import render

    result = ResearchResult(query="q", evidence=[_evidence()])
    result.claims = [Claim("Young birds left 9 days after adults.", [1]), Claim("The median was 14 September", [1, 1]),
                     Claim("Nothing else is stated!", [])]
    render(result)
    by_number = {1: result.evidence[0]}
    streamed = "".join(claim_separator(result.claims, i) + claim_sentence(c, by_number) for i, c in enumerate(result.claims))
    assert streamed == result.answer
    assert [result.answer[c.start:c.end] for c in result.citations] == ["[kestrel, page 3]"] * 2
    assert result.answer.endswith("Nothing else is stated!")


def test_a_claim_shows_word_by_word_and_the_stream_reads_as_the_answer(fact_library):
    """The first words are on screen before the claim closes, and what streamed (words, then
    citations and stop) is exactly the rendered answer."""
    reply = json.dumps({"claims": [{"text": "Kestrels leave on 14 Sept. \"median\"  date, \u00e9 early.", "sources": [1]},
                                   {"text": "Young birds left 9 days after adults.", "sources": [1]}]})
    chat = ScriptedChat([reply, '{"verdicts": [{"pair": 1, "verdict": "supported"}, {"pair": 2, "verdict": "supported"}]}'])
    result, events = answer_with(fact_library, chat, "When do kestrels depart from alpine valleys in autumn?",
                                 {"first_claim_tokens": 0, "check_support": False})
    tokens = [e.text for e in events if isinstance(e, Token)]
    first_claim = next(i for i, e in enumerate(events) if isinstance(e, ClaimWritten))
    shown_before = "".join(e.text for e in events[:first_claim] if isinstance(e, Token))
    assert shown_before.startswith("Kestrels leave on 14 Sept") and len(shown_before) > 30
    assert "".join(tokens) == result.answer
    assert result.answer.startswith('Kestrels leave on 14 Sept. "median" date, é early [')
    assert result.timings["first_words_s"] <= result.timings["first_claim_s"]


class _NumberJudge(ChatModel):
    """A judge whose P(yes) is high only where the quoted text holds the claim's numbers (the
    recite mechanics under test; the real judge is measured in bench/support.py)."""

    name = "number-judge"

    def chat(self, messages, **kwargs):
        raise AssertionError("the probability judge should answer")

    def choice_probabilities(self, messages, choices, *, cancelled=None):
        prompt = messages[-1]["content"]
        quote = prompt.split("Cited text:", 1)[1].split("Claim:", 1)[0]
        claim = prompt.split("Claim:", 1)[1]
        numbers = set(re.findall(r"\d+", claim.split("Does the claim", 1)[0]))
        yes = 0.9 if numbers <= set(re.findall(r"\d+", quote)) else 0.05
        return {"yes": yes, "no": 1 - yes}


class _NoJudge(_NumberJudge):
    def choice_probabilities(self, messages, choices, *, cancelled=None):
        raise AssertionError("the rules decide this pair")


def test_an_overstated_claim_is_doubtful_and_the_rules_say_why():
    """A claim that states as proven what its passage only suggests is partial, decided by the rules
    as a changed number is (the judge is not asked), and the reason names the word."""
    hedged = _evidence("These results suggest that young birds depart 9 days later than adults.")
    pair = Pair("These results prove that young birds depart 9 days later than adults.", hedged)
    check_pairs([pair], _NoJudge())
    assert pair.verdict == Support.PARTIAL.value
    assert "prove" in pair.reason and "suggest" in pair.reason


def test_a_claim_citing_the_wrong_passage_is_recited_to_the_one_that_states_it():
    from app.core.research.answer.recite import recite

    logger = Evidence(number=1, paper_id="kestrel", page=2, page_label="2", section="Methods", score=0.8,
                      text="Young and adult kestrels were tracked with 4 gram loggers from the eastern valleys.")
    timing = Evidence(number=2, paper_id="kestrel", page=3, page_label="3", section="Results", score=0.7, text=PASSAGE)
    claims = [Claim("Young birds departed 9 days later than adults.", [1]), Claim("Adults carried 4 gram loggers.", [1])]
    checked = {}
    for i, c in enumerate(claims):
        pair = Pair(c.text, logger)
        check_pairs([pair], _NumberJudge())
        checked[(i, 1)] = pair
    assert checked[(0, 1)].verdict == Support.UNSUPPORTED.value and checked[(1, 1)].verdict == Support.SUPPORTED.value
    moved = recite(claims, [logger, timing], checked, _NumberJudge())
    assert moved == 1
    assert claims[0].sources == [2] and claims[1].sources == [1]  # the supported citation stays
    assert checked[(0, 2)].verdict == Support.SUPPORTED.value and "9 days" in checked[(0, 2)].quote


def test_a_claim_reading_a_rows_figure_is_recited_to_the_row_that_states_it():
    """A row holds few words: the claim that reads its figure shares under half its key terms with it,
    yet the row is the passage that states the figure, and the row rule supports it there."""
    from app.core.research.answer.recite import recite

    prose = Evidence(number=1, paper_id="wheat", page=17, page_label="17", section="Discussion", score=0.8,
                     text="Pipecolate is a strong osmolyte in the plant, and it helped heat-stressed wheat genotypes "
                          "keep their cell membranes stable.")
    row = Evidence(number=2, paper_id="wheat", page=15, page_label="15", section="Table 6", score=0.5,
                   text="Table 6 (page 15) · Pipecolate · SPAD: -0.18 · FV/FM: -0.17 · CMS = Cell membrane stability: 0.79")
    claims = [Claim("Pipecolate correlated positively with cell membrane stability (CMS) in heat-stressed wheat, "
                    "with a coefficient of 0.79.", [1])]
    checked = {(0, 1): Pair(claims[0].text, prose)}
    check_pairs([checked[(0, 1)]], _NumberJudge())
    assert checked[(0, 1)].verdict == Support.UNSUPPORTED.value
    assert recite(claims, [prose, row], checked, _NumberJudge()) == 1
    assert claims[0].sources == [2] and "table row" in checked[(0, 2)].reason
    # the same figure with its sign turned is left to the judge, not passed by the row
    turned = Pair(claims[0].text.replace("positively", "negatively"), row)
    check_pairs([turned], _NumberJudge())
    assert "table row" not in turned.reason


def test_a_claim_with_a_supporting_citation_drops_its_unsupported_ones():
    from app.core.research.answer.recite import prune

    def pair(verdict: str) -> Pair:
        p = Pair("c", _evidence())
        p.verdict = verdict
        return p

    claims = [Claim("a", [1, 2, 3]), Claim("b", [1, 2])]
    checked = {(0, 1): pair("unsupported"), (0, 2): pair("supported"), (0, 3): pair("partial"),
               (1, 1): pair("unsupported"), (1, 2): pair("partial")}
    assert prune(claims, checked) == 1
    assert claims[0].sources == [2, 3]  # the partial one stays, marked
    assert claims[1].sources == [1, 2]  # no supported citation: nothing to prefer, all stay flagged


# -- key sentences: the best evidence sentences quoted instead of a second turn ------------

_passage = focused_passage


def test_key_sentences_add_what_the_claims_lack_and_quote_it_exactly():
    from app.core.research.answer.key_sentences import key_sentences

    evidence = [
        _passage(1, ("The median departure date was 14 September in all ten years.", 0.9),
                 ("Young birds departed 9 days later than adults in every year studied.", 0.7)),
        _passage(2, ("Figure 2: Departure dates of young and adult kestrels by year of ringing.", 0.95),
                 ("| year | adults | young | total | birds |", 0.9),
                 ("This delay was largest in years with a warm September and plenty of voles.", 0.8)),
        _passage(3, ("Lindqvist M, Berg T: Kestrel departures from the Alps. J Ornithol 2019, 160:12-20.", 0.99),
                 ("Loggers weighing 4 grams recorded a position every 30 minutes.", 0.6),
                 ("Ringing took place at two stations in the upper valley.", 0.5)),
    ]
    claims = [Claim("Kestrels depart from alpine valleys with a median departure date of 14 September.", [1])]
    quotes = key_sentences(claims, evidence, 2)
    # Passage 1's best sentence restates the claim; its next one adds the young birds' delay.
    # Passage 2's caption and table row are not prose, and its sentence that leans on an
    # antecedent ("This delay…") has none kept before it, so passage 3 gives the second quote:
    # not its entry of the reference list, though it scores best.
    assert [q.text for q in quotes] == ["“Young birds departed 9 days later than adults in every year studied”",
                                        "“Loggers weighing 4 grams recorded a position every 30 minutes”"]
    assert [q.sources for q in quotes] == [[1], [3]] and all(q.quoted for q in quotes)
    assert key_sentences(claims, evidence, 1) == quotes[:1]


def test_a_key_sentence_that_leans_on_the_one_before_is_quoted_with_it():
    from app.core.research.answer.key_sentences import key_sentences

    evidence = [_passage(1, ("Young birds departed 9 days later than adults in every year studied.", 0.5),
                         ("This delay was largest in years with a warm September and plenty of voles.", 0.8))]
    quotes = key_sentences([Claim("The median departure date was 14 September.", [1])], evidence, 2)
    assert [q.text for q in quotes] == ["“Young birds departed 9 days later than adults in every year studied. "
                                        "This delay was largest in years with a warm September and plenty of voles”"]


def test_two_quotes_a_passage_and_a_third_of_it_gives_way_to_another_paper():
    """The answer page can give two quotes (one with `quotes_per_passage` 1); a broad question still hears from another paper."""
    from app.core.research.answer.key_sentences import key_sentences

    evidence = [
        _passage(1, ("Adult kestrels left the valley on 14 September on average.", 0.9),
                 ("Ringing took place at two stations in the upper valley.", 0.3),
                 ("Young birds departed 9 days later than adults in every year studied.", 0.85),
                 ("The birds were caught in mist nets at dawn.", 0.2),
                 ("Loggers weighing 4 grams recorded a position every 30 minutes.", 0.8)),
        _passage(2, ("Departures came earlier after a cold August, by 5 days on average.", 0.5)),
    ]
    quotes = key_sentences([Claim("Kestrels leave in autumn.", [1])], evidence, 3)
    assert [q.text for q in quotes] == ["“Adult kestrels left the valley on 14 September on average”",
                                        "“Young birds departed 9 days later than adults in every year studied”",
                                        "“Departures came earlier after a cold August, by 5 days on average”"]
    assert [q.sources for q in quotes] == [[1], [1], [2]]
    assert [q.sources for q in key_sentences([Claim("Kestrels leave in autumn.", [1])], evidence, 3, per_passage=1)] == [[1], [2]]



def test_neighbours_joined_are_one_quote_of_the_passage_s_two():
    """Two rates of one review's page: the sentence that frames the second joins it as one quote,
    and the first rate, two sentences up, is the passage's second quote (not left out because the
    joined quote counted twice)."""
    from app.core.research.answer.key_sentences import key_sentences, unquoted

    evidence = [_passage(1, ("The risk of insertion-related complications such as hematoma is calculated to be 2.6%.", 0.6),
                         ("No filter migration was reported in the short term by the four cohort studies.", 0.3),
                         ("Although a failed retrieval is not a complication, it leaves the filter in place for good.", 0.9),
                         ("The failed retrieval rate is calculated to be 2.8% across the cohorts.", 0.8)),
                _passage(2, ("Filters were placed at the bedside under ultrasound guidance in most trauma centres.", 0.5))]
    quotes = key_sentences([Claim("Retrievable filters are used in trauma patients.", [1])], evidence, 2)
    assert [unquoted(q.text) for q in quotes] == [
        "Although a failed retrieval is not a complication, it leaves the filter in place for good. "
        "The failed retrieval rate is calculated to be 2.8% across the cohorts",
        "The risk of insertion-related complications such as hematoma is calculated to be 2.6%"]
    assert [q.sources for q in quotes] == [[1], [1]]


def test_neighbouring_key_sentences_are_one_quote_in_page_order():
    from app.core.research.answer.key_sentences import key_sentences, unquoted

    evidence = [_passage(1, ("Adult kestrels left the valley on 14 September on average.", 0.85),
                         ("Young birds departed 9 days later than adults in every year studied.", 0.9))]
    quotes = key_sentences([Claim("Kestrels leave in autumn.", [1])], evidence, 2)
    assert [q.text for q in quotes] == ["“Adult kestrels left the valley on 14 September on average. "
                                        "Young birds departed 9 days later than adults in every year studied”"]
    assert unquoted(quotes[0].text) in evidence[0].text  # the page's own words, to highlight
    # A heading (left out of the focused sentences) between them: two quotes, not one run together.
    parted = _passage(1, ("Adult kestrels left the valley on 14 September on average.", 0.85),
                      ("Young birds departed 9 days later than adults in every year studied.", 0.9))
    parted.sentences[1] = Sentence(parted.sentences[1].text, parted.sentences[1].char_start + 12,
                                   parted.sentences[1].char_end + 12, 0.9)
    assert [q.text for q in key_sentences([Claim("Kestrels leave in autumn.", [1])], [parted], 2)] == [
        "“Young birds departed 9 days later than adults in every year studied”",
        "“Adult kestrels left the valley on 14 September on average”"]


def test_a_sentence_that_restates_an_earlier_quote_is_not_quoted():
    from app.core.research.answer.key_sentences import key_sentences

    evidence = [_passage(1, ("Young birds departed 9 days later than adults in every year studied.", 0.9)),
                _passage(2, ("In every year studied, young birds departed 9 days later than the adults.", 0.8)),
                _passage(3, ("Loggers weighing 4 grams recorded a position every 30 minutes.", 0.6))]
    quotes = key_sentences([Claim("Kestrels leave in autumn.", [1])], evidence, 2)
    assert [q.sources for q in quotes] == [[1], [3]]


def test_a_road_map_sentence_is_not_quoted_but_a_result_that_names_a_section_is():
    """Sentences that name a part of the paper and announce it say where to read, not what is there."""
    from app.core.research.answer.key_sentences import key_sentences

    evidence = [
        _passage(1, ("Before describing how the model parses formulas (Section 2.3), we provide an informal explanation.", 0.9)),
        _passage(2, ("Subsequently, in Section 2.2, the subclass for regular series with a frequency is discussed.", 0.85)),
        _passage(3, ("See Appendix B for further technical details of the kestrel loggers.", 0.8)),
        _passage(4, ("As shown in Section 4, young birds departed 9 days later than adults in every year.", 0.7)),
    ]
    quotes = key_sentences([Claim("Kestrels leave in September.", [1])], evidence, 3)
    assert [q.sources for q in quotes] == [[4]]


def test_a_heading_run_into_its_sentence_is_not_quoted_with_it():
    """Extraction glues a heading in capitals to the sentence after it; the quote starts at the sentence."""
    from app.core.research.answer.key_sentences import key_sentences, unquoted

    evidence = [
        _passage(1, ("CONSOLIDATION To investigate consolidation we compared the first trials of day 1 and day 3.", 0.9)),
        _passage(2, ("3.1 RESULTS AND DISCUSSION We found that young kestrels departed 9 days later than adults.", 0.8)),
        _passage(3, ("CRISPR screening identified three genes that delay the departure of kestrels.", 0.7)),
    ]
    quotes = key_sentences([Claim("Kestrels leave in September.", [1])], evidence, 3)
    assert [q.text for q in quotes] == ["“To investigate consolidation we compared the first trials of day 1 and day 3”",
                                        "“We found that young kestrels departed 9 days later than adults”",
                                        "“CRISPR screening identified three genes that delay the departure of kestrels”"]
    assert all(unquoted(q.text) in e.text for q, e in zip(quotes, evidence))  # still the page's own words, to highlight


def test_the_model_rates_the_best_candidates_and_an_answering_sentence_outranks_a_framing_one():
    from app.core.research.answer.key_sentences import key_sentences

    evidence = [
        _passage(1, ("The aim of this study was to describe the autumn departure of alpine kestrels.", 0.9)),
        _passage(2, ("Young birds departed 9 days later than adults in every year studied.", 0.7)),
        _passage(3, ("Loggers weighing 4 grams recorded a position every 30 minutes.", 0.6)),
    ]
    claims = [Claim("Kestrels leave in September.", [1])]
    asked: list[list[str]] = []

    def rate(sentences):  # a rater that believes only the sentence with the delay answers
        asked.append(sentences)
        return [0.9 if "9 days" in s else 0.1 for s in sentences]

    quotes = key_sentences(claims, evidence, 1, rate=rate, rated=2)
    assert asked == [["The aim of this study was to describe the autumn departure of alpine kestrels.",
                      "Young birds departed 9 days later than adults in every year studied."]]  # the best two only
    assert [q.sources for q in quotes] == [[2]]
    # A backend without probabilities (the rater gives None), or rating off: focus score decides.
    assert key_sentences(claims, evidence, 1, rate=lambda s: None, rated=2)[0].sources == [1]
    assert key_sentences(claims, evidence, 1, rate=rate, rated=0)[0].sources == [1] and len(asked) == 1


@pytest.mark.slow
def test_rating_key_sentences_with_the_real_model_reads_the_question_once(tiny_models):
    """P(yes) per sentence from llama.cpp; the question's part of the prompt is read once and
    kept, and reading it from the cache gives the probabilities a cold read gives."""
    from app.core.models.llamacpp import LlamaCppChat
    from app.core.research.answer.key_sentences import answer_probabilities
    from app.core.settings import ModelConfig

    chat = LlamaCppChat(ModelConfig(path=str(tiny_models["chat"]), context_length=2048, threads=2))
    query = "How much later than adults did young kestrels leave?"
    sentences = ["Young birds departed 9 days later than adults in every year studied.",
                 "The aim of this study was to describe the autumn departure of alpine kestrels."]
    try:
        warm = answer_probabilities(chat, query, sentences)
        chat.chat([{"role": "user", "content": "Say hello."}], max_tokens=4, temperature=0.0)  # evicts the question
        cold = [answer_probabilities(chat, query, [s])[0] for s in sentences]
    finally:
        chat.close()
    assert warm is not None and len(warm) == 2 and all(0.0 < p < 1.0 for p in warm)
    assert all(abs(w - c) < 0.02 for w, c in zip(warm, cold))


def test_key_sentences_replace_the_second_turn_and_are_supported_as_quoted(fact_library):
    first = json.dumps({"claims": [{"text": "The glacier front retreated 38 metres per year.", "sources": [1]}]})
    chat = ScriptedChat([first, '{"verdicts": [{"pair": 1, "verdict": "supported"}]}'])
    result, events = answer_with(fact_library, chat, "How fast did the glacier front retreat, and how was it measured?",
                                 {"first_claim_tokens": 1, "first_turn_claims": 3, "key_sentences": 2})
    answer, *checks = chat.calls
    assert answer["schema"]["properties"]["claims"]["maxItems"] == 3  # the parts prompt, then no second turn
    assert all("More passages" not in m["content"] for c in checks for m in c["messages"][len(answer["messages"]):])
    quoted = [c for c in result.claims if c.quoted]
    assert quoted and len(quoted) <= 2
    assert sum(isinstance(e, ClaimWritten) for e in events) == len(result.claims)
    for c in result.citations:
        claim = result.claims[c.claim]
        if claim.quoted:
            passage = next(e for e in result.evidence if e.number == c.evidence_number)
            assert c.support == "supported" and c.quote in passage.text and c.quote in claim.text
            assert result.answer[: c.start].rstrip().endswith(c.quote.rstrip(".") + "”")


@pytest.mark.slow
def test_key_sentences_with_the_real_model(fact_library):
    result = fact_library.funnel(overrides={"first_claim_tokens": 1, "first_turn_claims": 3, "key_sentences": 2}).run(
        "When do kestrels depart from alpine valleys in autumn?")
    assert_cited_in_place(result)
    for c in result.citations:
        assert c.quote and c.quote in next(e.text for e in result.evidence if e.number == c.evidence_number)
    assert all(c.support == "supported" for c in result.claims if c.quoted)



def test_the_models_only_claim_stays_marked_and_the_key_passages_stand_apart(fact_library):
    """The model writes a wrong figure in the passage's own words and cannot write it better: as
    the model's only claim it stays, marked unsupported (a quote never takes its place); the
    sentence with the right figure is a key passage, under its own heading, counted apart."""
    first = json.dumps({"claims": [{"text": "The glacier front retreated 512 metres per year.", "sources": [1]}]})
    result, _ = answer_with(fact_library, ScriptedChat([first]), "How fast did the glacier front retreat?",
                            {"first_claim_tokens": 1, "first_turn_claims": 3, "key_sentences": 2})
    assert result.claims[0].text.startswith("The glacier front retreated 512") and result.claims[0].support == "unsupported"
    assert not any("withdrew" in m for m in result.messages), result.messages
    assert any(c.quoted and "38 metres" in c.text for c in result.claims)
    assert result.answer.index("512") < result.answer.index("**Key passages**") < result.answer.index("38 metres")
    counts = result.claim_counts()
    assert (counts["claims"], counts["supported"], counts["unsupported"]) == (1, 0, 1) and counts["key_passages"] >= 1
    assert [c["text"] for c in result.claims_view()] == [result.claims[0].text]
    passages = result.key_passages_view()
    assert any("38 metres" in k["text"] for k in passages) and all(k["paper_id"] and k["page"] for k in passages)
    assert_cited_in_place(result)

def test_withdrawing_keeps_claims_when_no_other_claim_of_the_model_is_supported():
    """A supported quote is not enough to withdraw the model's claim: the answer would have no
    sentence of the model's left. A supported claim of the model is."""
    from app.core.research.answer.recite import withdraw_unstated

    e = _evidence()
    claims = [Claim("Young birds departed 19 days later than adults.", [1])]
    pair = Pair(claims[0].text, e)
    pair.verdict = "unsupported"
    checked = {(0, 1): pair}
    assert withdraw_unstated(claims, [e], checked) == [] and len(claims) == 1  # nothing better to show
    quote = Pair("x", e)
    quote.verdict = "supported"
    claims.append(Claim("“Young birds departed 9 days later than adults”", [1], quoted=True))
    checked[(1, 1)] = quote
    assert withdraw_unstated(claims, [e], checked) == [] and len(claims) == 2  # a quote is evidence, not an answer
    mine = Pair("y", e)
    mine.verdict = "supported"
    claims.append(Claim("Young birds departed later than adults.", [1]))
    checked[(2, 1)] = mine
    assert withdraw_unstated(claims, [e], checked) == [("Young birds departed 19 days later than adults.", ["19"])]
    assert [c.quoted for c in claims] == [True, False] and checked == {(0, 1): quote, (1, 1): mine}

def test_withdrawing_unsupported_claims_keeps_partial_ones_and_quotes():
    from app.core.research.answer.recite import withdraw_unsupported

    e = _evidence()
    def pair(verdict: str) -> Pair:
        p = Pair("x", e)
        p.verdict = verdict
        return p
    claims = [Claim("Young birds left because food ran short.", [1])]
    checked = {(0, 1): pair("unsupported")}
    assert withdraw_unsupported(claims, checked) == [] and len(claims) == 1  # nothing better to show
    claims += [Claim("Young birds departed later than adults.", [1]), Claim("Adults departed in August.", [1]),
               Claim("“Young birds departed 9 days later than adults”", [1], quoted=True)]
    checked.update({(1, 1): pair("supported"), (2, 1): pair("partial"), (3, 1): pair("supported")})
    assert withdraw_unsupported(claims, checked) == ["Young birds left because food ran short."]
    assert [c.text[:12] for c in claims] == ["Young birds ", "Adults depar", "“Young birds"]
    assert [checked[(i, 1)].verdict for i in range(3)] == ["supported", "partial", "supported"] and len(checked) == 3


def test_a_claim_the_check_finds_unsupported_is_withdrawn_where_the_setting_asks(fact_library):
    """Through the whole answer (real library, focusing, quotes, rules; the verdicts scripted): the
    claim the judge finds unsupported leaves the answer and is named in its notes; the supported
    one and the quotes stay. With the setting off it stays, marked unsupported."""
    first = json.dumps({"claims": [
        {"text": "The glacier front retreated 38 metres per year between 2015 and 2021.", "sources": [1]},
        {"text": "The retreat was caused by warmer winters in the valley.", "sources": [1]}]})

    def judge(messages):  # the word judge's call: unsupported for the made-up cause, else supported
        prompt = messages[-1]["content"]
        if "Cited text:" not in prompt:
            return '{"verdicts": []}'
        claims = re.findall(r"^(\d+)\. Claim: (.*)$", prompt, re.M)
        return json.dumps({"verdicts": [{"pair": int(n), "verdict": "unsupported" if "warmer" in text else "supported"}
                                        for n, text in claims]})
    question = "How fast did the glacier front retreat, and why?"
    opts = {"first_claim_tokens": 1, "first_turn_claims": 3, "key_sentences": 2}
    result, _ = answer_with(fact_library, ScriptedChat([first] + [judge] * 8), question, opts)
    assert "warmer" not in result.answer and all("warmer" not in c.text for c in result.claims)
    assert any("withdrew" in m and "warmer winters" in m for m in result.messages), result.messages
    assert any(not c.quoted and "38 metres" in c.text and c.support == "supported" for c in result.claims)
    assert_cited_in_place(result)

    kept, _ = answer_with(fact_library, ScriptedChat([first] + [judge] * 8), question, {**opts, "withdraw_unsupported": False})
    assert [c.support for c in kept.claims if "warmer" in c.text] == ["unsupported"]


def test_a_withdrawn_claims_place_goes_to_no_quote(fact_library):
    """Through the whole answer (the verdicts scripted): the made-up claim is withdrawn, named in
    the notes, and the key passages are the same as where it stays: no quote stands in for it."""
    first = json.dumps({"claims": [
        {"text": "The glacier front retreated 38 metres per year between 2015 and 2021.", "sources": [1]},
        {"text": "Drone photogrammetry measures glacier retreat at centimetre accuracy in warmer winters.", "sources": [2]}]})

    def judge(messages):
        claims = re.findall(r"^(\d+)\. Claim: (.*)$", messages[-1]["content"], re.M)
        return json.dumps({"verdicts": [{"pair": int(n), "verdict": "unsupported" if "warmer" in text else "supported"}
                                        for n, text in claims]})
    question = "How fast did the glacier front retreat, and how was it measured?"
    opts = {"first_claim_tokens": 1, "first_turn_claims": 3, "key_sentences": 2}
    result, _ = answer_with(fact_library, ScriptedChat([first] + [judge] * 8), question, opts)
    kept, _ = answer_with(fact_library, ScriptedChat([first] + [judge] * 8), question, {**opts, "withdraw_unsupported": False})
    assert any("warmer" in m for m in result.messages) and all("warmer" not in c.text for c in result.claims)
    assert [c.text for c in result.claims if c.quoted] == [c.text for c in kept.claims if c.quoted]
    assert [c.text for c in result.claims if not c.quoted] == ["The glacier front retreated 38 metres per year between 2015 and 2021."]
    assert_cited_in_place(result)

class _RatingFails(ScriptedChat):
    """A scripted model whose quote rating is cancelled by the user, or breaks."""

    def __init__(self, replies, error: Exception) -> None:
        super().__init__(replies)
        self.error = error

    def choice_probabilities(self, messages, choices, *, cancelled=None):
        if "Sentence:" in messages[-1]["content"]:  # the key sentences' rating, not the support judge
            raise self.error
        return None


def test_cancel_while_the_quotes_are_rated_keeps_the_claims_on_screen(fact_library):
    first = json.dumps({"claims": [{"text": "The glacier front retreated 38 metres per year.", "sources": [1]}]})
    chat = _RatingFails([first], Cancelled())
    fact_library.set_chat_model(chat)
    shown: list = []
    funnel = fact_library.funnel(Task(sink=lambda e: shown.append(e) if isinstance(e, ClaimWritten) else None),
                                 overrides={"first_claim_tokens": 1, "first_turn_claims": 3, "key_sentences": 2})
    try:
        with pytest.raises(Cancelled):
            funnel.run("How fast did the glacier front retreat, and how was it measured?")
    finally:
        fact_library._chat = None
    assert [e.claim.text for e in shown] == ["The glacier front retreated 38 metres per year."]


def test_a_failed_rating_quotes_by_focus_score_and_the_answer_stands(fact_library):
    from app.core.errors import ModelError

    first = json.dumps({"claims": [{"text": "The glacier front retreated 38 metres per year.", "sources": [1]}]})
    result, _ = answer_with(fact_library, _RatingFails([first], ModelError("llama.cpp failed while reading")),
                            "How fast did the glacier front retreat, and how was it measured?",
                            {"first_claim_tokens": 1, "first_turn_claims": 3, "key_sentences": 2})
    assert result.claims[0].text == "The glacier front retreated 38 metres per year."
    assert any(c.quoted for c in result.claims)


# -- a faulted claim written again from the sentences it rests on (research/answer/rewrite.py) -------------
def test_a_first_claim_with_a_figure_no_passage_states_is_written_again_from_the_key_passages(fact_library):
    """Real library, focusing, quotes and check rules; a scripted model. The first claim gives a
    retreat no passage gives; written again from the key passages and its cited sentences, it
    states the one the quote gives, is checked, replaces the old claim, and the notes keep the old text."""
    wrong = "The glacier front retreated 512 metres per year."
    right = "The glacier front retreated 38 metres per year."
    first = json.dumps({"claims": [{"text": wrong, "sources": [1]}]})
    chat = ScriptedChat([first] + [judge_and_restate(right, believed=right)] * 8)
    question = "How fast did the glacier front retreat?"
    options = {"first_claim_tokens": 1, "first_turn_claims": 3, "key_sentences": 2}
    result, events = answer_with(fact_library, chat, question, options)
    rewriting = [c for c in chat.calls if "Sentences from the researcher's papers" in c["messages"][-1]["content"]]
    assert len(rewriting) == 1 and question in rewriting[0]["messages"][-1]["content"]
    assert all(f"“{c.text.strip('“”')}”" in rewriting[0]["messages"][-1]["content"] for c in result.claims if c.quoted)
    assert result.claims[0].text == right and not result.claims[0].quoted
    assert result.claims[0].support == "supported" and "512" not in result.answer
    first_citations = [c for c in result.citations if c.claim == 0]
    assert first_citations and all(c.support == "supported" for c in first_citations)
    assert len({(c.paper_id, c.page) for c in first_citations}) == len(first_citations), "one citation a page"
    assert any("written again" in m and wrong.rstrip(".") in m for m in result.messages), result.messages
    assert not any("withdrew" in m for m in result.messages)
    assert any(isinstance(e, Stage) and "writing a claim again" in e.detail for e in events)

    # A rewritten claim the check does not support changes nothing (the claim stays, marked); nor does rewriting off.
    for chat, opts in ((ScriptedChat([first] + [judge_and_restate(right, believed="nothing")] * 8), options),
                       (ScriptedChat([first] + [judge_and_restate(right, believed=right)] * 8),
                        {**options, "rewrite_faulted": False})):
        kept, _ = answer_with(fact_library, chat, question, {**opts, "withdraw_unstated": False, "withdraw_unsupported": False})
        assert kept.claims[0].text == wrong and kept.claims[0].support != "supported"
        assert not any("written again" in m for m in kept.messages)

def test_what_the_check_faults_in_a_claim_of_the_model():
    """A figure its passages lack (by the rules), no support even in part, or the question said
    back: written again. Supported or partly supported claims, and quotes, are left alone."""
    from app.core.research.answer.rewrite import ECHO, FIGURE, UNSUPPORTED, fault

    claims = [Claim("Use y ~ x1 + x2 | x1 + x2 + x3.", [1]), Claim("A quoted sentence.", [1], quoted=True)]

    def checked(missing: list[str], verdict: str = Support.UNSUPPORTED.value) -> dict:
        pair = Pair(claims[0].text, _evidence())
        pair.rule, pair.verdict, pair.missing = Support.UNSUPPORTED.value, verdict, missing
        return {(0, 1): pair, (1, 1): pair}

    assert fault(claims, checked(["512", "x3"]), 0) == FIGURE
    assert fault(claims, checked(["x3"]), 0) == UNSUPPORTED
    assert fault(claims, checked(["x3"], Support.PARTIAL.value), 0) is None
    assert fault(claims, checked([], Support.SUPPORTED.value), 0) is None
    assert fault(claims, checked(["512"]), 1) is None  # a quote is the paper's own sentence
    echo = [Claim("The glacier front retreated fast.", [1])]
    assert fault(echo, checked([], Support.SUPPORTED.value), 0, "How fast did the glacier front retreat?") == ECHO

def test_a_claim_only_the_judge_doubts_is_written_again_and_kept_when_the_new_one_is_no_better(fact_library):
    """No figure or name of the claim is missing from its passage: the judge alone doubts it. It
    is written again; the new claim is no better supported, so the old one stays, marked, whether
    or not unsupported claims are withdrawn: it is the model's only claim."""
    claim = "Adult kestrels were tracked with loggers."
    first = json.dumps({"claims": [{"text": claim, "sources": [1]}]})
    opts = {"first_claim_tokens": 1, "first_turn_claims": 3, "key_sentences": 2}
    for withdraw in (False, True):
        chat = ScriptedChat([first] + [judge_and_restate("Kestrels leave in September.", believed="nothing")] * 8)
        result, _ = answer_with(fact_library, chat, "How were the kestrels tracked?", {**opts, "withdraw_unsupported": withdraw})
        assert sum("Sentences from the researcher's papers" in c["messages"][-1]["content"] for c in chat.calls) == 1
        assert result.claims[0].text == claim and result.claims[0].support == "unsupported"
        assert not any("withdrew" in m for m in result.messages)

@pytest.mark.parametrize("claim, question, echo", [
    # The starter model's answers on the bench's held-out questions: the question said back.
    ("An index class must support operations for it to be usable as the index of a zoo series.",
     "Which operations must an index class support for it to be usable as the index of a zoo series?", True),
    ("According to the DVT-prophylaxis review, insertion-related complications and failed retrievals occur "
     "according to the DVT-prophylaxis review.", "If a trauma patient gets a retrievable inferior vena cava filter, how "
     "often do insertion-related complications and failed retrievals occur according to the DVT-prophylaxis review?", True),
    ("The surgeon-scrub and surgeon-circulator teaming scores were measured in this work.",
     "How familiar were operating-room teams at the academic medical center, as measured by the surgeon-scrub and "
     "surgeon-circulator teaming scores?", True),
    # An answer: a term or a figure the question lacks, or a side taken.
    ("Teams were unfamiliar: the median surgeon-scrub score was 0.08.",
     "How familiar were operating-room teams, as measured by the surgeon-scrub teaming score?", False),
    ("An index class must support c(), length() and ORDER().",
     "Which operations must an index class support to be usable as the index of a zoo series?", False),
    ("Functions exported with Rcpp attributes do not need an explicit RNGScope.",
     "Do functions exported with Rcpp attributes need an explicit RNGScope?", False),
    # Yes-or-no questions: their answer may repeat the question's words.
    ("Catch trials led to consolidation of force field A.",
     "In the force-field adaptation study, did catch trials lead to consolidation of force field A?", False),
    ("The glacier front retreated.", "Did the glacier front retreat?", False),
])
def test_a_claim_that_only_says_the_question_back_is_told(claim, question, echo):
    from app.core.research.answer.question_echo import echoes_question

    assert echoes_question(claim, question) is echo


INSTRUCTION_ECHO = ("The figure, name or direction the question asks for, with numbers, units and names copied exactly as "
                    "the sentences write them. If these sentences do not state the answer, say so plainly.")


def test_a_claim_that_copies_the_prompts_instructions_is_told():
    from app.core.research.answer.question_echo import echoes_instructions

    question = "How many zero counts were observed, and how many did the Poisson and hurdle models predict?"
    assert echoes_instructions(INSTRUCTION_ECHO, question)
    assert not echoes_instructions("683 zero counts were observed; the Poisson model predicted 47 and the hurdle model 683.", question)
    # The form the prompt suggests for evidence that does not state the answer is an answer.
    assert not echoes_instructions("The papers found do not report the dropout rate on TIMIT; they report a retention "
                                   "probability of 0.8 for the input layer.", "What dropout rate was used on TIMIT?")


def test_a_claim_that_opens_with_a_run_of_the_instructions_is_told():
    """A real answer behind a copied opening (seen on a development answer) is an echo; the
    example the prompt gives in quotes, and words the question uses, are not copies."""
    from app.core.research.answer.question_echo import copies_instructions, echoes_instructions

    question = "Which test does coin use for ordinal data?"
    copied = "Write one sentence that answers the question: coin uses the conditional (permutation) test."
    assert copies_instructions(copied, question) and echoes_instructions(copied, question)
    assert not echoes_instructions("coin uses the conditional (permutation) test within its independence_test framework.", question)
    assert not copies_instructions("The papers found do not report the test; they report a permutation distribution.", question)
    asked = "Which test answers the question using only what these sentences state?"
    assert not copies_instructions("A test that answers the question using only what these sentences state is the Wald test.", asked)


GLACIER_RATE = "The glacier front retreated 38 metres per year."


def _glacier_answer(fact_library, first_claim: str, restated: str, believed: str):
    """The glacier question answered by a scripted model whose first claim is `first_claim`;
    its rewrite writes `restated` and its judge finds only `believed` supported."""
    first = json.dumps({"claims": [{"text": first_claim, "sources": [1]}]})
    options = {"first_claim_tokens": 1, "first_turn_claims": 3, "key_sentences": 2}
    result, _ = answer_with(fact_library, ScriptedChat([first] + [judge_and_restate(restated, believed=believed)] * 8),
                            "How fast did the glacier front retreat?", options)
    return result


def test_a_claim_that_copies_the_instructions_is_written_again_and_never_replaced_by_one(fact_library):
    """Real library and check rules; a scripted model whose first claim copies its instructions:
    it is faulted as an echo and written again; a rewrite that copies them too is refused."""
    result = _glacier_answer(fact_library, INSTRUCTION_ECHO, GLACIER_RATE, believed=GLACIER_RATE)
    assert result.claims[0].text == GLACIER_RATE and result.claims[0].support == "supported"

    # A wrong figure written again as the instructions, which the judge would even pass: refused.
    result = _glacier_answer(fact_library, "The glacier front retreated 512 metres per year.", INSTRUCTION_ECHO,
                             believed=INSTRUCTION_ECHO)
    assert result.claims[0].text == "The glacier front retreated 512 metres per year."
    assert not any(c.text == INSTRUCTION_ECHO for c in result.claims)


def test_a_first_claim_that_only_repeats_the_question_is_written_again(fact_library):
    """Real library, focusing, quotes and check rules; a scripted model whose first claim says
    the question back. Written again and supported, it is replaced; if the new claim is not
    supported, the echo stays marked (a quote never takes the model's place)."""
    echo = "The glacier front retreated fast."
    result = _glacier_answer(fact_library, echo, GLACIER_RATE, believed=GLACIER_RATE)
    assert result.claims[0].text == GLACIER_RATE and result.claims[0].support == "supported"
    assert any("only repeated the question" in m and "written again" in m and echo.rstrip(".") in m for m in result.messages)

    result = _glacier_answer(fact_library, echo, GLACIER_RATE, believed="nothing")
    assert result.claims[0].text == echo and not result.claims[0].quoted and result.claims[0].support == "unsupported"
    assert [c.claim for c in result.citations] == sorted(c.claim for c in result.citations)

    # A yes-or-no question's answer in its own words is no echo; the judge doubting it, it is written again.
    first = json.dumps({"claims": [{"text": echo, "sources": [1]}]})
    options = {"first_claim_tokens": 1, "first_turn_claims": 3, "key_sentences": 2, "withdraw_unsupported": False}
    chat = ScriptedChat([first] + [judge_and_restate(GLACIER_RATE, believed=GLACIER_RATE)] * 8)
    result, _ = answer_with(fact_library, chat, "Did the glacier front retreat fast?", options)
    assert any("Sentences from the researcher's papers" in c["messages"][-1]["content"] for c in chat.calls)
    assert result.claims[0].text == GLACIER_RATE

def test_two_claims_written_again_as_one_sentence_are_said_once(fact_library):
    """Real library, focusing, quotes and check rules; a scripted model whose two claims give
    figures no passage gives. Both are written again from the same sentences and come back as
    the same sentence: the answer states it once, its citations in step with the claims."""
    first = json.dumps({"claims": [{"text": "The glacier front retreated 512 metres per year.", "sources": [1]},
                                   {"text": "The glacier front retreated 640 metres per year.", "sources": [1]}]})
    options = {"first_claim_tokens": 1, "first_turn_claims": 3, "key_sentences": 2}
    chat = ScriptedChat([first] + [judge_and_restate(GLACIER_RATE, believed=GLACIER_RATE)] * 8)
    result, _ = answer_with(fact_library, chat, "How fast did the glacier front retreat?", options)
    assert [c.text for c in result.claims if not c.quoted] == [GLACIER_RATE]
    assert sum("written again" in m for m in result.messages) == 2
    assert result.answer.split("**Key passages**")[0].count(GLACIER_RATE.rstrip(".")) == 1
    assert all(c.claim < len(result.claims) for c in result.citations)
    assert result.claim_counts()["claims"] == 1


def test_a_claim_an_earlier_rewritten_one_already_states_goes_with_its_citations():
    from app.core.research.answer.rewrite import _drop_repeats
    from app.core.research.check.support import Pair

    e = _evidence()
    claims = [Claim("The piezo sensitivity was 120 Hz/V and the tuning range at 100 V was 13 kHz.", [1]),
              Claim("“The tuning range at 100 V was 13 kHz”", [1], quoted=True),
              Claim("The tuning range at 100 V was 13 kHz.", [1]),
              Claim("The tuning range at 150 V was 19 kHz.", [1]),
              Claim("Yes.", [1])]
    checked = {(i, 1): Pair(c.text, e) for i, c in enumerate(claims)}
    assert _drop_repeats(claims, checked, {3}) == frozenset({2})
    assert [c.text for c in claims] == [claims[0].text, "“The tuning range at 100 V was 13 kHz”",
                                        "The tuning range at 150 V was 19 kHz.", "Yes."]
    assert sorted(checked) == [(0, 1), (1, 1), (2, 1), (3, 1)] and checked[(2, 1)].claim == "The tuning range at 150 V was 19 kHz."


def test_a_quoted_table_caption_brings_its_rows_to_the_claim_written_again():
    """The key passage is the caption as the page's text sets it, in the question's words; the row
    that answers is in the table's passage. Written again, the claim reads both."""
    from app.core.records import Sentence
    from app.core.research.answer.rewrite import sentences_for

    caption = ("Fold change results for the top 12 metabolites showing the greatest increase or decrease in "
               "metabolite concentration in heat stressed plants")
    prose = Evidence(1, "wheat", 14, "14", "Discussion", f"Table 3. {caption}.", 0.6)
    lines = [f"Table 3 (page 14) · Table 3. {caption} compared to control plants. · columns: Compounds, Fold change",
             "L-tryptophan · Fold change: 11.46", "Pipecolate · Fold change: 5.89"]
    text = "\n".join(lines)
    at = [text.index(line) for line in lines]
    table = Evidence(2, "wheat", 14, "14", "Table 3", text, 0.5,
                     sentences=[Sentence(line, k, k + len(line)) for line, k in zip(lines, at)])
    claims = [Claim("The metabolite that rose the most rose 1.5 fold.", [1]), Claim(f"“{caption}”", [1], quoted=True)]
    picked = sentences_for(claims[0], claims, [prose, table])
    assert picked[:3] == [(caption, 1), ("L-tryptophan · Fold change: 11.46", 2), ("Pipecolate · Fold change: 5.89", 2)]
    # a key passage that is no table's caption brings nothing more
    other = [claims[0], Claim("“Heat stress raised tryptophan in every genotype of the study”", [1], quoted=True)]
    assert all(n == 1 for _, n in sentences_for(other[0], other, [prose, table]))


@pytest.mark.slow
def test_rewriting_with_the_real_model_keeps_the_answer_consistent(fact_library, tiny_models):
    """The tiny real model writes the claim again (llama.cpp, its grammar, the probability
    judge): the first claim is then either the one the model first wrote, untouched, or a new
    one of the model's that a passage supports better."""
    from app.core.models.llamacpp import LlamaCppChat
    from app.core.research.answer.rewrite import FIGURE, rewrite_faulted
    from app.core.research.check.support import Pair
    from app.core.settings import ModelConfig

    e = _evidence()
    claims = [Claim("Young birds left 19 days after the adults.", [1]),
              Claim("“Young birds departed 9 days later than adults”", [1], quoted=True)]
    first = Pair(claims[0].text, e)
    first.verdict = first.rule = "unsupported"  # the rules found 19 in no passage
    first.missing = ["19"]
    checked = {(0, 1): first}
    chat = LlamaCppChat(ModelConfig(path=str(tiny_models["chat"]), context_length=2048, threads=2))
    try:
        done, unchanged = rewrite_faulted(claims, [e], checked, chat, "How much later than adults did young kestrels leave?")
    finally:
        chat.close()
    assert [c.quoted for c in claims] == [False, True]
    if not done:
        assert claims[0].text == "Young birds left 19 days after the adults." and checked == {(0, 1): first}
        assert unchanged == frozenset({0})
    else:
        assert done[0].old == "Young birds left 19 days after the adults." and claims[0].text == done[0].new
        assert done[0].why == FIGURE and not unchanged
        assert checked[(0, 1)].verdict in ("supported", "partial") and checked[(0, 1)].claim == claims[0].text

# -- figures given "respectively" (research/text/respectively.py) ------------------------------------

LC50 = ("The LC50 obtained from the best-fit line slope were found to be 2.17, 2.77, 2.46 and 0.28 µg/ml for "
        "n-hexane, chloroform, aqueous soluble fractions of the methanolic extract and vincristine sulfate, respectively.")


def test_respectively_pairs_each_figure_with_its_name():
    from app.core.research.text.respectively import respective_pairs

    assert respective_pairs(LC50) == [("n-hexane", 2.17), ("chloroform", 2.77),
                                      ("aqueous soluble fractions of the methanolic extract", 2.46), ("vincristine sulfate", 0.28)]
    assert respective_pairs("Bleeding and HIT risks were 3.9% and 0.7%, respectively.") == [("Bleeding", 3.9), ("HIT risks", 0.7)]
    # Step numbers are labels, not figures; a sentence without "respectively" pairs nothing.
    assert respective_pairs("Recursively repeat steps 1 and 2 with weights wleft and wright, respectively.") == []
    assert respective_pairs("The LC50 values were 2.17 and 2.77 µg/ml for n-hexane and chloroform.") == []


@pytest.mark.parametrize("claim, cap", [
    ("The n-hexane fraction had an LC50 of 2.17 µg/ml.", Support.SUPPORTED.value),
    ("The chloroform fraction had an LC50 of 2.17 µg/ml.", Support.UNSUPPORTED.value),  # n-hexane's figure
    ("LC50 values were 2.77 (n-hexane) and 2.17 (chloroform).", Support.UNSUPPORTED.value),  # the two swapped
    ("LC50 values were 2.17 (n-hexane) and 2.77 µg/ml (chloroform).", Support.SUPPORTED.value),
    ("The aqueous fraction gave 2.46 µg/ml, against 2.17 for n-hexane.", Support.SUPPORTED.value),
    # The starter model's claim: 2.17 is not lower than the control's 0.28.
    ("The n-hexane fraction had an LC50 of 2.17 µg/ml, which is lower than the positive control (vincristine sulfate).",
     Support.UNSUPPORTED.value),
    ("The n-hexane fraction had an LC50 of 2.17 µg/ml, higher than that of vincristine sulfate.", Support.SUPPORTED.value),
    # A claim's own "respectively" list: each figure to its own name, not to the one standing before it.
    ("The chloroform and n-hexane fractions gave 2.77 and 2.17 µg/ml, respectively.", Support.SUPPORTED.value),
    ("The chloroform and n-hexane fractions gave 2.17 and 2.77 µg/ml, respectively.", Support.UNSUPPORTED.value),
])
def test_a_figure_given_respectively_belongs_to_its_own_name(claim, cap):
    finding = check_specifics(claim, LC50)
    assert finding.cap == cap, finding.reason
    if cap == Support.UNSUPPORTED.value:
        assert "the passage gives" in finding.reason and finding.contradicts


def test_a_passage_that_states_otherwise_outweighs_one_that_shares_the_claims_words():
    """The chloroform claim takes n-hexane's figure: the "respectively" sentence contradicts it,
    a table row that holds the same figure does not save it (its citation becomes doubtful and
    stays), and nothing is pruned as if the claim were supported."""
    from app.core.research.answer.recite import doubt_contradicted, prune

    listing = Evidence(number=1, paper_id="phoenix", page=4, page_label="4", section="Results", score=0.8, text=LC50)
    table = Evidence(number=2, paper_id="phoenix", page=4, page_label="4", section="Table 2", score=0.7,
                     text="Table 2. LC50 of the extractives in µg/ml: 2.17, 2.77, 2.46 and 0.28.")
    claims = [Claim("The chloroform fraction had an LC50 of 2.17 µg/ml.", [1, 2])]
    checked = {(0, e.number): Pair(claims[0].text, e) for e in (listing, table)}
    check_pairs(list(checked.values()), _NumberJudge())
    assert checked[(0, 1)].verdict == Support.UNSUPPORTED.value and checked[(0, 2)].verdict == Support.SUPPORTED.value
    assert doubt_contradicted(claims, checked) == 1
    assert checked[(0, 2)].verdict == Support.PARTIAL.value
    assert "says otherwise" in checked[(0, 2)].reason and "n-hexane" in checked[(0, 2)].reason
    assert prune(claims, checked) == 0 and claims[0].sources == [1, 2]


def test_a_claim_that_could_not_be_written_again_is_held_to_the_figures_of_its_own_passages():
    """The claim's "100 µg/ml" is on no cited page, but a methods passage of the answer says
    "100 µl". Withdrawing by every passage keeps it; once writing it again failed, it is held to
    its own passages and withdrawn where another claim of the model is supported."""
    from app.core.research.answer.recite import withdraw_unstated

    cited = Evidence(number=1, paper_id="phoenix", page=4, page_label="4", section="Results", score=0.8, text=LC50)
    methods = Evidence(number=2, paper_id="phoenix", page=2, page_label="2", section="Methods", score=0.5,
                       text="Each vial received 100 µl of the extract dissolved in DMSO.")

    other = "The n-hexane fraction was the most toxic."

    def answer():
        claims = [Claim("The n-hexane fraction gave an LC50 of 100 µg/ml.", [1]), Claim(other, [1])]
        checked = {(0, 1): Pair(claims[0].text, cited), (1, 1): Pair(other, cited)}
        checked[(0, 1)].verdict, checked[(1, 1)].verdict = Support.UNSUPPORTED.value, Support.SUPPORTED.value
        return claims, checked

    claims, checked = answer()
    assert withdraw_unstated(claims, [cited, methods], checked) == [] and len(claims) == 2
    claims, checked = answer()
    assert withdraw_unstated(claims, [cited, methods], checked, held_to_cited=frozenset({0})) == [(
        "The n-hexane fraction gave an LC50 of 100 µg/ml.", ["100"])]
    assert [c.text for c in claims] == [other] and set(checked) == {(0, 1)}


ASSAY = "In the validation set, sensitivity was 85% and specificity 92%."
ARMS = "Twenty patients were enrolled: eight in the surgical arm and twelve in the medical arm."


@pytest.mark.parametrize("claim, passage, cap", [
    ("The assay's sensitivity was 85%.", ASSAY, Support.SUPPORTED.value),
    ("The assay's specificity was 85%.", ASSAY, Support.UNSUPPORTED.value),  # sensitivity's figure
    ("Specificity reached 92%, sensitivity 85%.", ASSAY, Support.SUPPORTED.value),
    ("Eight patients were in the surgical arm.", ARMS, Support.SUPPORTED.value),
    ("Eight patients received medical treatment.", ARMS, Support.UNSUPPORTED.value),  # counts spelled out
    ("Of twenty patients, eight were medical.", ARMS, Support.UNSUPPORTED.value),
    # A clause with two figures cannot be paired: left to the other rules (and the model).
    ("The twelve medical patients outnumbered the eight surgical ones.", ARMS, Support.SUPPORTED.value),
])
def test_a_figure_stated_clause_by_clause_belongs_to_its_own_clause(claim, passage, cap):
    finding = check_specifics(claim, passage)
    assert finding.cap == cap, finding.reason
    if cap == Support.UNSUPPORTED.value:
        assert finding.contradicts and "the passage gives" in finding.reason
        assert "medical" in finding.reason or "specificity" in finding.reason


def test_a_negated_word_is_not_the_passages_direction():
    """"not safe" says what "unsafe" says: no contradiction; the plain opposite still is one."""
    from app.core.research.check.support_rules import reversed_direction

    assert reversed_direction("The call is unsafe in C++ code.", "This call is not safe to use in C++ code.") == ""
    assert reversed_direction("The call is unsafe in C++ code.", "This call is safe to use in C++ code.")
    assert reversed_direction("The effect was not significant.", "The effect was insignificant.") == ""


REASONED = ("Nest failure rose from 12% to 30% after the drought. Predation by foxes explains most of the "
            "losses, because the dry ground left nests exposed.")


@pytest.mark.parametrize("claim, cap, judged", [
    # The finding is stated, the reason is not: partial at best, the finding left to the model.
    ("Nest failure rose from 12% to 30% after the drought because the colony moved inland.",
     Support.PARTIAL.value, "Nest failure rose from 12% to 30% after the drought."),
    ("Because the colony moved inland, nest failure rose from 12% to 30% after the drought.",
     Support.PARTIAL.value, "Nest failure rose from 12% to 30% after the drought."),
    # The reason the passage gives, in its words: the whole claim goes to the model as usual.
    ("Most losses were due to fox predation, because the dry ground left nests exposed.", Support.SUPPORTED.value, ""),
    # A wrong figure in the finding is not excused by the reason.
    ("Nest failure rose from 12% to 40% after the drought because the colony moved inland.",
     Support.UNSUPPORTED.value, ""),
    # "since 2002" is a time, not a reason.
    ("Since the drought nest failure rose from 12% to 30%.", Support.SUPPORTED.value, ""),
])
def test_a_reason_the_passage_does_not_give_makes_a_claim_partial_at_best(claim, cap, judged):
    finding = check_specifics(claim, REASONED)
    assert (finding.cap, finding.judged) == (cap, judged), finding.reason
    if cap == Support.PARTIAL.value:
        assert "the colony moved inland" in finding.reason


def test_the_judge_reads_the_finding_of_a_claim_whose_reason_is_unstated():
    """The rules cap the claim at partial; the model is asked about the finding alone, and a
    finding it does not find stated makes the pair unsupported (the stricter judge wins)."""
    e = Evidence(number=1, paper_id="nests", page=2, page_label="2", section="Results", text=REASONED, score=0.6)
    kept = Pair("Nest failure rose from 12% to 30% after the drought because the colony moved inland.", e)
    lost = Pair("Nest failure rose from 12% to 30% after the flood because the colony moved inland.", e)
    check_pairs([kept], _NumberJudge())
    assert kept.verdict == Support.PARTIAL.value and "moved inland" in kept.reason
    assert kept.asked == "Nest failure rose from 12% to 30% after the drought."

    class FindingJudge(_NumberJudge):  # says yes only to the finding as the passage words it
        def choice_probabilities(self, messages, choices, *, cancelled=None):
            yes = 0.9 if "after the drought." in messages[-1]["content"].split("Claim:", 1)[1] else 0.1
            return {"yes": yes, "no": 1 - yes}

    check_pairs([lost], FindingJudge())
    assert lost.verdict == Support.UNSUPPORTED.value


@pytest.mark.parametrize("claim, passage, cap", [
    ("The pedigree data establish that susceptibility is recessive.",
     "These results suggest a recessive model, although an additive model cannot be ruled out.", Support.PARTIAL.value),
    ("The pedigree data point to a recessive model.",
     "These results suggest a recessive model, although an additive model cannot be ruled out.", Support.SUPPORTED.value),
    # "may" of a method is no hedge of a finding; "established" before a noun is no claim of proof.
    ("The fitting function demonstrates convergence within 20 iterations.",
     "Users may set the tolerance; the fitting function converged within 20 iterations.", Support.SUPPORTED.value),
    ("Established pairs were broken up in 2020.", "The data suggest established pairs were broken up in 2020.",
     Support.SUPPORTED.value),
])
def test_certainty_a_hedged_passage_lacks_is_doubtful(claim, passage, cap):
    finding = check_specifics(claim, passage)
    assert finding.cap == cap, finding.reason
    if cap == Support.PARTIAL.value:
        assert finding.missing == ["establish"] and "suggest" in finding.reason


@pytest.mark.slow
def test_the_real_model_judges_a_claim_without_its_unstated_reason(tiny_models):
    """Through llama.cpp: the model reads the finding alone (its confidence is recorded), and the
    claim whose reason the passage does not give is never called supported."""
    from app.core.models.llamacpp import LlamaCppChat
    from app.core.settings import ModelConfig

    e = Evidence(number=1, paper_id="nests", page=2, page_label="2", section="Results", text=REASONED, score=0.6)
    pair = Pair("Nest failure rose from 12% to 30% after the drought because the colony moved inland.", e)
    chat = LlamaCppChat(ModelConfig(path=str(tiny_models["chat"]), context_length=2048))
    try:
        check_pairs([pair], chat, context="Why did nests fail?")
    finally:
        chat.close()
    assert pair.asked == "Nest failure rose from 12% to 30% after the drought."
    assert pair.confidence is not None and 0.0 < pair.confidence < 1.0
    assert pair.verdict in {Support.PARTIAL.value, Support.UNSUPPORTED.value}
    if pair.verdict == Support.PARTIAL.value:
        assert "moved inland" in pair.reason


@pytest.mark.slow
def test_passages_the_prompt_could_not_hold_still_give_quotes(fact_library):
    """With quotes, the model reads only the first turn's passages; the others are quoted from,
    never put in a prompt, so the evidence budget cuts none of them. Where a second turn reads
    them (key_sentences = 0), it still does, and says so."""
    question = "When do kestrels depart from alpine valleys in autumn?"
    results = {}
    for quotes in (2, 0):
        funnel = fact_library.funnel(overrides={"first_claim_tokens": 1, "first_turn_claims": 1, "key_sentences": quotes})
        funnel.evidence_tokens_override = 1  # the least the prompt carries (evidence_budget's floor)
        results[quotes] = funnel.run(question)
    quoted, read = results[2], results[0]
    assert len(read.evidence) < len(quoted.evidence)
    assert any("did not fit the prompt" in m for m in read.messages)
    assert not any("did not fit the prompt" in m for m in quoted.messages)
    assert_cited_in_place(quoted)


# -- does the answer state what was asked? (research/answer/answer_check.py) ----------------------------
class _RatesAnswers(ScriptedChat):
    """A scripted model that rates, for the quotes and the answer check, a sentence holding
    `answering` as stating the answer (P(yes) 0.9) and any other as not (0.1); the support judge
    answers in words (no probabilities), every pair supported."""

    def __init__(self, replies, answering: str) -> None:
        super().__init__(replies)
        self.answering = answering

    def choice_probabilities(self, messages, choices, *, cancelled=None):
        text = messages[-1]["content"]
        if "Sentence:" not in text:
            return None
        p = 0.9 if self.answering in text.split("Sentence:", 1)[1] else 0.1
        return {"yes": p, "no": 1 - p}


def _all_supported(rewritten: str):
    def reply(messages):
        text = messages[-1]["content"]
        if "Sentences from the researcher's papers" in text:
            return json.dumps({"claim": rewritten})
        claims = re.findall(r"^\d+\. Claim: (.*)$", text, flags=re.M)
        return json.dumps({"verdicts": [{"pair": i, "verdict": "supported"} for i in range(1, len(claims) + 1)]})
    return reply


def test_a_supported_answer_beside_the_point_is_written_again(fact_library):
    """Asked how fast the front retreated, the model answers how it was measured: true, supported,
    beside the point. The papers' best sentence is rated clearly better for answering, so the
    claim is written again from the key passages; the new one is supported and rated higher."""
    beside = "Drone photogrammetry measures glacier retreat at centimetre accuracy."
    right = "The glacier front retreated 38 metres per year."
    first = json.dumps({"claims": [{"text": beside, "sources": [1]}]})
    options = {"first_claim_tokens": 1, "first_turn_claims": 3, "key_sentences": 2}
    question = "How fast did the glacier front retreat?"
    result, _ = answer_with(fact_library, _RatesAnswers([first] + [_all_supported(right)] * 10, "38 metres"), question, options)
    lead = result.claims[0]
    assert lead.text == right and not lead.quoted and lead.support == "supported" and lead.answers == pytest.approx(0.9)
    assert result.extra["best_answer_p"] == pytest.approx(0.9)
    assert any("did not state what was asked" in m and beside.rstrip(".") in m for m in result.messages), result.messages

    # Written again no better (it still misses the point): the claim stays, with a note; off, nothing is asked.
    result, _ = answer_with(fact_library, _RatesAnswers([first] + [_all_supported("Drones were flown at 120 metres.")] * 10,
                                                         "38 metres"), question, options)
    assert result.claims[0].text == beside and any(m.startswith("Answer check:") for m in result.messages)
    chat = _RatesAnswers([first] + [_all_supported(right)] * 10, "38 metres")
    result, _ = answer_with(fact_library, chat, question, {**options, "answer_check": False})
    assert result.claims[0].text == beside and result.claims[0].answers is None
    assert not any("Sentences from the researcher's papers" in c["messages"][-1]["content"] for c in chat.calls)


def test_an_answer_rated_near_the_best_sentence_is_left_alone():
    from app.core.research.answer.check import ANSWER_MARGIN, beside_the_point
    from app.core.research.answer.rewrite import OFF_POINT, fault

    claims = [Claim("The glacier front retreated quickly.", [1], answers=0.5)]
    pair = Pair(claims[0].text, _evidence())
    pair.verdict = Support.SUPPORTED.value
    checked = {(0, 1): pair}
    assert fault(claims, checked, 0, "", best_answer=0.5 + ANSWER_MARGIN) == OFF_POINT
    assert fault(claims, checked, 0, "", best_answer=0.5 + ANSWER_MARGIN - 0.05) is None
    assert fault(claims, checked, 0, "", best_answer=None) is None and not beside_the_point(None, 0.9)


# -- the key passages are rated after the first turn (research/answer/key_sentences.py) -----------

class _RatingChat(ScriptedChat):
    """A scripted writer that rates sentences too: P(yes) is high only for the sentence stating
    the retreat rate. It records which sentences it was asked to rate."""

    gives_probabilities = True

    def __init__(self, replies):
        super().__init__(replies)
        self.rated: list[str] = []
        self.order: list[str] = []  # "rate" and "write", as they happened

    def prefill(self, messages):
        return 0

    def chat(self, messages, **kwargs):
        self.order.append("write")
        return super().chat(messages, **kwargs)

    def choice_probabilities(self, messages, choices, *, cancelled=None):
        prompt = messages[-1]["content"]
        if "Sentence:" not in prompt:  # the support check's judge: the claim's figure in its quote
            quote, claim = prompt.split("Cited text:", 1)[-1], prompt.split("Claim:", 1)[-1].split("Does the claim", 1)[0]
            yes = 0.9 if set(re.findall(r"\d+", claim)) <= set(re.findall(r"\d+", quote)) else 0.05
            return {"yes": yes, "no": 1 - yes}
        sentence = prompt.split("Sentence:", 1)[1]
        self.rated.append(sentence.strip())
        self.order.append("rate")
        yes = 0.9 if "38 metres" in sentence else 0.1
        return {"yes": yes, "no": 1 - yes}


def test_the_first_turn_writes_before_the_key_sentences_are_rated_each_once(fact_library):
    """Real library, focusing and quotes; a scripted model. The first turn reads the best passages
    in retrieval order and writes first (rating before it gained nothing on development answers,
    docs/lab/); the key sentences are rated after it, each once, and the best rating is
    kept for the answer check."""
    right = json.dumps({"claims": [{"text": "The glacier front retreated 38 metres per year.", "sources": [1]}]})
    question = "How fast did the glacier front retreat, and with what did they fly?"
    options = {"first_claim_tokens": 1, "first_turn_claims": 3, "key_sentences": 2}

    chat = _RatingChat([right])
    result, _ = answer_with(fact_library, chat, question, options)
    assert chat.order[0] == "write" and "rate" in chat.order
    assert chat.rated and len(chat.rated) == len(set(chat.rated)), "a sentence rated twice"
    assert result.claims and "38 metres" in result.claims[0].text
    assert result.extra.get("best_answer_p") in (0.1, 0.9)  # the scripted ratings
