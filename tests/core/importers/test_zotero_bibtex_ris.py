"""Import from Zotero, BibTeX and RIS, end to end: a Zotero database built from Zotero's own
schema files (tests/data/zotero/, see its README), real PDFs, the real MiniLM model and LanceDB."""

from __future__ import annotations

import random
import shutil
import sqlite3
from pathlib import Path

import pytest

from app.core.events import Notice, Task
from app.core.importers import (
    BibliographyError, ZoteroError, import_bibliography, import_zotero,
)
from app.core.importers.bibliography import file_field_paths
from app.core.importers.zotero import zotero_date
from app.core.ingest.pipeline import Importer
from app.core.library.store import CONTENT_CHUNKS, SUMMARY_CHUNKS
from tests.support.paths import DATA
from tests.support.pdf_factory import make_paper

SCHEMA = DATA / "zotero"
KEY_CHARS = "23456789ABCDEFGHIJKLMNPQRSTUVWXYZ"  # Zotero's item key alphabet
KESTREL_PAGES = [
    "# Abstract\n\nWe study when kestrels leave alpine valleys in autumn using ten years of ringing data.",
    "# Results\n\nThe median departure date was 14 September. Young birds departed 9 days later than adults.",
]
GLACIER_PAGES = [
    "# Abstract\n\nDrone photogrammetry measures glacier retreat at centimetre accuracy.",
    "# Findings\n\nThe glacier front retreated 38 metres per year between 2015 and 2021.",
]


