"""Read .bib (bibtexparser v2) and .ris (rispy) files into source entries.

An entry's PDF is the first PDF its `file` field names (BibTeX: JabRef's
"Description:path:Type", Zotero/Better BibTeX and Mendeley forms, ";"-separated lists, escaped
"\\:" in Windows paths; RIS: L1 / file attachment lines), relative paths read from the .bib's
folder; failing that, a PDF beside the file named by the citation key ("smith2020.pdf", also in
a "pdfs/" or "papers/" folder there). Entries without a PDF come back with `missing` saying
where it was looked for; broken entries come back as problems naming them.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse

from ..errors import ResearchDeskError
from ..records import PaperMeta
from .records import SourceEntry

log = logging.getLogger(__name__)

TEXT_ENCODINGS = ("utf-8", "utf-8-sig", "cp1252", "latin-1")  # latin-1 decodes any byte: the last resort
NEXT_TO_FOLDERS = ("", "pdfs", "papers", "files")
_VENUE_BIB = ("journal", "journaltitle", "booktitle", "series", "school", "institution", "publisher", "eventtitle")
_MONTHS = {m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1)}


class BibliographyError(ResearchDeskError):
    """The bibliography file cannot be read at all."""


@dataclass
class Bibliography:
    """The entries of one file, the entries that could not be read, and notes about the file."""

    path: Path
    entries: list[SourceEntry] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (label, message)
    notes: list[str] = field(default_factory=list)


# -- shared: finding the PDF ---------------------------------------------------------------
def file_field_paths(value: str) -> list[str]:
    """The paths a `file` field names, in order (JabRef/Zotero/Mendeley forms)."""
    paths = []
    for item in re.split(r"(?<!\\);", value):
        item = item.strip()
        if not item:
            continue
        parts = re.split(r"(?<!\\):", item)
        if len(parts) >= 3:
            # Description:path:Type, the path possibly holding a drive letter "C:" split off too.
            path = ":".join(parts[1:-1])
        elif len(parts) == 2 and re.fullmatch(r"[A-Za-z]", parts[0]):
            path = item  # a bare Windows path "C:\\x.pdf"
        elif len(parts) == 2:
            path = parts[1] if parts[1].lower().endswith(".pdf") or "/" in parts[1] else parts[0]
        else:
            path = item
        path = path.replace("\\:", ":").replace("\\;", ";").replace("\\\\", "\\").strip()
        if path.startswith("file://"):
            path = unquote(urlparse(path).path)
        if path:
            paths.append(path)
    return paths


def find_pdf(folder: Path, named: list[str], key: str) -> tuple[Path | None, str]:
    """The entry's PDF, or None and where it was looked for."""
    looked = []
    for raw in named:
        candidate = Path(raw).expanduser()
        if not candidate.is_absolute():
            candidate = folder / candidate
        if candidate.suffix.lower() != ".pdf" and candidate.is_file():
            looked.append(f"{raw} is not a PDF")
            continue
        if candidate.is_file():
            return candidate, ""
        looked.append(f"{raw} does not exist")
    if key:
        safe = re.sub(r"[\\/:]", "_", key)
        for sub in NEXT_TO_FOLDERS:
            candidate = folder / sub / f"{safe}.pdf"
            if candidate.is_file():
                return candidate, ""
        looked.append(f"no {safe}.pdf beside the file")
    return None, "; ".join(looked) or "no file field"


def _year_month(year: str, month: str = "") -> str:
    m = re.search(r"\d{4}", year or "")
    if not m:
        return ""
    month = (month or "").strip().lower()[:3]
    number = _MONTHS.get(month) or (int(month) if month.isdigit() and 1 <= int(month) <= 12 else 0)
    return f"{m.group(0)}-{number:02d}" if number else m.group(0)


# -- BibTeX -----------------------------------------------------------------------------
def read_bibtex(path: str | Path) -> Bibliography:
    import bibtexparser
    from bibtexparser.middlewares import LatexDecodingMiddleware, MergeNameParts, SeparateCoAuthors, SplitNameParts

    path = Path(path).expanduser()
    text, encoding = _read_text(path, TEXT_ENCODINGS)
    raw_files = _raw_fields(text, "file")  # before LaTeX decoding, which would eat the backslashes
    library = bibtexparser.parse_string(text, append_middleware=[
        LatexDecodingMiddleware(), SeparateCoAuthors(), SplitNameParts(), MergeNameParts(style="first")])
    out = Bibliography(path)
    if encoding not in ("utf-8", "utf-8-sig"):
        out.notes.append(f"{path.name} is not UTF-8; read it as {encoding}.")
    for block in library.failed_blocks:
        key = getattr(block, "key", "") or _key_of(block.raw)
        line = getattr(block, "start_line", None)
        label = f"{key or 'entry'} ({path.name}, line {line + 1 if line is not None else '?'})"
        reason = _failure_reason(block)
        out.problems.append((label, f"{label}: {reason}; it was not imported"))
    for entry in library.entries:
        label = f"{entry.key} ({path.name}, line {entry.start_line + 1})"
        values = {f.key.lower(): f.value for f in entry.fields}
        authors = values.get("author") or values.get("editor") or []
        if isinstance(authors, str):
            authors = [a.strip() for a in authors.split(" and ") if a.strip()]
        meta = PaperMeta(
            title=_clean(values.get("title", "")),
            authors=[_clean(a) for a in authors if _clean(a)],
            published=_date(values),
            abstract=_clean(values.get("abstract", "")),
            doi=_doi(values.get("doi", "")),
            arxiv_id=_arxiv_bib(values),
            venue=next((_clean(values[k]) for k in _VENUE_BIB if _clean(values.get(k, ""))), ""),
        )
        named = file_field_paths(raw_files.get(entry.key, "") or str(values.get("file", "")))
        pdf, missing = find_pdf(path.parent, named, entry.key)
        tags = [t.strip() for t in re.split(r"[;,]", str(values.get("keywords", ""))) if t.strip()]
        out.entries.append(SourceEntry(f"bibtex:{entry.key}", label, meta, pdf, tags, missing))
    return out


