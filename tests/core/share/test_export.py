"""Sharing an answer with its evidence (issue 81): the web page, the evidence bundle and `verify`,
annotated PDFs, for the last answer and for any answer of the history.

Real PDFs made with PyMuPDF, a real LanceDB library (a copy of the session's fact library, plus a
paper whose pages print other numbers), real evidence from the funnel. The five-citation answer is
bound to that evidence by hand, so that what is tested is the sharing, not a 135M model's prose;
one test shares the tiny SmolLM2 model's own answer end to end.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
import subprocess
import zipfile
from html.parser import HTMLParser
from pathlib import Path

import pymupdf
import pytest

from app import cli
from app.core.desk import Desk, locate_passage
from app.core.errors import ResearchDeskError
from app.core.events import Task
from app.core.records import ResearchResult
from app.core.units import pages_of_text_file
from tests.support.pdf_factory import make_paper
from tests.support.shared_answer import CLAIMS, DOI, OWL, QUESTION, cited_answer

@pytest.fixture(scope="module")
def shared(tmp_path_factory, fact_library):
    """(desk, the five-citation answer, the folder of the papers' original PDFs) on a copy of the fact library."""
    root = tmp_path_factory.mktemp("share")
    shutil.copytree(fact_library.location, root / "lib")
    originals = root / "originals"
    originals.mkdir()
    for pdf in Path(fact_library.location, "pdfs").glob("*.pdf"):
        shutil.copy(pdf, originals / pdf.name)
    make_paper(root / "owl.pdf", *OWL, page_labels=[{"startpage": 0, "prefix": "", "style": "D", "firstpagenum": 21}])
    desk = Desk(fact_library.settings, library=str(root / "lib"))
    assert desk.add([root / "owl.pdf"]).ok
    shutil.copy(root / "owl.pdf", originals / "owl.pdf")
    kestrel = next(p.id for p in desk.papers() if p.title.startswith("Kestrel"))
    desk.edit_paper(kestrel, doi=DOI)
    yield desk, cited_answer(desk), originals
    desk.close()


class _Page(HTMLParser):
    """What a test reads of the shared page: its figures, boxes, links, scripts and sources."""

    def __init__(self) -> None:
        super().__init__()
        self.figures: list[dict] = []
        self.tags: list[str] = []
        self.links: list[str] = []
        self.sources: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        if tag == "figure":
            self.figures.append({**a, "boxes": []})
        elif tag == "img" and self.figures:
            self.figures[-1]["img"] = a
        elif tag == "span" and "box" in (a.get("class") or "").split():
            self.figures[-1]["boxes"].append(a)
        if tag == "a" and a.get("href"):
            self.links.append(a["href"])
        for key in ("src", "href"):
            if a.get(key):
                self.sources.append(a[key])


def read_page(path: Path) -> tuple[str, _Page]:
    text = path.read_text(encoding="utf-8")
    page = _Page()
    page.feed(text)
    return text, page


def _numbers(text: str) -> list[float]:
    return [float(v) for v in text.split()]


# -- the web page ------------------------------------------------------------------------------


def test_the_page_is_self_contained_and_its_boxes_are_the_cited_sentences(shared, tmp_path):
    desk, result, _ = shared
    out = desk.export("html", tmp_path / "answer.html", result)
    text, page = read_page(out)
    # One file, nothing to fetch, no script: images are data URIs, links only to DOI / arXiv / the page itself.
    assert "script" not in page.tags and "link" not in page.tags and "iframe" not in page.tags
    assert "default-src 'none'" in text
    assert all(s.startswith(("data:image/png;base64,", "#", "https://doi.org/", "https://arxiv.org/")) for s in page.sources)
    assert f"https://doi.org/{DOI}" in page.links
    # The question, the claims with their verdicts, the key passage, each citation's quote.
    assert QUESTION in text and "Partly supported" in text and "Key passage" in text
    for claim, quote, _ in CLAIMS:
        assert claim.strip("“”") in text and quote in text
    assert "printed page 23" in text and "printed page 22" in text  # the owl paper's pages print 21–23

    # One crop per cited page: kestrel p. 3 (two citations), glacier p. 3, owl p. 3 and p. 2.
    pages = [(f["data-paper"].split("-")[0], int(f["data-page"])) for f in page.figures]
    assert sorted(pages) == sorted([("kestrel", 3), ("glacier", 3), ("barn", 3), ("barn", 2)])
    quotes_on = {}
    for c in result.citations:
        quotes_on.setdefault((c.paper_id, c.page), [])
        for sentence in re.split(r"(?<=\.) ", c.quote):
            if sentence not in quotes_on[(c.paper_id, c.page)]:
                quotes_on[(c.paper_id, c.page)].append(sentence)
    for fig in page.figures:
        pdf = desk.library.pdf_path(fig["data-paper"])
        pno = int(fig["data-page"])
        x0, y0, x1, y1 = _numbers(fig["data-clip"])
        img = fig["img"]
        png = base64.b64decode(img["src"].removeprefix("data:image/png;base64,"))
        shown = pymupdf.Pixmap(png)
        assert (shown.width, shown.height) == (int(img["width"]), int(img["height"]))
        assert shown.width == pytest.approx(2 * (x1 - x0), abs=2) and shown.height == pytest.approx(2 * (y1 - y0), abs=2)
        sentences = quotes_on[(fig["data-paper"], pno)]
        by_sentence: dict[int, list] = {}
        for box in fig["boxes"]:
            by_sentence.setdefault(int(box["data-sentence"]), []).append(box)
        assert sorted(by_sentence) == list(range(len(sentences)))
        with pymupdf.open(pdf) as doc:
            pg = doc[pno - 1]
            for i, sentence in enumerate(sentences):
                rects = [_numbers(b["data-rect"]) for b in by_sentence[i]]
                # The viewer's own rectangles for the sentence (app/core/pdf/highlight.py) …
                viewer = locate_passage(pdf, pno, sentence).rects
                assert len(rects) == len(viewer) and all(r == pytest.approx(v, abs=0.01) for r, v in zip(rects, viewer))
                # … which cover what MuPDF finds printed there, and nothing far from it.
                found = pg.search_for(sentence)
                assert found, sentence
                union = pymupdf.Rect(rects[0])
                for r in rects[1:]:
                    union |= pymupdf.Rect(r)
                for hit in found:
                    assert union.contains(hit + (-1, -1, 1, 1)) or union.intersects(hit)
                assert abs(union.y0 - min(h.y0 for h in found)) < 3 and abs(union.y1 - max(h.y1 for h in found)) < 3
                # Each box is placed on the picture where its rectangle is on the page.
                for box, r in zip(by_sentence[i], rects):
                    style = dict(p.split(":") for p in box["style"].rstrip(";").split(";"))
                    left, top = float(style["left"].rstrip("%")), float(style["top"].rstrip("%"))
                    assert left == pytest.approx(100 * (r[0] - x0) / (x1 - x0), abs=0.01)
                    assert top == pytest.approx(100 * (r[1] - y0) / (y1 - y0), abs=0.01)
                    assert x0 <= r[0] and r[2] <= x1 and y0 <= r[1] and r[3] <= y1
    assert out.stat().st_size < 3_000_000


def test_the_page_reads_in_light_and_dark_and_on_a_phone(shared, tmp_path):
    """Headless Chromium, where installed: the page renders at a desktop and a phone's width, and
    dark differs from light (prefers-color-scheme). The pictures in docs/guide/ came from this."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("chromium is not installed")
    desk, result, _ = shared
    page = desk.export("html", tmp_path / "answer.html", result)
    shots = {}
    for name, size, extra in (("light", "1100,1400", []), ("dark", "1100,1400", ["--force-dark-mode"]), ("phone", "390,1400", [])):
        shot = tmp_path / f"{name}.png"
        subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                        "--disable-component-update", "--no-first-run", f"--user-data-dir={tmp_path / ('profile-' + name)}",
                        "--hide-scrollbars", *extra, f"--screenshot={shot}", f"--window-size={size}", page.as_uri()],
                       capture_output=True, timeout=120, check=False)
        assert shot.exists(), name
        shots[name] = pymupdf.Pixmap(str(shot))
    assert (shots["phone"].width, shots["light"].width) == (390, 1100)

    def brightness(pix: pymupdf.Pixmap) -> float:
        return sum(pix.samples[:: pix.n * 97]) / len(pix.samples[:: pix.n * 97])

    assert brightness(shots["light"]) > 200 and brightness(shots["dark"]) < 90


# -- the bundle and verify ----------------------------------------------------------------------


def _rewrite(bundle: Path, out: Path, change) -> Path:
    """A copy of `bundle` whose manifest `change` edited."""
    with zipfile.ZipFile(bundle) as z:
        manifest = json.loads(z.read("manifest.json"))
        page = z.read("page.html")
    change(manifest)
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("page.html", page)
        z.writestr("manifest.json", json.dumps(manifest))
    return out


def test_a_bundle_verifies_and_a_changed_quote_pdf_or_missing_pdf_fails_naming_the_citation(shared, tmp_path, capsys):
    desk, result, originals = shared
    bundle = desk.export("bundle", tmp_path / "answer.zip", result)
    with zipfile.ZipFile(bundle) as z:
        assert sorted(z.namelist()) == ["manifest.json", "page.html"]
        manifest = json.loads(z.read("manifest.json"))
        page = z.read("page.html")
    assert manifest["page_sha256"] == hashlib.sha256(page).hexdigest()
    # The model by its name: no folder of the user's travels with a shared answer.
    assert manifest["model"] == f"llama.cpp: {Path(desk.settings.chat.path).name}" and manifest["judge"] == "the chat model"
    assert manifest["settings"]["k_evidence"] and str(Path(desk.settings.chat.path).parent) not in json.dumps(manifest)
    papers = {p.id: p for p in desk.papers()}
    for c, m in zip(result.citations, manifest["citations"]):
        assert (m["paper_id"], m["page"], m["quote"], m["verdict"]) == (c.paper_id, c.page, c.quote, c.support)
        pdf = desk.library.pdf_path(c.paper_id)
        assert m["sha256"] == papers[c.paper_id].content_hash == hashlib.sha256(pdf.read_bytes()).hexdigest()
        # Each sentence's span is where it stands in the page's text as the library keeps it.
        stored = dict(pages_of_text_file((desk.library.root / "text" / f"{c.paper_id}.md").read_text(encoding="utf-8")))
        for s in m["sentences"]:
            assert stored[c.page][s["char_start"]:s["char_end"]] == s["text"]
        assert (m["char_start"], m["char_end"]) == (m["sentences"][0]["char_start"], m["sentences"][-1]["char_end"])
    assert [len(m["sentences"]) for m in manifest["citations"]] == [1, 1, 1, 2, 1]

    # Offline, against the library or a folder of the PDFs: every quote holds.
    for report in (desk.verify_bundle(bundle), desk.verify_bundle(bundle, pdfs=originals)):
        assert report.ok and [f.ok for f in report.findings] == [True] * 5, report.lines()
        assert report.seconds < 5
    lib = ["--library", str(desk.location)]
    assert cli.main(["verify", str(bundle), "--pdfs", str(originals)]) == 0
    assert cli.main([*lib, "verify", str(bundle)]) == 0
    assert "5 of 5 quotes stand on their pages" in capsys.readouterr().out

    # A changed quote: the manifest's quote, or the quote with its sentences, no longer stands.
    def figure(m):
        m["citations"][2]["quote"] = m["citations"][2]["quote"].replace("38", "83")

    def both(m):
        figure(m)
        m["citations"][2]["sentences"][0]["text"] = m["citations"][2]["quote"]

    for change, why in ((figure, "was changed"), (both, "does not stand on page 3")):
        report = desk.verify_bundle(_rewrite(bundle, tmp_path / f"{change.__name__}.zip", change), pdfs=originals)
        assert not report.ok and [f.citation for f in report.failed] == [3]
        assert why in report.failed[0].line() and report.failed[0].line().startswith("✗ citation 3 (glacier")

    # A changed PDF (one word of the kestrel paper) fails its two citations; a missing one, the owl's two.
    changed = tmp_path / "changed"
    shutil.copytree(originals, changed)
    kestrel = next(p for p in changed.iterdir() if p.name.startswith("kestrel"))
    doc = pymupdf.open(kestrel)
    doc.set_metadata({**doc.metadata, "title": "Kestrel Migration Timing, retitled"})
    doc.saveIncr()
    doc.close()
    (changed / "owl.pdf").unlink()
    report = desk.verify_bundle(bundle, pdfs=changed)
    failed = {f.citation: f.line() for f in report.failed}
    assert sorted(failed) == [1, 2, 4, 5] and report.findings[2].ok
    assert all("the PDF changed" in failed[n] and kestrel.name in failed[n] for n in (1, 2))
    assert all("the PDF is missing" in failed[n] for n in (4, 5))
    capsys.readouterr()
    assert cli.main(["verify", str(bundle), "--pdfs", str(changed)]) == 1
    out = capsys.readouterr().out
    assert "✗ citation 1 (kestrel" in out and "✗ citation 5 (barn" in out and "1 of 5 quotes" in out

    # A page edited after export is told apart too.
    edited = tmp_path / "edited.zip"
    with zipfile.ZipFile(edited, "w") as z:
        z.writestr("page.html", page.replace(b"Partly supported", b"Supported"))
        z.writestr("manifest.json", json.dumps(manifest))
    report = desk.verify_bundle(edited, pdfs=originals)
    assert not report.ok and "page.html was changed" in report.lines()[-2]


def test_verify_says_what_is_wrong_with_what_it_was_given(shared, tmp_path, capsys):
    desk, _, originals = shared
    not_zip = tmp_path / "answer.zip"
    not_zip.write_text("hello")
    with pytest.raises(ResearchDeskError, match="not a readable evidence bundle"):
        desk.verify_bundle(not_zip, pdfs=originals)
    other = tmp_path / "other.zip"
    with zipfile.ZipFile(other, "w") as z:
        z.writestr("manifest.json", json.dumps({"format": "something else"}))
    with pytest.raises(ResearchDeskError, match="not a Research Desk evidence bundle"):
        desk.verify_bundle(other)
    assert cli.main(["verify", str(tmp_path / "absent.zip"), "--pdfs", str(originals)]) == 1
    assert "no bundle at" in capsys.readouterr().err


# -- annotated PDFs ------------------------------------------------------------------------------


def test_annotated_pdfs_hold_one_highlight_per_cited_sentence_on_its_page(shared, tmp_path):
    desk, result, _ = shared
    before = {p.id: hashlib.sha256(desk.library.pdf_path(p.id).read_bytes()).hexdigest() for p in desk.papers()}
    out = desk.export("annotated-pdf", tmp_path / "annotated", result)
    written = sorted(p.name for p in out.iterdir())
    assert written == sorted(f"{pid}.pdf" for pid in {c.paper_id for c in result.citations})
    wanted: dict[str, set] = {}
    for c in result.citations:
        for sentence in re.split(r"(?<=\.) ", c.quote):
            wanted.setdefault(c.paper_id, set()).add((c.page, sentence))
    for pdf in out.iterdir():
        pid = pdf.stem
        found = set()
        with pymupdf.open(pdf) as doc:
            for pg in doc:
                for annot in pg.annots():
                    assert annot.type[1] == "Highlight"
                    assert annot.info["title"] == "Research Desk"
                    text = " ".join(pg.get_textbox(r).strip() for r in _quad_rects(annot))
                    sentence = next(s for p, s in wanted[pid] if p == pg.number + 1 and " ".join(text.split()) == s)
                    found.add((pg.number + 1, sentence))
                    claims = [cl for cl, q, _ in CLAIMS if sentence in q]
                    note = annot.info["content"]
                    assert any(cl.strip("“”") in note or "Key passage" in note for cl in claims), note
        assert found == wanted[pid]  # one highlight per cited sentence, each on its page
    assert sum(len(v) for v in wanted.values()) == 6
    # The library's PDFs are as they were.
    assert before == {p.id: hashlib.sha256(desk.library.pdf_path(p.id).read_bytes()).hexdigest() for p in desk.papers()}


def _quad_rects(annot) -> list[pymupdf.Rect]:
    v = annot.vertices
    return [pymupdf.Quad(v[i:i + 4]).rect for i in range(0, len(v), 4)]


# -- answers of the history, the last answer, the real model ------------------------------------


def test_history_export_writes_all_three_for_an_answer_of_the_history(shared, tmp_path, capsys):
    desk, result, originals = shared
    entry = desk.record_answer(ResearchResult.from_dict(result.to_dict()))
    lib = ["--library", str(desk.location)]
    html, bundle, folder = tmp_path / "h.html", tmp_path / "h.zip", tmp_path / "pdfs"
    for fmt, out in (("html", html), ("bundle", bundle), ("annotated-pdf", folder)):
        assert cli.main([*lib, "history", "export", str(entry.number), "--format", fmt, "--out", str(out)]) == 0
    assert f"answer {entry.number} of the library" in html.read_text(encoding="utf-8")
    assert len(list(folder.glob("*.pdf"))) == 3
    manifest = json.loads(zipfile.ZipFile(bundle).read("manifest.json"))
    assert (manifest["history"], manifest["asked_at"]) == (entry.number, entry.asked_at)
    assert manifest["model"] == f"llama.cpp: {Path(entry.model.split(': ', 1)[1]).name}"  # the history keeps the path
    assert cli.main(["verify", str(bundle), "--pdfs", str(originals)]) == 0
    # Without --out: results/ in the library, named after the question.
    assert cli.main([*lib, "history", "export", str(entry.number), "--format", "html"]) == 0
    assert Path(capsys.readouterr().out.split("exported ")[-1].strip()).parent == desk.library.results_dir


def test_an_answer_without_citations_says_there_is_nothing_to_share(shared, tmp_path):
    desk, result, _ = shared
    bare = ResearchResult(query=result.query, answer="The papers do not say.")
    with pytest.raises(ResearchDeskError, match="cites no page"):
        desk.export("html", tmp_path / "x.html", bare)
    with pytest.raises(ResearchDeskError, match="Unknown export format"):
        desk.export("docx", tmp_path / "x.docx", result)


def test_the_tiny_models_own_answer_is_shared_and_verifies(shared, tmp_path, capsys):
    """The real path: the tiny SmolLM2 model answers (its support check quotes the passages), the
    CLI exports the last answer as a page and a bundle, and the bundle verifies."""
    desk, _, originals = shared
    result = desk.research("When do kestrels depart from alpine valleys in autumn?", Task())
    assert result.citations, result.messages
    lib = ["--library", str(desk.location)]
    html, bundle = tmp_path / "last.html", tmp_path / "last.zip"
    assert cli.main([*lib, "export", "--format", "html", "--out", str(html)]) == 0
    assert cli.main([*lib, "export", "--format", "bundle", "--out", str(bundle)]) == 0
    assert result.query in html.read_text(encoding="utf-8")
    manifest = json.loads(zipfile.ZipFile(bundle).read("manifest.json"))
    assert manifest["settings_recorded"] and len(manifest["citations"]) == len(result.citations)
    capsys.readouterr()
    assert cli.main(["verify", str(bundle), "--pdfs", str(originals)]) == 0, capsys.readouterr().out


def test_a_rotated_page_is_cropped_and_boxed_as_displayed(tmp_path):
    from app.core.share.crops import page_crop
    from app.core.share.records import QuotedSentence

    doc = pymupdf.open()
    pg = doc.new_page(width=595, height=842)
    pg.insert_text((72, 200), "The loggers recorded a position every 30 minutes.", fontsize=11)
    pg.set_rotation(90)
    path = tmp_path / "rotated.pdf"
    doc.save(path)
    doc.close()
    with pymupdf.open(path) as doc:
        crop = page_crop(doc[0], "rotated", [QuotedSentence("The loggers recorded a position every 30 minutes.")])
    (box,) = crop.boxes[0]
    assert box == pytest.approx(locate_passage(path, 1, "The loggers recorded a position every 30 minutes.").rects[0])
    assert box[3] - box[1] > box[2] - box[0]  # the line runs down the page as displayed
    x0, y0, x1, y1 = crop.clip
    assert x0 <= box[0] and box[2] <= x1 and y0 <= box[1] and box[3] <= y1


def test_a_pdf_gone_or_unreadable_costs_its_picture_not_the_page(shared, tmp_path):
    desk, result, _ = shared
    glacier = next(c.paper_id for c in result.citations if c.paper_id.startswith("glacier"))
    pdf = desk.library.pdf_path(glacier)
    kept = pdf.read_bytes()
    try:
        pdf.write_bytes(b"%PDF-1.7 this is not a PDF any more")
        text, page = read_page(desk.export("html", tmp_path / "damaged.html", result))
        assert "The library&#39;s PDF of this paper cannot be read" in text
        assert glacier not in [f["data-paper"] for f in page.figures] and len(page.figures) == 3
        pdf.unlink()
        text, _ = read_page(desk.export("html", tmp_path / "gone.html", result))
        assert "The PDF of this paper is not in the library" in text and "38 metres per year" in text
    finally:
        pdf.write_bytes(kept)