# -- a Zotero library, written the way Zotero writes it ------------------------------------
class ZoteroFixture:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = folder / "zotero.sqlite"
        self.rng = random.Random(7)
        folder.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(self.path)
        # Zotero.Schema._initializeSchema(): system, userdata and triggers SQL, then the item
        # types/fields/creator types (here the pre-global-schema rows Zotero's step 107 inserts).
        for name in ("system", "userdata", "triggers", "system-107"):
            con.executescript((SCHEMA / f"{name}.sql").read_text(encoding="utf-8"))
        con.executemany("REPLACE INTO version (schema, version) VALUES (?, ?)",
                        [("system", 32), ("userdata", 129), ("triggers", 18), ("compatibility", 9)])
        con.execute("INSERT INTO libraries (libraryID, type, editable, filesEditable) VALUES (1, 'user', 1, 1)")
        con.commit()
        self.con = con

    def key(self) -> str:
        return "".join(self.rng.choice(KEY_CHARS) for _ in range(8))

    def _id(self, table: str, column: str) -> int:
        return self.con.execute(f"SELECT COALESCE(MAX({column}) + 1, 1) FROM {table}").fetchone()[0]

    def item(self, item_type: str, fields: dict[str, str], creators=(), key: str | None = None) -> tuple[int, str]:
        con = self.con
        type_id = con.execute("SELECT itemTypeID FROM itemTypes WHERE typeName=?", (item_type,)).fetchone()[0]
        key = key or self.key()
        item_id = self._id("items", "itemID")
        con.execute("INSERT INTO items (itemID, itemTypeID, libraryID, key) VALUES (?, ?, 1, ?)", (item_id, type_id, key))
        for name, value in fields.items():
            self.set_field(item_id, name, value)
        for order, (ctype, first, last) in enumerate(creators):
            self.add_creator(item_id, ctype, first, last, order)
        con.commit()
        return item_id, key

    def set_field(self, item_id: int, name: str, value: str) -> None:
        con = self.con
        field_id = con.execute("SELECT fieldID FROM fields WHERE fieldName=?", (name,)).fetchone()[0]
        row = con.execute("SELECT valueID FROM itemDataValues WHERE value=?", (value,)).fetchone()
        value_id = row[0] if row else self._id("itemDataValues", "valueID")
        if not row:
            con.execute("INSERT INTO itemDataValues (valueID, value) VALUES (?, ?)", (value_id, value))
        con.execute("REPLACE INTO itemData (itemID, fieldID, valueID) VALUES (?, ?, ?)", (item_id, field_id, value_id))
        con.execute("UPDATE items SET dateModified=CURRENT_TIMESTAMP, clientDateModified=CURRENT_TIMESTAMP WHERE itemID=?", (item_id,))
        con.commit()

    def add_creator(self, item_id: int, ctype: str, first: str, last: str, order: int) -> None:
        con = self.con
        mode = 1 if not first else 0
        row = con.execute("SELECT creatorID FROM creators WHERE firstName=? AND lastName=? AND fieldMode=?", (first, last, mode)).fetchone()
        creator_id = row[0] if row else self._id("creators", "creatorID")
        if not row:
            con.execute("INSERT INTO creators (creatorID, firstName, lastName, fieldMode) VALUES (?, ?, ?, ?)", (creator_id, first, last, mode))
        type_id = con.execute("SELECT creatorTypeID FROM creatorTypes WHERE creatorType=?", (ctype,)).fetchone()[0]
        con.execute("INSERT INTO itemCreators (itemID, creatorID, creatorTypeID, orderIndex) VALUES (?, ?, ?, ?)",
                    (item_id, creator_id, type_id, order))

    def stored_pdf(self, parent: int, source: Path) -> int:
        """An imported attachment: storage/<attachment key>/<file name>, path "storage:<name>"."""
        att_id, key = self.item("attachment", {"title": "Full Text PDF"})
        (self.folder / "storage" / key).mkdir(parents=True)
        shutil.copy(source, self.folder / "storage" / key / source.name)
        self.con.execute("INSERT INTO itemAttachments (itemID, parentItemID, linkMode, contentType, path) VALUES (?, ?, 0, 'application/pdf', ?)",
                         (att_id, parent, f"storage:{source.name}"))
        self.con.commit()
        return att_id

    def linked_pdf(self, parent: int, path: Path) -> int:
        att_id, _ = self.item("attachment", {"title": path.name})
        self.con.execute("INSERT INTO itemAttachments (itemID, parentItemID, linkMode, contentType, path) VALUES (?, ?, 2, 'application/pdf', ?)",
                         (att_id, parent, str(path)))
        self.con.commit()
        return att_id

    def collection(self, name: str, parent: int | None = None) -> int:
        cid = self._id("collections", "collectionID")
        self.con.execute("INSERT INTO collections (collectionID, collectionName, parentCollectionID, libraryID, key) VALUES (?, ?, ?, 1, ?)",
                         (cid, name, parent, self.key()))
        self.con.commit()
        return cid

    def file_in(self, collection: int, item_id: int) -> None:
        self.con.execute("INSERT INTO collectionItems (collectionID, itemID) VALUES (?, ?)", (collection, item_id))
        self.con.commit()

    def tag(self, item_id: int, name: str, automatic: bool = False) -> None:
        row = self.con.execute("SELECT tagID FROM tags WHERE name=?", (name,)).fetchone()
        tag_id = row[0] if row else self._id("tags", "tagID")
        if not row:
            self.con.execute("INSERT INTO tags (tagID, name) VALUES (?, ?)", (tag_id, name))
        self.con.execute("INSERT INTO itemTags (itemID, tagID, type) VALUES (?, ?, ?)", (item_id, tag_id, int(automatic)))
        self.con.commit()

    def trash(self, item_id: int) -> None:
        self.con.execute("INSERT INTO deletedItems (itemID) VALUES (?)", (item_id,))
        self.con.commit()


