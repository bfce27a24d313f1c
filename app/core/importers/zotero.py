"""Read a Zotero library (zotero.sqlite and its storage/ folder) into source entries.

Safe while Zotero runs: Zotero keeps its database in WAL mode with an exclusive lock, so
another program that opens the file (even read-only) gets "database is locked", and a file
opened with `immutable=1` would skip the changes still in the -wal file. So the database and
its -wal/-journal companions are copied into a temporary folder and the copy is opened: the
copy replays the WAL (the newest committed data), Zotero's file is never opened by SQLite, and
nothing can be written back to it. A copy taken while Zotero checkpoints can be torn; it is
compared before and after and taken again, and checked with `PRAGMA quick_check`.

What is read, by name (field and creator-type IDs differ between databases): title, creators
in order (authors; editors or the item type's primary creators where there are no authors),
date (Zotero stores "YYYY-MM-DD original text"), DOI, venue (publication, proceedings or book
title, …), abstract, arXiv ID (preprint archive ID, Extra or URL); collections with their
parents' names as tags ("Parent/Child"), plus the item's Zotero tags. Items in the trash are
left out. The first PDF attachment of an item is its paper (stored files are under
storage/<attachment key>/, linked files are absolute or relative to the base directory set in
Zotero's preferences, which is not in the database: pass it as `attachments_base`).
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import sqlite3
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import ResearchDeskError
from ..records import PaperMeta
from .records import SourceEntry

log = logging.getLogger(__name__)

DEFAULT_DATABASE = Path("~/Zotero/zotero.sqlite")

# Zotero 5.0 (userdata 80) gave the tables read here their present form (creators merged with
# creatorData, item keys, libraries). Zotero raises 'compatibility' exactly when older programs
# must no longer read a database; 9 is the newest value this reader was checked against
# (_maxCompatibility in schema.js; userdata 129).
MIN_USERDATA = 80
MAX_COMPATIBILITY = 9
TESTED_USERDATA = 129
REQUIRED_TABLES = (
    "items", "itemTypes", "fields", "itemData", "itemDataValues", "creators", "itemCreators",
    "creatorTypes", "itemAttachments", "collections", "collectionItems", "tags", "itemTags",
    "deletedItems", "version",
)
LINK_IMPORTED_FILE, LINK_IMPORTED_URL, LINK_LINKED_FILE = 0, 1, 2
NOT_PAPERS = {"note", "attachment", "annotation"}
VENUE_FIELDS = ("publicationTitle", "proceedingsTitle", "bookTitle", "conferenceName", "repository",
                "university", "institution", "websiteTitle")
_ARXIV = re.compile(r"(?:arxiv[:\s/]*|arxiv\.org/(?:abs|pdf)/)(\d{4}\.\d{4,5}(?:v\d+)?|[a-z\-]+(?:\.[A-Z]{2})?/\d{7}(?:v\d+)?)", re.I)
_DOI_IN_EXTRA = re.compile(r"^\s*DOI:\s*(10\.\S+)", re.I | re.M)


class ZoteroError(ResearchDeskError):
    """The Zotero database cannot be read at all."""


@dataclass
class ZoteroLibrary:
    """What was read: entries (with or without a PDF) and where from."""

    database: Path
    entries: list[SourceEntry]
    userdata_version: int
    notes: list[str]


def read_zotero(database: str | Path | None = None, *, attachments_base: str | Path | None = None) -> ZoteroLibrary:
    """Read a Zotero library; raises ZoteroError for a database that cannot be used at all."""
    path = Path(database or DEFAULT_DATABASE).expanduser()
    if path.is_dir():
        path = path / "zotero.sqlite"
    if not path.is_file():
        raise ZoteroError(f"No Zotero database at {path}.",
                          "Pass the zotero.sqlite file or the Zotero data folder (Zotero → Settings → Advanced → Files and Folders).")
    with tempfile.TemporaryDirectory(prefix="rd-zotero-") as tmp:
        copy = _snapshot(path, Path(tmp))
        try:
            con = sqlite3.connect(copy)
        except sqlite3.Error as exc:
            raise ZoteroError(f"{path}: cannot open the database ({exc}).") from exc
        try:
            return _read(con, path, Path(attachments_base).expanduser() if attachments_base else None)
        except sqlite3.DatabaseError as exc:
            raise ZoteroError(f"{path}: the database cannot be read ({exc}).",
                              "Check it in Zotero (Settings → Advanced → Files and Folders → Check Database Integrity).") from exc
        finally:
            con.close()


# -- a consistent copy ---------------------------------------------------------------
def _snapshot(path: Path, folder: Path, attempts: int = 3) -> Path:
    """Copy the database with its -wal/-journal files, again if it changed during the copy."""
    target = folder / path.name
    for attempt in range(attempts):
        before = _stamp(path)
        try:
            for suffix in ("", "-wal", "-journal"):
                source = Path(str(path) + suffix)
                dest = Path(str(target) + suffix)
                dest.unlink(missing_ok=True)
                if source.exists():
                    shutil.copyfile(source, dest)
        except PermissionError as exc:
            raise ZoteroError(f"{path}: the database is locked or not readable ({exc.strerror}).",
                              "Close Zotero and try again, or check the file's permissions.") from exc
        except OSError as exc:
            raise ZoteroError(f"{path}: cannot copy the database ({exc.strerror or exc}).") from exc
        if _stamp(path) == before and _intact(target):
            return target
        log.info("%s changed while it was copied (attempt %d); copying again", path, attempt + 1)
        time.sleep(0.2 * (attempt + 1))
    raise ZoteroError(f"{path}: the database is locked: Zotero kept writing to it while it was read.",
                      "Try again in a moment, or close Zotero first.")


def _stamp(path: Path) -> tuple:
    out = []
    for suffix in ("", "-wal", "-journal"):
        try:
            st = os.stat(str(path) + suffix)
            out.append((st.st_size, st.st_mtime_ns))
        except FileNotFoundError:
            out.append(None)
    return tuple(out)


def _intact(copy: Path) -> bool:
    try:
        con = sqlite3.connect(copy)
        try:
            return con.execute("PRAGMA quick_check").fetchone()[0] == "ok"
        finally:
            con.close()
    except sqlite3.DatabaseError as exc:
        if "not a database" in str(exc) or "malformed" in str(exc):
            log.warning("copy of %s is not readable: %s", copy, exc)
            return False
        raise


# -- reading -----------------------------------------------------------------------------
def _read(con: sqlite3.Connection, path: Path, base: Path | None) -> ZoteroLibrary:
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "version" not in tables or "items" not in tables:
        raise ZoteroError(f"{path} is not a Zotero database (it has no Zotero tables).",
                          "Pass zotero.sqlite from the Zotero data folder.")
    versions = dict(con.execute("SELECT schema, version FROM version"))
    userdata = int(versions.get("userdata", 0) or 0)
    compat = int(versions.get("compatibility", 0) or 0)
    if userdata < MIN_USERDATA:
        raise ZoteroError(f"{path}: unknown Zotero database version (userdata {userdata or 'missing'}); "
                          f"versions {MIN_USERDATA} (Zotero 5.0) and later are supported.",
                          "Open the library once in a current Zotero to upgrade it.")
    if compat > MAX_COMPATIBILITY:
        raise ZoteroError(f"{path}: unknown Zotero database version (userdata {userdata}, compatibility {compat}): "
                          f"made by a newer Zotero whose layout this version cannot read (up to compatibility {MAX_COMPATIBILITY}).",
                          "Update Research Desk, or export the library as BibTeX with files and use `add --bib`.")
    missing = [t for t in REQUIRED_TABLES if t not in tables]
    if missing:
        raise ZoteroError(f"{path}: unknown Zotero database layout (no table {', '.join(missing)}).")
    notes = []
    if userdata > TESTED_USERDATA:
        notes.append(f"Zotero database version {userdata} is newer than the tested {TESTED_USERDATA}; read it as compatible (compatibility {compat}).")
    data_dir = path.parent
    trashed = {r[0] for r in con.execute("SELECT itemID FROM deletedItems")}
    items = {
        item_id: (key, library_id, type_name or "")
        for item_id, key, library_id, type_name in con.execute(
            "SELECT i.itemID, i.key, i.libraryID, t.typeName FROM items i LEFT JOIN itemTypes t USING (itemTypeID)")
        if item_id not in trashed
    }
    fields: dict[int, dict[str, str]] = {}
    for item_id, name, value in con.execute(
        "SELECT d.itemID, f.fieldName, v.value FROM itemData d JOIN fields f USING (fieldID) "
        "JOIN itemDataValues v USING (valueID)"
    ):
        fields.setdefault(item_id, {})[name] = "" if value is None else str(value)
    creators: dict[int, list[tuple[str, str]]] = {}
    for item_id, first, last, mode, ctype in con.execute(
        "SELECT ic.itemID, c.firstName, c.lastName, c.fieldMode, ct.creatorType FROM itemCreators ic "
        "JOIN creators c USING (creatorID) JOIN creatorTypes ct USING (creatorTypeID) ORDER BY ic.itemID, ic.orderIndex"
    ):
        name = (last or "").strip() if mode == 1 else " ".join(p for p in ((first or "").strip(), (last or "").strip()) if p)
        creators.setdefault(item_id, []).append((ctype, name))
    primary = _primary_creator_types(con, tables)
    tags: dict[int, list[str]] = {}
    for item_id, name in con.execute("SELECT it.itemID, t.name FROM itemTags it JOIN tags t USING (tagID) ORDER BY t.name"):
        tags.setdefault(item_id, []).append(name)
    collections: dict[int, list[str]] = {}
    for item_id, collection in _collection_paths(con, tables):
        collections.setdefault(item_id, []).append(collection)
    pdfs: dict[int, list[tuple[int, Path | None, str]]] = {}  # parent (or itself) → [(attachment id, file, why not)]
    for att_id, parent, mode, ctype, att_path in con.execute(
        "SELECT itemID, parentItemID, linkMode, contentType, path FROM itemAttachments ORDER BY itemID"
    ):
        if att_id not in items or (parent is not None and parent not in items):
            continue
        if ctype != "application/pdf" and not (att_path or "").lower().endswith(".pdf"):
            continue
        file, why = _attachment_file(data_dir, items[att_id][0], mode, att_path, base)
        pdfs.setdefault(parent if parent is not None else att_id, []).append((att_id, file, why))

    entries = []
    for item_id, (key, library_id, type_name) in sorted(items.items()):
        standalone = type_name == "attachment" and item_id in pdfs
        if type_name in NOT_PAPERS and not standalone:
            continue
        values = fields.get(item_id, {})
        meta = _meta(values, creators.get(item_id, []), primary.get(type_name, set()))
        title = meta.title or f"Zotero item {key}"
        if standalone:
            # A PDF with no parent item: its "title" is a file name or "Full Text PDF", so the
            # metadata comes from the PDF itself; Zotero still gives its collections and tags.
            meta = PaperMeta()
        label = f"Zotero item {key} “{_short(title)}”"
        found = pdfs.get(item_id, [])
        file = next((f for _, f, _ in found if f is not None), None)
        why = "; ".join(w for _, f, w in found if w) or "no PDF attachment"
        entries.append(SourceEntry(f"zotero:{library_id}:{key}", label, meta, file, list(dict.fromkeys(tags.get(item_id, []))),
                                   "" if file else why, list(dict.fromkeys(collections.get(item_id, [])))))
    return ZoteroLibrary(path, entries, userdata, notes)


def _meta(values: dict[str, str], creators: list[tuple[str, str]], primary: set[str]) -> PaperMeta:
    authors = [n for t, n in creators if t == "author" and n]
    if not authors:
        authors = [n for t, n in creators if t in primary and n] or [n for t, n in creators if t == "editor" and n]
    extra = values.get("extra", "")
    doi = values.get("DOI", "") or (_DOI_IN_EXTRA.search(extra).group(1) if _DOI_IN_EXTRA.search(extra) else "")
    arxiv = ""
    for text in (values.get("archiveID", ""), extra, values.get("url", "")):
        m = _ARXIV.search(text)
        if m:
            arxiv = m.group(1)
            break
    return PaperMeta(
        title=values.get("title", "").strip(),
        authors=authors,
        published=zotero_date(values.get("date", "")),
        abstract=values.get("abstractNote", "").strip(),
        doi=doi.strip(),
        arxiv_id=arxiv,
        venue=next((values[f].strip() for f in VENUE_FIELDS if values.get(f, "").strip()), ""),
    )


def zotero_date(value: str) -> str:
    """Zotero's multipart date "2019-03-00 March 2019" → "2019-03"; free text → its year."""
    m = re.match(r"^(\d{4})-(\d{2})-(\d{2})(?:\s|$)", value)
    if m:
        year, month, day = m.groups()
        if year == "0000":
            return ""
        return year + (f"-{month}" if month != "00" else "") + (f"-{day}" if month != "00" and day != "00" else "")
    m = re.search(r"\b(1[5-9]\d\d|20\d\d)\b", value)
    return m.group(1) if m else ""


