"""Acknowledgements, author contributions, funding and download stamps are never evidence (research/evidence/not_evidence.py)."""

from __future__ import annotations

import pytest

from app.core.records import Evidence
from app.core.research.evidence.not_evidence import is_back_matter_section, is_back_matter_unit
from app.core.research.evidence.focus import split_sentences



def kept(text: str) -> list[str]:
    """The units focusing keeps of a passage holding `text`."""
    return [c.text for c in split_sentences(Evidence(1, "p", 1, "1", "", text, 0.5))]

@pytest.mark.parametrize("heading", [
    "Acknowledgements", "## Acknowledgments", "ACKNOWLEDGEMENTS", "Author contributions", "Authors' contributions",
    "Authors’ contributions", "Publisher’s Note",
    "CRediT authorship contribution statement", "Funding", "Funding information", "Competing interests",
    "Conflict of interest statement", "Conflicts of Interest", "Declaration of competing interest", "Disclosures",
    "7. Acknowledgements", "Publisher's note", "Additional information", "Supporting information",
    "### Additional file", "Additional files",  # BMC's list of supplementary files, before its back matter
])
def test_back_matter_headings_are_told(heading):
    assert is_back_matter_section(heading)


@pytest.mark.parametrize("heading", [
    "Results", "Discussion", "Data availability", "Funding of public hospitals in Malawi", "Methods",
    "Competing risks regression", "Acknowledging uncertainty in the estimates", "", "Additional file formats accepted",
])
def test_sections_about_the_work_are_not_back_matter(heading):
    assert not is_back_matter_section(heading)


@pytest.mark.parametrize("text", [
    "Acknowledgements We thank the field staff of the alpine station for ringing the kestrels.",
    "Funding: This work was supported by the National Science Foundation (grant 1234567).",
    "Author contributions. A.B. and C.D. designed the heat-stress experiments; E.F. ran the metabolomics.",
    # as typeset, with a curly apostrophe (one paper in five of the mixed-fields corpus)
    "Authors’ contributions All authors were involved in the conception and design of the study.",
    "Author Contributions\n• Andrew E. Webb performed the experiments and analyzed the data.",
    "Author details 1Project Officer, Project Fives Alive! Health Directorate, Accra, Ghana.",
    "Grant Disclosures The following grant information was disclosed by the authors: Science Foundation Ireland.",
    "Competing interests: The authors declare that they have no competing interests.",
    "Downloaded from https://academic.oup.com/bioinformatics/article/33/8/1-10/3064465 by guest on 12 March 2024",
    "This content downloaded from 128.42.0.1 on Tue, 05 Mar 2019 12:00:00 UTC",
])
def test_run_in_back_matter_and_download_stamps_are_told(text):
    assert is_back_matter_unit(text)


@pytest.mark.parametrize("text", [
    "Funding for rural clinics fell by 12% after the reform.",
    "Funding 2019 budgets were cut in half.",
    "Acknowledging the bias, we reweighted the sample by age and sex.",
    "The data were downloaded from the national registry and cleaned in R.",
    "Author contributions to open-source packages were counted per commit.",
    "Disclosure of the diagnosis raised adherence to 84%.",
    "Sequences were downloaded from GenBank and aligned with MAFFT.",
])
def test_sentences_about_the_work_are_kept(text):
    assert not is_back_matter_unit(text)


def test_focusing_drops_back_matter_under_its_heading_and_run_in():
    text = ("Young birds departed 9 days later than adults.\n\n"
            "## Acknowledgements\n\n"
            "We thank the observers who recorded the departures of young and adult kestrels.\n\n"
            "## Results\n\n"
            "Funding: The departure study of young kestrels was funded by the Alpine Bird Trust.\n\n"
            "The median departure date was 14 September.")
    assert kept(text) == ["Young birds departed 9 days later than adults.", "The median departure date was 14 September."]


def test_a_back_matter_heading_read_as_a_line_of_text_still_opens_its_section():
    """Some journals set "AUTHOR CONTRIBUTION" in the body font: the extractor reads it as text,
    not as a heading, and the statements under it are back matter all the same."""
    text = ("Young birds departed 9 days later than adults.\n\n"
            "ACKNOWLEDGEMENTS\n\n"
            "This work was supported by the Alpine Bird Trust, which funded the departure study of young kestrels.\n\n"
            "## Results\n\n"
            "The median departure date was 14 September.")
    assert kept(text) == ["Young birds departed 9 days later than adults.", "The median departure date was 14 September."]


def test_a_passage_under_back_matter_is_dropped_unless_it_holds_an_availability_statement():
    from app.core.research.evidence.not_evidence import is_back_matter_passage

    section = "ADDITIONAL INFORMATION AND DECLARATIONS"
    assert is_back_matter_passage(section, "Funding The study was funded by the Alpine Bird Trust.")
    assert not is_back_matter_passage(section, "Funding The study was funded by the Trust.\nData Availability The "
                                               "departure dates are on GitHub.")
    assert not is_back_matter_passage("Results", "Funding The study was funded by the Trust.")


def test_a_data_availability_statement_under_back_matter_stays_evidence():
    text = ("## Additional information and declarations\n\n"
            "Funding: The departure study of young kestrels was funded by the Alpine Bird Trust.\n\n"
            "Data Availability The following information was supplied regarding data availability:\n\n"
            "The departure dates of young kestrels are on GitHub: https://github.com/example/kestrels.")
    assert kept(text) == ["Data Availability The following information was supplied regarding data availability:",
                    "The departure dates of young kestrels are on GitHub: https://github.com/example/kestrels."]


def test_the_library_never_gives_back_matter_as_evidence(make_desk, tmp_path):
    """A real PDF through the real importer, index and funnel: the acknowledgements and the funding
    statement share the question's words, and the results do too; only the results are evidence."""
    from tests.support.pdf_factory import make_paper

    folder = tmp_path / "in"
    folder.mkdir()
    make_paper(folder / "kestrels.pdf", "Autumn Departure of Alpine Kestrels", ["Maria Rossi"], [
        "# Results\n\nYoung kestrels departed from the alpine valleys 9 days later than adult kestrels in autumn.",
        "# Acknowledgements\n\nWe thank the volunteers who watched kestrels depart from the alpine valleys every autumn.\n\n"
        "# Funding\n\nThe study of when kestrels depart from alpine valleys in autumn was funded by the Alpine Bird Trust.",
    ])
    desk = make_desk(tmp_path / "lib")
    try:
        assert desk.add([folder]).ok
        result = desk.research("When do young kestrels depart from alpine valleys in autumn?", evidence_only=True)
    finally:
        desk.close()
    texts = " ".join(e.text for e in result.evidence)
    assert "9 days later" in texts
    assert "volunteers" not in texts and "Alpine Bird Trust" not in texts
