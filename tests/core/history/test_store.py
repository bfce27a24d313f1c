"""The history of answers (issue 53): kept in the library's LanceDB index, listed, searched,
reopened as it was, deleted, exported; a removed paper's answers stay, marked."""

from __future__ import annotations

import json
import shutil

import pytest

from app import cli
from app.core.desk import Desk
from app.core.errors import ResearchDeskError
from app.core.events import Task
from tests.support.chat import ScriptedChat

QUESTION = "When do kestrels depart from alpine valleys in autumn?"


@pytest.fixture(scope="module")
def history_library(tmp_path_factory, fact_library):
    """A copy of the two fact papers' library (real LanceDB, real tiny models) that these tests may write."""
    lib = tmp_path_factory.mktemp("history") / "lib"
    shutil.copytree(fact_library.location, lib)
    desk = Desk(fact_library.settings, library=str(lib))
    yield desk
    desk.close()


def _same_answer(a, b) -> None:
    """What reopening must give back: claims, verdicts, citations, references, evidence, timings."""
    assert a.query == b.query and a.answer == b.answer and a.mode == b.mode
    assert [c.__dict__ for c in a.claims] == [c.__dict__ for c in b.claims]
    assert [c.__dict__ for c in a.citations] == [c.__dict__ for c in b.citations]
    assert [r.__dict__ for r in a.references] == [r.__dict__ for r in b.references]
    assert [e.paper_id for e in a.evidence] == [e.paper_id for e in b.evidence]
    assert [e.sentences for e in a.evidence] == [e.sentences for e in b.evidence]
    assert a.timings == b.timings and a.claim_counts() == b.claim_counts()


@pytest.mark.slow
def test_real_answer_is_kept_and_reopens_as_it_was_after_a_restart(history_library, tiny_models):
    desk = history_library
    before = desk.history_count()
    result = desk.research(QUESTION, Task())  # the real tiny model, the real answer path
    number = result.extra["history"]
    assert desk.history_count() == before + 1
    entry = desk.history()[0]
    assert (entry.number, entry.query, entry.model) == (number, QUESTION, desk.settings.chat.describe())
    assert entry.cited == [r.paper_id for r in result.references] and entry.seconds == pytest.approx(result.timings["total_s"])
    assert entry.claims == result.claim_counts()["claims"] and entry.supported == result.claim_counts()["supported"]

    # A new Desk on the same folder (a restart) reads the same record.
    again = Desk(desk.settings, library=str(desk.location))
    try:
        record = again.history_record(number)
        _same_answer(record.result, result)
        assert record.result.extra["history"] == number and not record.entry.removed
        assert again.last_result().extra["history"] == number  # the state file knows its number
    finally:
        again.close()


def test_list_search_delete_and_numbers_stay(history_library):
    desk = history_library
    chat = ScriptedChat(["Kestrels leave on 14 September [1].", "The glacier front retreated 38 metres a year [1]."])
    desk.set_chat_model(chat)
    try:
        kestrel = desk.research(QUESTION, Task(), overrides={"structured_answers": False})
        glacier = desk.research("How fast did the glacier front retreat?", Task(), overrides={"structured_answers": False})
    finally:
        desk._chat = None
    numbers = [e.number for e in desk.history()]
    assert numbers == sorted(numbers, reverse=True)  # newest first
    assert [e.number for e in desk.history("glacier retreat")] [:1] == [glacier.extra["history"]]
    assert kestrel.extra["history"] in [e.number for e in desk.history("14 SEPTEMBER")]  # the answer is searched, any case
    assert len(desk.history("xylophone")) == 0
    desk.delete_history(kestrel.extra["history"])
    assert kestrel.extra["history"] not in [e.number for e in desk.history()]
    with pytest.raises(ResearchDeskError):
        desk.history_record(kestrel.extra["history"])
    with pytest.raises(ResearchDeskError):
        desk.delete_history(kestrel.extra["history"])
    # A deleted number is not reused: the next answer takes a new one.
    desk.set_chat_model(ScriptedChat(["Kestrels leave on 14 September [1]."]))
    try:
        third = desk.research(QUESTION, Task(), overrides={"structured_answers": False})
    finally:
        desk._chat = None
    assert third.extra["history"] > glacier.extra["history"]


def test_improve_continues_a_reopened_answer_and_links_it(history_library):
    desk = history_library
    desk.set_chat_model(ScriptedChat(["Kestrels leave on 14 September [1].", "Young kestrels leave 9 days after adults [1]."]))
    try:
        first = desk.research(QUESTION, Task(), overrides={"structured_answers": False})
        reopened = desk.history_record(first.extra["history"]).result
        improved = desk.improve("What about young birds?", Task(), previous=reopened)
    finally:
        desk._chat = None
    entry = desk.history_record(improved.extra["history"]).entry
    assert entry.improves == first.extra["history"] and improved.feedback == ["What about young birds?"]