def _primary_creator_types(con: sqlite3.Connection, tables: set[str]) -> dict[str, set[str]]:
    if "itemTypeCreatorTypes" not in tables:
        return {}
    out: dict[str, set[str]] = {}
    for type_name, creator_type in con.execute(
        "SELECT t.typeName, ct.creatorType FROM itemTypeCreatorTypes x JOIN itemTypes t USING (itemTypeID) "
        "JOIN creatorTypes ct USING (creatorTypeID) WHERE x.primaryField = 1"
    ):
        out.setdefault(type_name, set()).add(creator_type)
    return out


def _collection_paths(con: sqlite3.Connection, tables: set[str]) -> list[tuple[int, str]]:
    """(item, "Parent/Child") for each collection an item is in; trashed collections left out."""
    gone = {r[0] for r in con.execute("SELECT collectionID FROM deletedCollections")} if "deletedCollections" in tables else set()
    rows = {cid: (name, parent) for cid, name, parent in con.execute(
        "SELECT collectionID, collectionName, parentCollectionID FROM collections")}

    def path_of(cid: int) -> str | None:
        names, seen = [], set()
        while cid is not None and cid not in seen:  # `seen`: a damaged parent cycle ends the walk
            if cid in gone or cid not in rows:
                return None
            seen.add(cid)
            name, cid = rows[cid]
            names.append(name.replace("/", "∕"))  # a "/" inside a name must not read as nesting
        return "/".join(reversed(names))

    paths = {cid: path_of(cid) for cid in rows}
    return [(item_id, paths[cid]) for cid, item_id in con.execute(
        "SELECT collectionID, itemID FROM collectionItems ORDER BY orderIndex") if paths.get(cid)]


def _attachment_file(data_dir: Path, key: str, mode: int, stored: str | None, base: Path | None) -> tuple[Path | None, str]:
    """The attachment's file on disk, or None with the reason."""
    stored = stored or ""
    if mode in (LINK_IMPORTED_FILE, LINK_IMPORTED_URL):
        if not stored.startswith("storage:"):
            return None, f"stored attachment {key} has no file name"
        file = data_dir / "storage" / key / stored[len("storage:"):]
    elif mode == LINK_LINKED_FILE:
        if stored.startswith("attachments:"):
            if base is None:
                return None, (f"linked file {stored[len('attachments:'):]!s} is relative to Zotero's base directory; "
                              "pass that folder (Zotero → Settings → Advanced → Files and Folders)")
            file = base / stored[len("attachments:"):]
        else:
            file = Path(stored)
    else:
        return None, f"attachment {key} is a link to a web page, not a file"
    if not file.is_file():
        return None, f"{file} does not exist (not synced or moved?)"
    return file, ""


def _short(title: str, limit: int = 60) -> str:
    return title if len(title) <= limit else title[: limit - 1] + "…"
