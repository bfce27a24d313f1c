"""A paper's front matter is not evidence: contact lines, affiliations, copyright notices.

They sit on the first page beside the abstract, which often answers the question, so the first
turn's window grew from an abstract sentence into "* Correspondence: ball.chad@gmail.com
1Department of Surgery, University of Calgary" or "Douglas Bates University of
Wisconsin-Madison" (bench/focus.py: in the first turn of 4 of 25 mixed-fields questions and 2 of
89 r-papers ones). The authors and their venue are in the paper's metadata, which the answer
cites. Nor is the article's licence ("This is an Open Access article distributed under the terms
of the Creative Commons Attribution License …, which permits unrestricted use …"): it was in the
focused evidence of a development question on trauma prophylaxis, beside the abstract, in place of
a sentence that answered. Kept: a licence of software or data the paper releases ("zoo is released
under the GPL", "the data are available under CC BY 4.0"), and a data or code availability
statement that names the corresponding author ("Data are available from the corresponding author
on request"), which researchers do ask about.

A keyword or classification line ("Keywords: irregular time series, daily data, weekly data",
"JEL classification: C63; C68", "Index Terms—…") is a list of the paper's topics. It holds the
question's own words, so it outscored the sentences that answer: it was in the focused evidence
of 10 of 114 bench questions, in the first turn's window of 4, and quoted as a key sentence
("“Keywords: irregular time series, daily data, weekly data, returns”").
"""

from __future__ import annotations

import re

from ...pdf.page_furniture import COPYRIGHT_NOTICE

# An e-mail address, "Corresponding author", "Correspondence: …"; not "a one-to-one correspondence".
_CONTACT = re.compile(
    r"[\w.+-]+@[\w-]+\.[a-z]{2,}|\bcorresponding authors?\b|\bcorrespondence(?:\s+to)?\s*:|\baddress correspondence\b|\borcid\b",
    re.I)
_INSTITUTION = re.compile(
    r"\b(?:Universit(?:y|ät|é|à|at|ad|e)|Institut[eo]?|Department|Dept\.|College|School of|Hospital|"
    r"Cent(?:er|re) for|Laboratory|Laboratoire|Faculty of)\b")
# A byline with academic degrees, as medical journals print it ("Kiran K. Turaga, MD, MPH* ✉"):
# the degree is followed by a comma or an author mark, never by a word ("MS patients").
_DEGREES = re.compile(r",\s*(?:MD|Ph\.?D|MPH|MBA|MBBS|MSc|MS|MSN|RN|DPhil|DrPH|FRCS|FACS)\s*(?:[,*†‡§¶✉]|$)")
_AVAILABILITY = re.compile(r"\bavailab|\brequest|\bdata\b|\bcode\b|\bsoftware\b", re.I)
# "Keywords:", "Key words.", "Index Terms—", "JEL codes:", "MSC 2010:", "Subject classification:";
# the label is followed by a colon, a full stop or a dash, or (the label in bold, PeerJ) by a
# capitalised list of three or more, so "Keywords matter …" is a sentence.
_KEYWORDS = re.compile(
    r"^\W*(?:key\s*-?words?|index\s+terms|jel(?:\s+classifications?)?(?:\s+codes?)?|"
    r"(?:msc|ams)(?:\s+(?:subject\s+)?classifications?)?(?:\s*\(?\d{4}\)?)?|subject\s+classifications?)"
    r"(?:\s*[:.—–-]|\s+(?=(?-i:[A-Z])[^,;]*[,;][^,;]*[,;]))",  # or set apart by its font: a capitalised list
    re.I)
# Where the paper says how to cite it ("How to cite this article Webb et al. (2017), VESPA: …",
# "Cite this article as: Datta et al.: Complications related to …"), and the article-type label
# a journal sets before the title ("RESEARCH ARTICLE Comparative physiological and metabolomics
# analysis of wheat …", "REVIEW Open Access"): the title's words, outscoring the sentences that
# answer; a PLOS title line was quoted as the support of a claim about the study's limitations.
_CITE_AS = re.compile(r"\bhow to cite this (?:article|paper)\b|\bcite this (?:article|paper) as\s*:|\bto cite this (?:article|version)\s*:", re.I)
_ARTICLE_TYPE = re.compile(
    r"^(?:(?:RESEARCH|ORIGINAL|REVIEW|BRIEF|SHORT|CASE|SYSTEMATIC REVIEW)(?: (?:ARTICLE|RESEARCH|PAPER|REPORT|COMMUNICATION))?"
    r"|OPEN ACCESS|Open Access)(?: Open Access)?(?=\s|$)")
# The article's own licence: the Creative Commons forms open-access journals print on the first page.
_ARTICLE_LICENCE = re.compile(
    r"\bcreative\s+commons\b|\bCC[ -]BY\b|\bopen[ -]access\s+article\b|\bpermits\s+unrestricted\s+use\b|"
    r"\boriginal\s+(?:work|author\(?s?\)?(?:\s+and\s+source)?)\s+(?:is|are)\s+properly\s+(?:cited|credited)\b", re.I)
# The editorial history a journal prints under the title or at the end ("Received: 4 September
# 2013 Accepted: 27 December 2013 Published: 2 January 2014", "Received 25 July 2008\nAccepted …",
# "Accepted for publication in JINST.", "(Received; Revised; Accepted)"): the paper's dates, which
# its metadata holds. The word opens the unit and a date, a punctuation mark or "for publication"
# follows it, unlike a sentence ("Received signal strength fell …").
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_DATE = rf"(?:\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH}|{_MONTH}\s+\d|(?:19|20)\d\d\b|\d{{1,2}}[/.-]\d{{1,2}}[/.-]\d)"
_HISTORY = re.compile(r"^\W*(?:received|accepted|published(?: online)?|revised|submitted)"
                      rf"(?:\s*[:;)]|\s*$|\s+(?:on\s+)?{_DATE}|\s+(?:for publication|in (?:revised|final) form)\b)", re.I)
_HISTORY_WORDS = 30  # a history line is short; a longer unit has run into the text after it
_KEYWORD_LINE_WORDS = 40  # a keyword list; a longer unit has run into the text after it
_AFFILIATION_WORDS = 15  # an affiliation line is short; a sentence naming a university is not one


def is_front_matter(text: str) -> bool:
    """A contact line, a copyright notice, the article's licence, a byline with degrees, a keyword line, the editorial
    history or an affiliation
    (an institution named in a short line that is not a sentence, or a list of two or more institutions)."""
    if _KEYWORDS.match(text) and len(text.split()) <= _KEYWORD_LINE_WORDS:
        return True
    if _HISTORY.match(text) and len(text.split()) <= _HISTORY_WORDS:
        return True
    if COPYRIGHT_NOTICE.search(text) or (_CONTACT.search(text) and not _AVAILABILITY.search(text)):
        return True
    if _CITE_AS.search(text) or (_ARTICLE_LICENCE.search(text) and not _AVAILABILITY.search(text)):
        return True
    sentence = text.rstrip().endswith(".") and not text.rstrip().endswith(("Inc.", "Ltd.", "Dept."))
    if _ARTICLE_TYPE.match(text) and not sentence:
        return True
    if _DEGREES.search(text) and not sentence:
        return True
    institutions = len(_INSTITUTION.findall(text))
    if not institutions:
        return False
    return (len(text.split()) <= _AFFILIATION_WORDS and not sentence) or (institutions >= 2 and "," in text and not sentence)
