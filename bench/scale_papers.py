"""Generated papers for the library-scale bench: deterministic from (seed, index), written by PyMuPDF.

Each paper is 8–20 pages (`pages` overrides), one or two columns, numbered section headings,
a table in about one paper of three, and a reference list. The prose is real sentences from
the r-papers corpus (`../shared/corpus/r-papers`), so BM25 and MiniLM see the vocabulary and
sentence shapes of real papers: a paper takes most of its sentences from one corpus paper (its
"topic", `PaperSpec.topic`) and the rest from any. Titles, authors, years, DOIs and tags differ
from paper to paper, so metadata and filters have something to tell apart.

`PaperSpec.pages` is the text of each page as the generator lays it out (a budget of words per
page; the PDF's own page breaks differ a little): the bulk build of bench/library_scale.py
writes it straight into the library instead of extracting 140,000 PDF pages.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from pathlib import Path

import pymupdf

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus" / "r-papers"

FIRST = ("Anna Ben Carla David Elena Farid Grace Hiro Ines Jonas Kavya Lars Maria Nikos Olga Pablo Qi Rosa "
         "Sven Tara Umar Vera Wen Xavier Yara Zoltan Achim Bettina Torsten Kurt Ulrike Mark Dirk Julia").split()
LAST = ("Zeileis Hothorn Leisch Hornik Kleiber Eddelbuettel Francois Bates Maechler Strobl Grothendieck Ripley "
        "Nakamura Okafor Petrov Quispe Rossi Schmidt Tanaka Ulrich Varga Weber Xu Yilmaz Zhang Andersen Becker "
        "Costa Dubois Eriksson Fischer Garcia Hansen Ivanova Jensen Kowalski Lindqvist Moreau Novak").split()
SECTIONS = ["Introduction", "Background", "Related work", "Model", "Methods", "Estimation", "Implementation",
            "Software", "Simulation study", "Illustrations", "Applications", "Results", "Discussion",
            "Computational details", "Extensions", "Conclusion"]
JOURNALS = ["Journal of Statistical Software", "The R Journal", "Computational Statistics & Data Analysis",
            "Journal of Econometrics", "Statistics and Computing", "Biometrika", "Annals of Applied Statistics"]
TAGS = ["econometrics", "time-series", "c++", "mixed-models", "trees", "inference", "to-read", "teaching",
        "robust", "software", "simulation", "review"]
WORDS_PER_PAGE = 740  # a 10-point page of prose (measured on the generated PDFs: 650–790)


@dataclass
class PaperSpec:
    index: int
    title: str
    authors: list[str]
    year: int
    doi: str
    journal: str
    abstract: str
    tags: list[str]
    topic: str  # the corpus file most of its sentences come from
    columns: int
    sections: list[tuple[str, list[str]]]  # heading, paragraphs
    table: list[list[str]] | None
    references: list[str]
    pages: list[str] = field(default_factory=list)  # markdown per page (see the module docstring)


def corpus_sentences(cache: Path) -> dict[str, list[str]]:
    """Sentences of each corpus paper (40–300 characters, mostly words), cached as JSON."""
    if cache.exists():
        return json.loads(cache.read_text())
    out: dict[str, list[str]] = {}
    for pdf in sorted(CORPUS.glob("*.pdf")):
        with pymupdf.open(pdf) as doc:
            text = " ".join(" ".join(page.get_text().split()) for page in doc)
        sents = re.split(r"(?<=[.?!])\s+(?=[A-Z])", text)
        out[pdf.name] = [s for s in sents if 40 <= len(s) <= 300 and sum(c.isalpha() or c == " " for c in s) > 0.8 * len(s)]
    out = {name: ss for name, ss in out.items() if len(ss) >= 20}  # a reference card has too few to be a topic
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(out))
    return out


def title_words(sentences: dict[str, list[str]]) -> list[str]:
    words = {w.lower() for ss in sentences.values() for s in ss for w in re.findall(r"[A-Za-z]{6,14}", s)}
    return sorted(words)


def make_spec(index: int, seed: int, sentences: dict[str, list[str]], vocab: list[str],
              pages: int | None = None) -> PaperSpec:
    rng = random.Random(f"{seed}:{index}")
    files = sorted(sentences)
    topic = files[rng.randrange(len(files))]

    def sentence() -> str:
        pool = sentences[topic] if rng.random() < 0.8 else sentences[files[rng.randrange(len(files))]]
        return pool[rng.randrange(len(pool))]

    def paragraph() -> str:
        return " ".join(sentence() for _ in range(rng.randint(3, 7)))

    w = [vocab[rng.randrange(len(vocab))] for _ in range(4)]
    title = f"{w[0].capitalize()} {w[1]} for {w[2]} {w[3]}: study {index}"  # the index keeps titles distinct
    authors = [f"{rng.choice(FIRST)} {rng.choice(LAST)}" for _ in range(rng.randint(1, 5))]
    year = rng.randint(1990, 2025)
    n_pages = pages or rng.randint(8, 20)
    names = ["Introduction"] + sorted(rng.sample(SECTIONS[1:-1], min(len(SECTIONS) - 2, max(2, n_pages // 2)))) + ["Conclusion"]
    budget = n_pages * WORDS_PER_PAGE - 400  # the title block, abstract and references take the rest
    per_section = max(120, budget // len(names))
    sections = []
    for i, name in enumerate(names, 1):
        paras, words = [], 0
        while words < per_section:
            paras.append(paragraph())
            words += len(paras[-1].split())
        sections.append((f"{i} {name}", paras))
    table = None
    if rng.random() < 0.35:
        cols = ["Model", "Estimate", "Std. error", "p value"]
        table = [cols] + [[f"M{r}", f"{rng.uniform(-2, 2):.3f}", f"{rng.uniform(0.01, 0.5):.3f}",
                           f"{rng.uniform(0, 0.2):.4f}"] for r in range(1, rng.randint(4, 9))]
    refs = [f"{rng.choice(LAST)}, {rng.choice(FIRST)[0]}. ({rng.randint(1970, year)}). "
            f"{vocab[rng.randrange(len(vocab))].capitalize()} {vocab[rng.randrange(len(vocab))]} models. "
            f"{rng.choice(JOURNALS)}, {rng.randint(1, 90)}({rng.randint(1, 12)}), {rng.randint(1, 400)}-{rng.randint(401, 900)}."
            for _ in range(rng.randint(10, 30))]
    spec = PaperSpec(index, title, authors, year, f"10.5555/rds.{seed}.{index:06d}", rng.choice(JOURNALS),
                     paragraph(), rng.sample(TAGS, rng.randint(0, 2)), topic, rng.choice((1, 2)),
                     sections, table, refs)
    spec.pages = page_texts(spec)
    return spec


def page_texts(spec: PaperSpec) -> list[str]:
    """The paper's markdown cut into pages by a word budget (what extraction would roughly give)."""
    blocks = [f"# {spec.title}", ", ".join(spec.authors), f"{spec.journal} ({spec.year}). doi:{spec.doi}",
              "# Abstract", spec.abstract]
    for heading, paras in spec.sections:
        blocks.append(f"# {heading}")
        blocks += paras
        if spec.table and heading == spec.sections[len(spec.sections) // 2][0]:
            blocks += ["Table 1: Estimates of the models.", "\n".join(" | ".join(row) for row in spec.table)]
    blocks += ["# References"] + spec.references
    pages, current, words = [], [], 0
    for block in blocks:
        n = len(block.split())
        if current and words + n > WORDS_PER_PAGE:
            pages.append("\n\n".join(current))
            current, words = [], 0
        current.append(block)
        words += n
    pages.append("\n\n".join(current))
    return pages


def _html(spec: PaperSpec) -> str:
    esc = lambda s: s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")  # noqa: E731
    parts = [f"<h1>{esc(spec.title)}</h1>", f"<p><b>{esc(', '.join(spec.authors))}</b></p>",
             f"<p><i>{esc(spec.journal)} ({spec.year}). doi:{spec.doi}</i></p>",
             "<h2>Abstract</h2>", f"<p>{esc(spec.abstract)}</p>"]
    for heading, paras in spec.sections:
        parts.append(f"<h2>{esc(heading)}</h2>")
        parts += [f"<p>{esc(p)}</p>" for p in paras]
        if spec.table and heading == spec.sections[len(spec.sections) // 2][0]:
            rows = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in spec.table)
            parts.append(f"<p>Table 1: Estimates of the models.</p><table border='1'>{rows}</table>")
    parts.append("<h2>References</h2>")
    parts += [f"<p>{esc(r)}</p>" for r in spec.references]
    return "".join(parts)


CSS = "body {font-family: serif; font-size: 10pt;} h1 {font-size: 17pt;} h2 {font-size: 12pt;} td {font-size: 9pt;}"


def write_pdf(spec: PaperSpec, path: Path) -> int:
    """The paper as a PDF (one or two columns, A4); returns its page count."""
    story = pymupdf.Story(_html(spec), user_css=CSS)
    page = pymupdf.paper_rect("a4")
    margin, gap = 56, 18
    if spec.columns == 1:
        cells = [page + (margin, margin, -margin, -margin)]
    else:
        width = (page.width - 2 * margin - gap) / 2
        cells = [pymupdf.Rect(margin, margin, margin + width, page.height - margin),
                 pymupdf.Rect(margin + width + gap, margin, page.width - margin, page.height - margin)]
    tmp = path.with_suffix(".tmp")
    writer = pymupdf.DocumentWriter(str(tmp))
    more, n, dev = True, 0, None
    while more:
        for cell in cells:
            if cell is cells[0]:
                dev = writer.begin_page(page)
                n += 1
            more, _ = story.place(cell)
            story.draw(dev)
            if cell is cells[-1] or not more:
                writer.end_page()
            if not more:
                break
    writer.close()
    with pymupdf.open(tmp) as doc:  # metadata as Zotero-era PDFs carry it
        doc.set_metadata({"title": spec.title, "author": "; ".join(spec.authors), "subject": f"doi:{spec.doi}",
                          "creationDate": f"D:{spec.year}0101000000"})
        doc.save(path, garbage=3, deflate=True)
    tmp.unlink()
    return n


def ensure_pdfs(folder: Path, seed: int, indices: range, sentences, vocab, pages: int | None = None) -> list[Path]:
    """The PDFs of papers `indices`, generated once and kept in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for i in indices:
        path = folder / f"paper-{seed}-{i:05d}.pdf"
        if not path.exists():
            write_pdf(make_spec(i, seed, sentences, vocab, pages), path)
        out.append(path)
    return out