@pytest.fixture
def zotero(tmp_path) -> tuple[ZoteroFixture, dict]:
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    # The PDFs' own title pages disagree with Zotero on purpose: Zotero's metadata must win.
    kestrel = make_paper(pdfs / "kestrel.pdf", "Draft Manuscript Kestrels", ["Someone Else"], KESTREL_PAGES)
    glacier = make_paper(pdfs / "glacier.pdf", "Glacier Retreat Measured by Drone Photogrammetry", ["Anil Gupta"], GLACIER_PAGES)
    trashed = make_paper(pdfs / "trashed.pdf", "A Paper In The Trash", ["Tim Trash"], ["# Abstract\n\nNothing to see here at all."])
    z = ZoteroFixture(tmp_path / "Zotero")
    ids = {}
    # Creators inserted out of order: orderIndex, not creator ID, decides the order.
    ids["kestrel"], ids["kestrel_key"] = z.item("journalArticle", {
        "title": "Kestrel Migration Timing in Alpine Valleys", "date": "2019-09-00 September 2019",
        "DOI": "10.1234/kestrel.2019", "publicationTitle": "Journal of Alpine Ornithology",
        "abstractNote": "When do kestrels leave the Alps?"})
    z.add_creator(ids["kestrel"], "editor", "Erik", "Editor", 2)
    z.add_creator(ids["kestrel"], "author", "Tomas", "Berg", 1)
    z.add_creator(ids["kestrel"], "author", "Maria", "Lindqvist", 0)
    z.stored_pdf(ids["kestrel"], kestrel)
    ids["glacier"], ids["glacier_key"] = z.item("conferencePaper", {
        "title": "Glacier Retreat Measured by Drone Photogrammetry", "date": "2021-00-00 2021",
        "proceedingsTitle": "Proceedings of the Glaciology Conference"},
        [("editor", "Ella", "Volume"), ("author", "Anil", "Gupta")])
    z.linked_pdf(ids["glacier"], glacier)
    ids["book"], _ = z.item("book", {"title": "Handbook of Raptors", "date": "2010"},
                            [("editor", "Hannah", "Hawk"), ("editor", "", "Raptor Society")])
    ids["gone"], _ = z.item("journalArticle", {"title": "Synced Elsewhere"}, [("author", "Nora", "Net")])
    att = z.stored_pdf(ids["gone"], trashed)
    shutil.rmtree(z.folder / "storage" / z.con.execute("SELECT key FROM items WHERE itemID=?", (att,)).fetchone()[0])
    ids["trash"], _ = z.item("journalArticle", {"title": "A Paper In The Trash"}, [("author", "Tim", "Trash")])
    z.stored_pdf(ids["trash"], trashed)
    z.trash(ids["trash"])
    birds = z.collection("Birds")
    raptors = z.collection("Raptors", birds)
    z.file_in(raptors, ids["kestrel"])
    z.file_in(z.collection("Glaciers"), ids["glacier"])
    z.tag(ids["kestrel"], "migration")
    z.tag(ids["kestrel"], "to-read", automatic=True)
    return z, ids


def importer_factory(desk):
    def make(entries, task):
        return Importer(desk.library, desk.embedder(), embedding_identity=desk.embedding_identity(), task=task, entries=entries)
    return make


class Recorder:
    def __init__(self) -> None:
        self.events = []
        self.task = Task(sink=self.events.append)

    def notices(self) -> list[str]:
        return [e.message for e in self.events if isinstance(e, Notice)]