def test_a_removed_paper_keeps_its_answers_marked(tmp_path, history_library):
    # A copy of the library: removing a paper must not change the module's library.
    lib = tmp_path / "lib"
    shutil.copytree(history_library.location, lib)
    desk = Desk(history_library.settings, library=str(lib))
    try:
        desk.set_chat_model(ScriptedChat(["Kestrels leave on 14 September [1]."]))
        result = desk.research(QUESTION, Task(), overrides={"structured_answers": False})
        cited = [r.paper_id for r in result.references]
        assert cited
        desk.remove_papers(cited)
        record = desk.history_record(result.extra["history"])
        assert record.entry.removed == cited and record.result.extra["removed_papers"] == cited
        assert [r.paper_id for r in record.result.references] == cited  # the titles are kept
        assert desk.history()[0].removed == cited
    finally:
        desk.close()


def test_a_failed_history_write_keeps_the_answer_and_the_library(history_library, monkeypatch):
    from app.core.history import store

    desk = history_library
    count = desk.history_count()

    def refuse(self, result, model):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(store.HistoryStore, "add", refuse)
    desk.set_chat_model(ScriptedChat(["Kestrels leave on 14 September [1]."]))
    try:
        result = desk.research(QUESTION, Task(), overrides={"structured_answers": False})
    finally:
        desk._chat = None
    assert "14 September" in result.answer and any("could not be kept in the history" in m for m in result.messages)
    monkeypatch.undo()
    assert desk.history_count() == count and desk.papers()  # nothing half-written, the library reads


def test_cli_history_list_show_export_delete(history_library, capsys, tmp_path):
    desk = history_library
    desk.set_chat_model(ScriptedChat(["Kestrels leave on 14 September [1]."]))
    try:
        result = desk.research(QUESTION, Task(), overrides={"structured_answers": False})
    finally:
        desk._chat = None
    n = result.extra["history"]
    lib = ["--library", str(desk.location)]
    capsys.readouterr()
    assert cli.main([*lib, "history", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed[0]["number"] == n and listed[0]["query"] == QUESTION
    assert cli.main([*lib, "history", "--search", "kestrels depart"]) == 0
    assert f"{n:>5}" in capsys.readouterr().out
    assert cli.main([*lib, "history", "show", str(n), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["result"]["answer"] == result.answer and shown["number"] == n
    assert cli.main([*lib, "history", "show", str(n)]) == 0
    out = capsys.readouterr().out
    assert f"# Answer {n}" in out and "14 September" in out and "## References" in out
    md, bib = tmp_path / "a.md", tmp_path / "a.bib"
    assert cli.main([*lib, "history", "export", str(n), "--format", "markdown", "--out", str(md)]) == 0
    assert cli.main([*lib, "history", "export", str(n), "--format", "bibtex", "--out", str(bib)]) == 0
    assert "14 September" in md.read_text() and "@" in bib.read_text()
    assert cli.main([*lib, "history", "delete", str(n)]) == 0
    assert cli.main([*lib, "history", "show", str(n)]) == 1


def test_listing_builds_entries_as_they_are_read(tmp_path):
    # The listing is Arrow columns newest first; an entry is built when its row is read, with the
    # same values the table holds, and its removed papers judged against the library's papers.
    import pyarrow as pa

    from app.core.history.listing import ENTRY_COLUMNS, HistoryEntries

    rows = pa.table({"number": [3, 2, 1], "asked_at": ["c", "b", "a"], "query": ["q3", "q2", "q1"],
                     "mode": ["standard"] * 3, "model": ["m"] * 3, "scope": ["all papers"] * 3,
                     "cited": [["p1", "gone"], None, ["p1"]], "claims": [2, None, 1], "supported": [1, None, 1],
                     "partial": [0, None, 0], "unsupported": [1, None, 0], "seconds": [9.5, None, 3.0],
                     "improves": [1, None, None]}).select(list(ENTRY_COLUMNS))
    entries = HistoryEntries(rows, frozenset({"p1"}))
    assert len(entries) == 3 and [e.number for e in entries] == [3, 2, 1] == entries.numbers()
    assert entries[0].removed == ["gone"] and entries[0].improves == 1 and entries[0].claims == 2
    assert entries[1].cited == [] and entries[1].claims == 0 and entries[1].seconds == 0.0  # empty cells read as defaults
    assert entries[-1].query == "q1" and [e.number for e in entries[1:]] == [2, 1]
    assert entries.index_of(1) == 2 and entries.index_of(7) == -1
    assert entries.with_papers(frozenset({"p1", "gone"}))[0].removed == []
    assert [e.number for e in entries.where(pa.array([True, False, True]))] == [3, 1]
    with pytest.raises(IndexError):
        entries[3]