def _raw_fields(text: str, name: str) -> dict[str, str]:
    """key → the raw value of one field, read without LaTeX decoding (paths keep their "\\")."""
    import bibtexparser

    raw = bibtexparser.parse_string(text, parse_stack=[])
    out = {}
    for entry in raw.entries:
        for f in entry.fields:
            if f.key.lower() == name and isinstance(f.value, str):
                out[entry.key] = f.value.strip().removeprefix("{").removesuffix("}").strip('"')
    return out


def _key_of(raw: str) -> str:
    m = re.match(r"\s*@\s*\w+\s*[{(]\s*([^,\s]+)", raw or "")
    return m.group(1) if m else ""


def _failure_reason(block) -> str:
    error = getattr(block, "error", None)
    name = type(block).__name__
    if name == "DuplicateBlockKeyBlock":
        return "the same citation key appears twice; the second entry"
    text = (getattr(error, "abort_reason", "") or str(error or "")).strip()
    if text:
        return f"cannot be read ({text.splitlines()[0].strip()})"
    return "cannot be read (unbalanced braces or a missing comma?)"


def _clean(value) -> str:
    text = str(value or "")
    return " ".join(text.replace("{", "").replace("}", "").split())


def _date(values: dict) -> str:
    date = str(values.get("date", ""))
    if re.match(r"\d{4}(-\d{2}){0,2}$", date):
        return date
    return _year_month(str(values.get("year", "")), str(values.get("month", "")))


def _doi(value) -> str:
    text = _clean(value)
    m = re.search(r"10\.\d{4,9}/\S+", text)
    return m.group(0) if m else ""


def _arxiv_bib(values: dict) -> str:
    prefix = _clean(values.get("archiveprefix", values.get("eprinttype", ""))).lower()
    eprint = _clean(values.get("eprint", ""))
    if eprint and (prefix == "arxiv" or re.fullmatch(r"\d{4}\.\d{4,5}(v\d+)?", eprint)):
        return eprint
    return ""


# -- RIS ----------------------------------------------------------------------------------
def read_ris(path: str | Path) -> Bibliography:
    import rispy

    path = Path(path).expanduser()
    text, encoding = _read_text(path, TEXT_ENCODINGS)
    out = Bibliography(path)
    if encoding not in ("utf-8", "utf-8-sig"):
        out.notes.append(f"{path.name} is not UTF-8; read it as {encoding}.")
    try:
        records = rispy.loads(text, list_tags=[*rispy.LIST_TYPE_TAGS, "L1", "L2"])
    except Exception as exc:  # noqa: BLE001 - rispy raises plain IOError/ValueError alike
        raise BibliographyError(f"{path}: not a RIS file ({exc}).", "Export the references as RIS (.ris) again.") from exc
    for number, rec in enumerate(records, 1):
        rid = str(rec.get("id") or "").strip()
        title = _clean(rec.get("title") or rec.get("primary_title") or rec.get("translated_title") or "")
        label = f"{rid or f'record {number}'} “{title[:50]}” ({path.name})"
        authors = [a.strip() for a in (rec.get("authors") or rec.get("first_authors") or []) if a.strip()]
        if not title and not authors:
            out.problems.append((label, f"{label}: has neither title nor authors (a broken record?); it was not imported"))
            continue
        meta = PaperMeta(
            title=title,
            authors=[_ris_name(a) for a in authors],
            published=_ris_date(rec),
            abstract=_clean(rec.get("abstract") or rec.get("notes_abstract") or ""),
            doi=_doi(rec.get("doi", "")),
            venue=_clean(rec.get("journal_name") or rec.get("secondary_title") or rec.get("alternate_title3") or ""),
        )
        named = []
        for key in ("file_attachments1", "file_attachments2"):
            value = rec.get(key) or []
            named += [v.strip() for v in (value if isinstance(value, list) else [value]) if v and v.strip()]
        named = [n.removeprefix("internal-pdf://") for n in named]
        pdf, missing = find_pdf(path.parent, named, rid)
        tags = [k.strip() for k in rec.get("keywords") or [] if k.strip()]
        source_key = f"ris:{rid}" if rid else f"ris:{path.name}:{number}"
        out.entries.append(SourceEntry(source_key, label, meta, pdf, tags, missing))
    return out


def _ris_name(name: str) -> str:
    """RIS names are "Last, First": written "First Last" like the rest of the library."""
    if "," in name:
        last, first = (p.strip() for p in name.split(",", 1))
        return f"{first} {last}".strip()
    return name


def _ris_date(rec: dict) -> str:
    for key in ("date", "year", "publication_year"):
        value = str(rec.get(key) or "")
        m = re.match(r"(\d{4})(?:[/-](\d{1,2}))?", value)
        if m:
            return m.group(1) + (f"-{int(m.group(2)):02d}" if m.group(2) and 1 <= int(m.group(2)) <= 12 else "")
    return ""


def _read_text(path: Path, encodings: tuple[str, ...]) -> tuple[str, str]:
    if not path.is_file():
        raise BibliographyError(f"No file at {path}.", "Check the path of the .bib/.ris file.")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BibliographyError(f"{path}: cannot read ({exc.strerror or exc}).") from exc
    for encoding in encodings:
        try:
            return data.decode(encoding).removeprefix("\ufeff"), encoding
        except UnicodeDecodeError:
            continue
    raise BibliographyError(f"{path}: unknown text encoding.")  # unreachable with latin-1 last