# -- Zotero ------------------------------------------------------------------------------
@pytest.mark.slow
def test_zotero_import_metadata_collections_and_resync(make_desk, zotero, tmp_path):
    z, ids = zotero
    desk = make_desk(tmp_path / "lib")
    make = importer_factory(desk)
    rec = Recorder()
    report = import_zotero(make, z.folder, rec.task)
    assert report.count("imported") == 2 and report.ok, [o.message for o in report.outcomes]
    missing = {o.label: o.message for o in report.with_status("missing")}
    assert any("Handbook of Raptors" in label for label in missing) and any("no PDF attachment" in m for m in missing.values())
    assert any("Synced Elsewhere" in label and "does not exist" in m for label, m in missing.items())
    assert not any("Trash" in o.label for o in report.outcomes)  # items in Zotero's trash are left out
    assert any("no PDF" in n for n in rec.notices())

    papers = {p.source_key: p for p in desk.library.list_papers()}
    assert len(papers) == 2
    kestrel = papers[f"zotero:1:{ids['kestrel_key']}"]
    assert kestrel.title == "Kestrel Migration Timing in Alpine Valleys"  # Zotero's, not the PDF's
    assert kestrel.authors == ["Maria Lindqvist", "Tomas Berg"]  # orderIndex order, authors only
    assert (kestrel.published, kestrel.doi, kestrel.venue) == ("2019-09", "10.1234/kestrel.2019", "Journal of Alpine Ornithology")
    assert kestrel.abstract == "When do kestrels leave the Alps?"
    # Zotero's collections and tags come in apart (issue 53: both are shown and filterable).
    assert kestrel.tags == ["migration", "to-read"] and kestrel.collections == ["Birds/Raptors"]
    assert kestrel.status == "indexed" and desk.library.count_chunks(CONTENT_CHUNKS, kestrel.id) > 0
    assert desk.library.text_path(kestrel.id).read_text().startswith("# Kestrel Migration Timing")
    glacier = papers[f"zotero:1:{ids['glacier_key']}"]
    assert glacier.authors == ["Anil Gupta"] and glacier.published == "2021"
    assert glacier.venue == "Proceedings of the Glaciology Conference" and glacier.collections == ["Glaciers"] and glacier.tags == []

    # A second sync of the unchanged library imports and re-embeds nothing.
    chunks = desk.library.count_chunks(CONTENT_CHUNKS), desk.library.count_chunks(SUMMARY_CHUNKS)
    again = import_zotero(make, z.path, Task())
    assert again.count("imported") == 0 and again.count("updated") == 0 and again.count("unchanged") == 2
    assert again.pdfs is None  # no PDF went through the importer
    assert (desk.library.count_chunks(CONTENT_CHUNKS), desk.library.count_chunks(SUMMARY_CHUNKS)) == chunks

    # Labels the user adds by hand in the library survive the syncs; Zotero's follow Zotero.
    desk.set_labels([kestrel.id], tags=["cite in ch. 2"], collections=["Thesis/Chapter 2"], add=True)

    # A title changed in Zotero (and the item moved to another collection, a tag removed) syncs;
    # nothing re-imported.
    z.set_field(ids["kestrel"], "title", "Autumn Departure of Alpine Kestrels")
    z.file_in(z.collection("Favourites"), ids["kestrel"])
    z.con.execute("DELETE FROM itemTags WHERE itemID=? AND tagID=(SELECT tagID FROM tags WHERE name='to-read')", (ids["kestrel"],))
    z.con.commit()
    third = import_zotero(make, z.path, Task())
    assert third.count("updated") == 1 and third.count("unchanged") == 1 and third.pdfs is None
    updated = desk.library.get_paper(kestrel.id)
    assert updated.title == "Autumn Departure of Alpine Kestrels"
    assert sorted(updated.collections) == ["Birds/Raptors", "Favourites", "Thesis/Chapter 2"]
    assert sorted(updated.tags) == ["cite in ch. 2", "migration"]  # Zotero's "to-read" went, the hand tag stayed
    assert desk.library.count_chunks(CONTENT_CHUNKS) == chunks[0]
    profile = desk.library.chunks_table(SUMMARY_CHUNKS).search().where(f"paper_id = '{kestrel.id}' AND source_type = 'abstract'").limit(10).to_list()
    assert any("Autumn Departure" in r["text"] for r in profile)  # scoping sees the new title


@pytest.mark.slow
def test_zotero_pdf_already_imported_as_bare_file_takes_zotero_metadata(make_desk, zotero, tmp_path):
    z, ids = zotero
    desk = make_desk(tmp_path / "lib")
    bare = desk.add([tmp_path / "pdfs" / "kestrel.pdf"])
    assert bare.count("added") == 1
    before = desk.library.list_papers()[0]
    assert before.title != "Kestrel Migration Timing in Alpine Valleys" and before.source_key == ""
    report = import_zotero(importer_factory(desk), z.path, Task())
    assert report.count("updated") == 1 and report.count("imported") == 1, [o.message for o in report.outcomes]
    after = desk.library.get_paper(before.id)
    assert after.title == "Kestrel Migration Timing in Alpine Valleys"
    assert after.source_key == f"zotero:1:{ids['kestrel_key']}" and "Birds/Raptors" in after.collections
    assert len(desk.library.list_papers()) == 2  # no second copy of the kestrel paper


@pytest.mark.slow
def test_zotero_reads_while_zotero_holds_its_exclusive_lock(make_desk, zotero, tmp_path):
    z, ids = zotero
    z.con.close()
    # Zotero's own connection: WAL journal, exclusive locking, a committed change still in the WAL.
    zotero_con = sqlite3.connect(z.path)
    try:
        zotero_con.execute("PRAGMA journal_mode=WAL")
        zotero_con.execute("PRAGMA locking_mode=EXCLUSIVE")
        zotero_con.execute("PRAGMA wal_autocheckpoint=0")
        zotero_con.execute("UPDATE itemDataValues SET value='Kestrels, Revised' WHERE value='Kestrel Migration Timing in Alpine Valleys'")
        zotero_con.commit()
        assert Path(str(z.path) + "-wal").stat().st_size > 0
        with pytest.raises(sqlite3.OperationalError, match="locked"):  # what a direct reader gets
            sqlite3.connect(z.path, timeout=0.1).execute("SELECT COUNT(*) FROM items").fetchone()
        desk = make_desk(tmp_path / "lib")
        report = import_zotero(importer_factory(desk), z.path, Task())
        assert report.count("imported") == 2, [o.message for o in report.outcomes]
        titles = {p.title for p in desk.library.list_papers()}
        assert "Kestrels, Revised" in titles  # the change still in Zotero's WAL was read
    finally:
        zotero_con.close()


