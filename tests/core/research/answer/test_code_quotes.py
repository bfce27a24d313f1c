"""A "how do I …" question quotes the call a software paper gives, with the sentence that introduces it.

The page is a real PDF built with PyMuPDF (prose in Helvetica, the listing in Courier), read
by the import's layout code, so the fenced block and its introducing sentence are what a
library holds; the quote is then found on the page for highlighting.
"""

from __future__ import annotations

import pytest

from app.core.pdf import extract as px
from app.core.units import text_units
from app.core.records import Claim, Evidence, Sentence
from app.core.research.evidence.sentence_runs import first_command
from app.core.research.answer.key_sentences import key_sentences, unquoted
from app.core.research.text.question_reading import ASKS_HOW, Asks

from tests.support.pdf_factory import make_paper

PAGE = """# Returns and volatility

Daily closing prices of the three indices were read from a text file with one column per index.

To compute log-difference returns in percent, the following convenience function is defined

```
R> prices2returns <- function(x) 100 * diff(log(x))
R> r <- prices2returns(m)
```

which can be used to convert all columns of prices into returns.

The series of returns keeps the dates of the prices it was computed from."""


def _evidence_from_page(md: str) -> Evidence:
    """Every unit of the page as a kept sentence, the listing scoring best (as focusing would for its words)."""
    units = text_units(md)
    sentences = [Sentence(md[s:e], s, e, 0.9 if md[s:e].startswith("```") else 0.5)
                 for s, e, kind in units if kind != "heading" and not md[s:e].startswith("#")]
    return Evidence(1, "zoo-quick-reference", 6, "6", "", md, 0.5, sentences=sentences)


def test_how_to_question_quotes_the_introducing_sentence_with_its_call_found_on_the_page(tmp_path):
    pdf = make_paper(tmp_path / "zoo.pdf", title="zoo Quick Reference", pages=[PAGE])
    md = next(px.iter_pages(px.open_pdf(pdf))).markdown
    evidence = [_evidence_from_page(md)]
    claims = [Claim("Prices are read from a text file with one column per index.", [1])]

    asked = "Using zoo, how can I convert a daily price series into log returns in percent?"
    assert ASKS_HOW.search(asked)
    quotes = key_sentences(claims, evidence, 1, asked=Asks(call=True))
    assert [q.text for q in quotes] == [
        "“To compute log-difference returns in percent, the following convenience function is defined: "
        "`prices2returns <- function(x) 100 * diff(log(x))`”"]
    assert quotes[0].sources == [1] and quotes[0].quoted
    # The viewer highlights it from its first words, which are the page's own.
    doc = px.open_pdf(pdf)
    assert px.locate_text(doc[0], unquoted(quotes[0].text))

    # Asked for something else, the listing is not quoted: the sentence alone announces, it states nothing.
    assert all("`" not in q.text for q in key_sentences(claims, evidence, 2))


@pytest.mark.parametrize("block, command", [
    # a console's first command, its output left out; continued lines joined
    ("```\nR> rollapply(r, 10, sd)\n            a      b\n2005-02-17 0.15 0.70\n```", "rollapply(r, 10, sd)"),
    ("```\nR> coeftest(fm, df = Inf,\n+   vcov = NeweyWest(fm, lag = 4))\n```", "coeftest(fm, df = Inf, vcov = NeweyWest(fm, lag = 4))"),
    # set-up lines are skipped; a listing without prompts gives its first line of code
    ("```\n> library(\"zoo\")\n> z <- zoo(rnorm(5))\n```", "z <- zoo(rnorm(5))"),
    ("```\n// the column as a reference\nNumericMatrix::Column col = xx(_, 1);\n```", "NumericMatrix::Column col = xx(_, 1);"),
    # a command that runs on past its line (an open string or call) is never quoted cut
    ("```\nR> src <- '\n  Rcpp::NumericMatrix x(2, 2);\n```", ""),
    # output only, or prose set in a monospace font
    ("```\ndata: y by x\nZ = 1.4203, p-value = 0.9228\n```", ""),
])
def test_the_first_command_of_a_listing(block, command):
    assert first_command(block) == command


def test_how_to_questions_are_told_from_questions_that_ask_for_an_explanation():
    assert ASKS_HOW.search("How do I let users interrupt a long C++ loop?")
    assert ASKS_HOW.search("Which function computes clustered standard errors?")
    assert not ASKS_HOW.search("How does model-based partitioning relate to conditional inference trees?")
    assert not ASKS_HOW.search("How large is the covariance parameter vector?")
