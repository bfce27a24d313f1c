"""Questions scoped to chosen papers, a tag or a collection (issue 53): every search is narrowed
to the scope, so a scoped answer never reads nor cites a paper outside it."""

from __future__ import annotations

import json
import shutil

import pytest

from app import cli
from app.core.desk import Desk, Scope
from app.core.errors import ResearchDeskError
from app.core.events import Task
from app.core.records import CitationStatus
from tests.support.pdf_factory import make_paper
from tests.support.chat import ScriptedChat

QUESTION = "When do kestrels depart in autumn?"


@pytest.fixture(scope="module")
def scoped_library(tmp_path_factory, fact_library):
    """The fact papers plus a second kestrel paper (tag "pyrenees", collection "Birds/Pyrenees")."""
    root = tmp_path_factory.mktemp("scope")
    shutil.copytree(fact_library.location, root / "lib")
    make_paper(root / "pyrenees.pdf", "Kestrel Departure from the Pyrenees", ["Ines Costa"], [
        "# Abstract\n\nWe study when kestrels depart from the Pyrenees in autumn, from five years of ringing.",
        "# Results\n\nKestrels in the Pyrenees departed on 2 October on median, three weeks after alpine birds.",
    ])
    desk = Desk(fact_library.settings, library=str(root / "lib"))
    assert desk.add([root / "pyrenees.pdf"]).ok
    ids = {p.title.split()[0].lower(): p.id for p in desk.papers()}  # kestrel, glacier
    pyrenees = next(p.id for p in desk.papers() if "Pyrenees" in p.title)
    desk.set_labels([pyrenees], tags=["pyrenees"], collections=["Birds/Pyrenees"])
    desk.set_labels([ids["kestrel"]], collections=["Birds/Alps"])
    yield desk, {"kestrel": ids["kestrel"], "glacier": ids["glacier"], "pyrenees": pyrenees}
    desk.close()


def _papers_read(result) -> set[str]:
    return ({e.paper_id for e in result.evidence} | {c.paper_id for c in result.citations if c.status != CitationStatus.NOT_IN_EVIDENCE.value}
            | {r.paper_id for r in result.references} | set(result.papers))


def test_labels_are_kept_listed_and_resolved(scoped_library):
    desk, ids = scoped_library
    tags, collections = desk.labels()
    assert tags == ["pyrenees"] and collections == ["Birds", "Birds/Alps", "Birds/Pyrenees"]
    from app.core.scope import resolve

    papers = desk.papers()
    assert resolve(Scope(tag="PYRENEES"), papers) == {ids["pyrenees"]}
    assert resolve(Scope(collection="Birds"), papers) == {ids["pyrenees"], ids["kestrel"]}  # sub-collections too
    assert resolve(Scope(papers=(ids["glacier"], ids["kestrel"]), collection="Birds"), papers) == {ids["kestrel"]}
    with pytest.raises(ResearchDeskError, match="within tag “nope”"):
        resolve(Scope(tag="nope"), papers)
    with pytest.raises(ResearchDeskError, match="No paper with id"):
        resolve(Scope(papers=("missing2020",)), papers)
    added = desk.set_labels([ids["glacier"]], tags=["ice", " to read "], add=True)[0]
    assert added.tags == ["ice", "to read"] and desk.paper(ids["glacier"]).tags == ["ice", "to read"]
    desk.set_labels([ids["glacier"]], tags=[])
    assert desk.paper(ids["glacier"]).tags == []


@pytest.mark.parametrize("scope_of", ["tag", "collection", "papers"])
def test_scoped_evidence_stays_within_the_scope(scoped_library, scope_of):
    desk, ids = scoped_library
    scope, allowed = {
        "tag": (Scope(tag="pyrenees"), {ids["pyrenees"]}),
        "collection": (Scope(collection="Birds/Pyrenees"), {ids["pyrenees"]}),
        "papers": (Scope(papers=(ids["glacier"], ids["pyrenees"])), {ids["glacier"], ids["pyrenees"]}),
    }[scope_of]
    whole = desk.research(QUESTION, Task(), evidence_only=True)
    assert ids["kestrel"] in {e.paper_id for e in whole.evidence}  # unscoped, the alpine paper answers
    scoped = desk.research(QUESTION, Task(), evidence_only=True, scope=scope)
    assert scoped.evidence and _papers_read(scoped) <= allowed, _papers_read(scoped)
    assert scoped.extra["scope"]["tag"] == scope.tag


@pytest.mark.slow
def test_scoped_real_answer_cites_only_the_scope(scoped_library):
    desk, ids = scoped_library
    result = desk.research(QUESTION, Task(), scope=Scope(tag="pyrenees"))  # the real tiny model
    assert result.answer and _papers_read(result) <= {ids["pyrenees"]}, _papers_read(result)
    entry = desk.history_record(result.extra["history"]).entry
    assert entry.scope == "tag “pyrenees”" and set(entry.cited) <= {ids["pyrenees"]}


def test_a_model_naming_a_paper_outside_the_scope_gets_no_reference(scoped_library):
    desk, ids = scoped_library
    reply = f"Alpine kestrels leave on 14 September [{ids['kestrel']}, page 3]; Pyrenean ones on 2 October [1]."
    desk.set_chat_model(ScriptedChat([reply]))
    try:
        result = desk.research(QUESTION, Task(), overrides={"structured_answers": False}, scope=Scope(tag="pyrenees"))
    finally:
        desk._chat = None
    outside = [c for c in result.citations if c.paper_id == ids["kestrel"]]
    assert outside and all(c.status == CitationStatus.NOT_IN_EVIDENCE.value and c.reference_number is None for c in outside)
    assert [r.paper_id for r in result.references] == [ids["pyrenees"]]


def test_improve_searches_only_within_the_answers_scope(scoped_library):
    desk, ids = scoped_library
    desk.set_chat_model(ScriptedChat(["Pyrenean kestrels leave on 2 October [1].", "Alpine birds leave three weeks earlier [1]."]))
    try:
        first = desk.research(QUESTION, Task(), overrides={"structured_answers": False}, scope=Scope(collection="Birds/Pyrenees"))
        improved = desk.improve("Compare with alpine kestrels and glaciers.", Task(), previous=desk.history_record(first.extra["history"]).result)
    finally:
        desk._chat = None
    assert improved.extra["scope"]["collection"] == "Birds/Pyrenees"
    assert _papers_read(improved) <= {ids["pyrenees"]}, _papers_read(improved)


def test_cli_research_with_a_scope(scoped_library, capsys):
    desk, ids = scoped_library
    desk.settings.save()  # the CLI reads the settings of this test's config folder
    lib = ["--library", str(desk.location)]
    assert cli.main([*lib, "research", QUESTION, "--evidence-only", "--json", "--tag", "pyrenees"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {e["paper_id"] for e in data["evidence"]} == {ids["pyrenees"]} and data["scope"]["tag"] == "pyrenees"
    assert cli.main([*lib, "research", QUESTION, "--evidence-only", "--papers", f"{ids['glacier']},{ids['pyrenees']}"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Within 2 chosen papers") and ids["kestrel"] not in out
    assert cli.main([*lib, "research", QUESTION, "--evidence-only", "--collection", "Fish"]) == 1
    assert "collection “Fish”" in capsys.readouterr().err
