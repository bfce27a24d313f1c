"""Put the readers together: the page decides, the PDF's own metadata only confirms or fills.

Producer tools fill the info dictionary with "Administrator", "Microsoft Word - draft3.docx"
or a plot's file name, so a metadata value is used only where the page prints it too, or where
the page gave nothing (then it is marked unsure).
"""

from __future__ import annotations

import logging
import re

import pymupdf

from ...records import PaperMeta
from . import abstract as abstract_reader
from . import authors as author_reader
from . import dates, doi_sources, identifiers, title as title_reader, venue as venue_reader
from .layout import TEXT_FLAGS, Front, Line, read_front
from .text import clean, key, letters

log = logging.getLogger(__name__)

_HEADING = re.compile(r"^(?:\d+\.?\s+|[IVX]+\.\s+)?(?:introduction|background|keywords?|key words|index terms)\b", re.I)


def _front_end(front: Front, after: float, abstract_y: float) -> float:
    """Where the front matter (title, authors, affiliations) ends on the article's first page."""
    end = abstract_y if abstract_y > after else front.page_height * 0.75
    for ln in front.lines:
        if after < ln.y0 < end and _HEADING.match(ln.text) and len(ln.text) < 60:
            end = ln.y0
    return end


def _authors(front: Front, region: list[Line], info_author: str) -> tuple[list[str], bool]:
    """(authors, unsure)."""
    page = author_reader.from_layout(region)
    # The dictionary's names as the page prints them, where it does ("Grschow Sabine": "Sabine Grüschow").
    meta = author_reader.as_printed(author_reader.split_metadata_authors(info_author),
                                    " ".join(ln.text for ln in front.lines).split())
    if page and meta:
        page_keys = [key(n.split()[-1]) for n in page]
        meta_keys = [key(n.split()[-1]) for n in meta]
        all_text = key(front.all_text)
        if page_keys == meta_keys:
            return page, False
        # The page reading missed names the metadata lists, and the page prints them all.
        if len(meta) > len(page) and all(k in meta_keys for k in page_keys) and all(k in all_text for k in meta_keys):
            return meta, True
        return page, len(page) == 1
    if page:
        return page, len(page) == 1 and len(region) > 6
    if meta and all(key(n.split()[-1]) in key(front.all_text) for n in meta):
        return meta, True
    return [], True


def read(doc: pymupdf.Document, filename: str) -> PaperMeta:
    info = {k: clean(v or "") for k, v in (doc.metadata or {}).items() if isinstance(v, str)}
    front = read_front(doc)
    meta = PaperMeta()
    unsure: list[str] = []

    found_title = title_reader.from_layout(front)
    page_key = key(front.all_text + " " + front.cover_text)
    meta.title, title_unsure = title_reader.choose(found_title, info.get("title", ""), filename, page_key)
    if title_unsure:
        unsure.append("title")
    title_bottom = found_title.bottom if found_title.lines else 0.0
    title_top = min((ln.y0 for ln in found_title.lines), default=0.0)

    text, abs_y, labelled = abstract_reader.find(front.lines, front.body, title_bottom)
    on_first_page = bool(text) and labelled
    end = _front_end(front, title_bottom, abs_y if on_first_page else 0.0)
    region = [ln for ln in front.lines if title_bottom - 1 < ln.y0 < end and ln not in found_title.lines]
    # A preprint may set its author line above the title: the name lines just over it.
    region = [ln for ln in front.lines if title_top - 4 * front.body < ln.y0 < title_top
              and title_reader.name_line(ln.main)] + region
    meta.authors, authors_unsure = _authors(front, region, info.get("author", ""))
    if authors_unsure:
        unsure.append("authors")

    if not labelled:
        # Nothing labelled on the first page: a label on the next page (title pages), else
        # the first long paragraph after the author block.
        # Once the first page shows the body's first heading, no abstract follows on the next.
        next_lines = [] if abstract_reader.body_started(front.lines) else front.next_lines
        text2, _, labelled2 = abstract_reader.find(next_lines, front.body, 0.0)
        if labelled2:
            text, labelled = text2, True
        else:
            # The author block's bottom: lines naming the authors read, not a chance "name" in
            # the prose further down ("0.04. If SiH3D ..." reads as one).
            found = {key(n) for n in meta.authors}
            names_bottom = max((ln.y1 for ln in region
                                if any(key(n) in found for n in author_reader.names_in(ln.main) or ())),
                               default=title_bottom)
            text, _, labelled = abstract_reader.find([ln for ln in front.lines if ln.y0 >= names_bottom], front.body, names_bottom)
            if not text and next_lines:  # a title page: the abstract opens the next page
                text, _, labelled = abstract_reader.find(next_lines, front.body, 0.0)
    if text and letters(text) < 0.6 * len(text.replace(" ", "")):
        text, labelled = "", False  # a font that decodes to symbols: unreadable until OCR reads the page
    meta.abstract = text
    if not labelled:
        unsure.append("abstract")

    front_lines = [ln for ln in front.lines
                   if ln.y1 <= max(end, abs_y) + 1 + 4 * front.body or ln.size < front.body * 0.95
                   or ln.y0 < 0.1 * front.page_height or ln.y1 > 0.85 * front.page_height]
    front_text = "\n".join(ln.text for ln in front_lines)
    meta.doi = identifiers.page_doi(front, max(end, abs_y))
    if not meta.doi:  # a later page ("Cite this article as", a footer), or the XMP metadata
        meta.doi, printed = doi_sources.doi_elsewhere(doc, front.pages, front.all_text,
                                                      doi_sources.info_dict_doi(info), TEXT_FLAGS)
        if meta.doi and not printed:
            unsure.append("doi")

    meta.arxiv_id = identifiers.find_arxiv(filename, front.all_text, info)

    found_date = dates.best(dates.candidates(front_text, front.all_text))
    if found_date is not None and found_date.weight == 0:
        found_date = None  # a bare year with nothing around it that dates the paper: most likely a citation
    if found_date is None or found_date.weight < 2:
        # Nothing said on the front matter: a stated publication anywhere on the first pages,
        # else the first full date written there (a vignette's "as of April 3, 2022").
        page_text = "\n".join(ln.text for ln in front.lines)
        wider = dates.best([d for d in dates.candidates(page_text, "") if d.weight >= 2])
        if wider is None:
            # A version note may sit on the next page ("… was typeset on January 11, 2022");
            # only an explicit one counts there, where citations fill the text.
            next_text = "\n".join(ln.text for ln in front.next_lines)
            wider = dates.best([d for d in dates.candidates(next_text, "") if d.weight >= 5])
        if wider is not None and (found_date is None or wider.weight > found_date.weight):
            found_date = wider
        elif found_date is None or len(found_date.value) == 4:
            full = dates.first_full_date(page_text)
            if full:
                found_date = dates.DateFound(full, 1, 0)
    if found_date is not None:
        meta.published = found_date.value
        if found_date.weight <= 1:
            unsure.append("year")
    else:
        meta.published = dates.metadata_date(info)
        if meta.published:
            unsure.append("year")

    meta.venue, venue_sure = venue_reader.find(front, title_top)
    if meta.venue and not venue_sure:
        unsure.append("venue")
    meta.unsure = unsure
    return meta