@pytest.mark.slow
def test_zotero_bad_databases_get_clear_messages(zotero, tmp_path):
    z, _ = zotero
    never = lambda entries, task: pytest.fail("nothing may be imported from an unusable database")  # noqa: E731
    with pytest.raises(ZoteroError, match=r"No Zotero database at .*nowhere"):
        import_zotero(never, tmp_path / "nowhere" / "zotero.sqlite")
    z.con.execute("UPDATE version SET version=60 WHERE schema='userdata'")
    z.con.commit()
    with pytest.raises(ZoteroError, match=r"unknown Zotero database version \(userdata 60\)"):
        import_zotero(never, z.path)
    z.con.execute("UPDATE version SET version=140 WHERE schema='userdata'")
    z.con.execute("UPDATE version SET version=12 WHERE schema='compatibility'")
    z.con.commit()
    with pytest.raises(ZoteroError, match=r"unknown Zotero database version .*compatibility 12"):
        import_zotero(never, z.path)
    (tmp_path / "other.sqlite").write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(ZoteroError, match="other.sqlite"):
        import_zotero(never, tmp_path / "other.sqlite")


@pytest.mark.slow
def test_zotero_locked_copy_gives_clear_message(zotero, tmp_path, monkeypatch):
    """A file that cannot be opened for reading (Windows shares the locked database with no one)."""
    z, _ = zotero
    import app.core.importers.zotero as zmod

    def refuse(src, dst):
        raise PermissionError(13, "The process cannot access the file because it is being used by another process")

    monkeypatch.setattr(zmod.shutil, "copyfile", refuse)
    with pytest.raises(ZoteroError, match=r"zotero.sqlite: the database is locked"):
        import_zotero(lambda e, t: None, z.path)


def test_zotero_dates():
    assert zotero_date("2019-03-00 March 2019") == "2019-03"
    assert zotero_date("2019-03-14 14.3.2019") == "2019-03-14"
    assert zotero_date("2019-00-00 2019") == "2019"
    assert zotero_date("Spring 1998") == "1998"
    assert zotero_date("") == ""


# -- BibTeX ----------------------------------------------------------------------------------
BIB = r"""
@article{lindqvist2019,
  title = {Kestrel Migration Timing in Alpine {V}alleys},
  author = {Lindqvist, Maria and Berg, Tomas},
  journal = {Journal of Alpine Ornithology},
  year = {2019}, month = sep,
  doi = {10.1234/kestrel.2019},
  keywords = {birds, migration},
  file = {Full Text:files/kestrel.pdf:application/pdf;Supplement:files/kestrel-supp.pdf:PDF},
}

@inproceedings{gupta2021,
  title = {Glacier Retreat Measured by Drone Photogrammetry},
  author = {Gupta, Anil},
  booktitle = {Proceedings of the Glaciology Conference},
  year = 2021,
}

@article{broken2020,
  title = {A Broken Entry,
  author = {Nobody, Jane},

@book{missing2010,
  title = {Handbook of Raptors},
  editor = {Hawk, Hannah},
  year = {2010},
  file = {:files/handbook.pdf:PDF},
}
"""


