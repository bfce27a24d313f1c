"""The DOI from any page where a paper prints its own, and from the XMP metadata."""

from __future__ import annotations

from pathlib import Path

import pymupdf

from tests.support.pdf_factory import read_meta

OWN = "10.1016/j.celrep.2024.114021"
XMP = """<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?>
<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
<rdf:Description rdf:about="" xmlns:prism="http://prismstandard.org/namespaces/basic/2.0/"
 xmlns:dc="http://purl.org/dc/elements/1.1/">
<prism:doi>{doi}</prism:doi><dc:identifier>doi:{doi}</dc:identifier>
</rdf:Description></rdf:RDF></x:xmpmeta>
<?xpacket end="w"?>"""


def _paper(path: Path, *, first_page_doi: str = "", footer_doi: str = "", middle_doi: str = "",
           xmp_doi: str = "", pages: int = 4) -> Path:
    """A paper whose last page is a reference list full of other papers' DOIs."""
    doc = pymupdf.open()
    for n in range(pages):
        page = doc.new_page(width=612, height=792)
        if n == 0:
            page.insert_text((72, 90), "Kinetics of ribosome stalling in neurons", fontsize=18, fontname="hebo")
            page.insert_text((72, 120), "Ana Smith, Bruno Carvalho", fontsize=11, fontname="helv")
            if first_page_doi:
                page.insert_text((72, 770), f"https://doi.org/{first_page_doi}", fontsize=7, fontname="helv")
        body = "Ribosomes stall on polyproline stretches, and neurons clear them with quality control. " * 8
        if n == pages - 1:
            body = "\n".join(f"{i}. Author A, Author B. A cited study {i}. J Cell Biol 2019;12:3-9. "
                             f"doi:10.1083/jcb.2019{i:04d}" for i in range(1, 12))
            if footer_doi:
                page.insert_text((72, 775), f"Cell Reports 43, 114021, April 2024   https://doi.org/{footer_doi}",
                                 fontsize=7, fontname="helv")
        elif n == 1 and middle_doi:
            body += f" The data are deposited with the article (doi:{middle_doi})."
        assert page.insert_textbox(pymupdf.Rect(72, 150, 540, 700), body, fontsize=9, fontname="tiro") >= 0
    if xmp_doi:
        doc.set_xml_metadata(XMP.format(doi=xmp_doi))
    doc.save(path)
    doc.close()
    return path



def test_a_doi_in_the_last_pages_footer_is_found_and_the_references_dois_are_not(tmp_path):
    meta = read_meta(_paper(tmp_path / "footer.pdf", footer_doi=OWN))
    assert meta.doi == OWN and "doi" not in meta.unsure
    assert read_meta(_paper(tmp_path / "none.pdf")).doi == ""  # only cited papers' DOIs: none is the paper's


def test_the_xmp_doi_is_taken_printed_anywhere_or_marked_unsure_where_not(tmp_path):
    printed = read_meta(_paper(tmp_path / "printed.pdf", middle_doi=OWN, xmp_doi=OWN, pages=6))
    assert printed.doi == OWN and "doi" not in printed.unsure
    unprinted = read_meta(_paper(tmp_path / "xmp.pdf", xmp_doi=OWN))
    assert unprinted.doi == OWN and "doi" in unprinted.unsure


def test_the_printed_doi_beats_the_xmp_one(tmp_path):
    meta = read_meta(_paper(tmp_path / "both.pdf", first_page_doi=OWN, xmp_doi="10.5555/other.2024.1"))
    assert meta.doi == OWN and "doi" not in meta.unsure