def test_bibtex_file_field_pdf_beside_missing_and_broken(make_desk, tmp_path):
    folder = tmp_path / "refs"
    (folder / "files").mkdir(parents=True)
    make_paper(folder / "files" / "kestrel.pdf", "Draft Manuscript Kestrels", ["Someone Else"], KESTREL_PAGES)
    make_paper(folder / "gupta2021.pdf", "Untitled", [], GLACIER_PAGES)  # named by the citation key
    bib = folder / "library.bib"
    bib.write_text(BIB, encoding="utf-8")
    desk = make_desk(tmp_path / "lib")
    rec = Recorder()
    report = import_bibliography(importer_factory(desk), bib, rec.task)
    assert report.count("imported") == 2, [o.message for o in report.outcomes]
    failed = report.with_status("failed")
    assert len(failed) == 1 and "broken2020" in failed[0].message and "library.bib, line" in failed[0].message
    missing = report.with_status("missing")
    assert len(missing) == 1 and "missing2010" in missing[0].label
    assert "files/handbook.pdf does not exist" in missing[0].message and "missing2010.pdf" in missing[0].message
    assert any("broken2020" in n for n in rec.notices())

    papers = {p.source_key: p for p in desk.library.list_papers()}
    kestrel = papers["bibtex:lindqvist2019"]
    assert kestrel.title == "Kestrel Migration Timing in Alpine Valleys"
    assert kestrel.authors == ["Maria Lindqvist", "Tomas Berg"]
    assert (kestrel.published, kestrel.doi, kestrel.venue) == ("2019-09", "10.1234/kestrel.2019", "Journal of Alpine Ornithology")
    assert kestrel.tags == ["birds", "migration"]
    glacier = papers["bibtex:gupta2021"]
    assert glacier.authors == ["Anil Gupta"] and glacier.venue == "Proceedings of the Glaciology Conference"

    again = import_bibliography(importer_factory(desk), bib, Task())
    assert again.count("imported") == 0 and again.count("unchanged") == 2


def test_bibtex_unreadable_file_and_file_field_forms(tmp_path):
    with pytest.raises(BibliographyError, match="No file at .*absent.bib"):
        import_bibliography(lambda e, t: None, tmp_path / "absent.bib")
    assert file_field_paths("Full Text PDF:/home/u/Zotero/storage/AB12CD34/x.pdf:application/pdf") == ["/home/u/Zotero/storage/AB12CD34/x.pdf"]
    assert file_field_paths(r":C\:/Users/me/Mendeley/x.pdf:pdf") == ["C:/Users/me/Mendeley/x.pdf"]
    assert file_field_paths("a.pdf;Supp:b/c.pdf:PDF") == ["a.pdf", "b/c.pdf"]


# -- RIS -----------------------------------------------------------------------------------------
RIS = """TY  - JOUR
ID  - mueller2018
TI  - Gletscherrückgang in den Ötztaler Alpen
AU  - Müller, Jürgen
AU  - Søren, Åsa
PY  - 2018/05/01
JO  - Zeitschrift für Glaziologie
DO  - 10.5555/gletscher.2018
AB  - Der Rückgang wird mit Drohnen gemessen.
L1  - glacier.pdf
KW  - Gletscher
ER  - 

TY  - JOUR
ID  - nopdf2001
TI  - Über fehlende Dateien
AU  - Ohne, Datei
PY  - 2001
ER  - 
"""


def test_ris_in_cp1252(make_desk, tmp_path):
    folder = tmp_path / "ris"
    folder.mkdir()
    make_paper(folder / "glacier.pdf", "Untitled Draft", [], GLACIER_PAGES)
    ris = folder / "export.ris"
    ris.write_bytes(RIS.replace("\n", "\r\n").encode("cp1252"))
    with pytest.raises(UnicodeDecodeError):
        ris.read_bytes().decode("utf-8")  # the file really is not UTF-8
    desk = make_desk(tmp_path / "lib")
    rec = Recorder()
    report = import_bibliography(importer_factory(desk), ris, rec.task)
    assert report.count("imported") == 1 and report.count("missing") == 1, [o.message for o in report.outcomes]
    assert any("read it as cp1252" in n for n in report.notes) and any("cp1252" in n for n in rec.notices())
    assert "nopdf2001" in report.with_status("missing")[0].label
    paper = desk.library.list_papers()[0]
    assert paper.title == "Gletscherrückgang in den Ötztaler Alpen"
    assert paper.authors == ["Jürgen Müller", "Åsa Søren"]
    assert (paper.published, paper.doi, paper.venue) == ("2018-05", "10.5555/gletscher.2018", "Zeitschrift für Glaziologie")
    assert paper.source_key == "ris:mueller2018" and paper.tags == ["Gletscher"]
