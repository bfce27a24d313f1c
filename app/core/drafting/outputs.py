"""Files a draft is written to: Markdown, LaTeX, BibTeX and the evidence ledger.

`<out>/<section>.md`        the section with Pandoc citations `[@key]` and a reference list
`<out>/<section>.tex`       the same with `\\cite{key}` (a fragment to `\\input`)
`<out>/<section>.bib`       BibTeX entries of the cited papers only, keys as in the text
`<out>/<section>_ledger.csv` / `.md`  claim → paper, page, quote, scores, support verdict; plus the search log
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import fields
from pathlib import Path

from ..bibtex import bibtex, escape
from ..library.store import atomic_write_text
from .draft import DraftResult, LedgerRow, author_year
from .records import CITE_KEY

LEDGER_COLUMNS = [f.name for f in fields(LedgerRow)]


def markdown_document(result: DraftResult) -> str:
    """The section, then a reference list (author–year, title, library id, evidence pages)."""
    lines = [result.markdown.rstrip(), "", "## References", ""]
    for key in sorted(result.cited_keys()):
        pid = next(p for p, k in result.keys.items() if k == key)
        paper = result.papers[pid]
        pages = ", ".join(str(p) for p in result.pages(key))
        lines.append(f"- **{key}**: {author_year(paper)}. *{paper.title}*. Library paper `{pid}`, evidence from page{'s' if ',' in pages else ''} {pages}.")
    return "\n".join(lines) + "\n"


def _inline_latex(text: str) -> str:
    text = escape(text)
    text = re.sub(r"\*\*(.+?)\*\*", r"\\textbf{\1}", text)
    text = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"\\emph{\1}", text)
    text = re.sub(r"\"([^\"]+)\"", r"``\1''", text)
    text = re.sub(r"“([^”]+)”", r"``\1''", text)
    return text


def paragraph_latex(text: str) -> str:
    out = []
    for part in re.split(r"(\[@[^\[\]]+\])", text):
        if part.startswith("[@"):
            keys = CITE_KEY.findall(part)
            out.append("\\cite{" + ",".join(keys) + "}")
        else:
            out.append(_inline_latex(part))
    return re.sub(r"\s+\\cite\{", r"~\\cite{", "".join(out))


def latex_document(result: DraftResult) -> str:
    body = "\n\n".join(paragraph_latex(p.text) for p in result.paragraphs)
    head = f"% {result.title}: drafted by Research Desk from the library. Citation keys resolve in {result.section}.bib.\n"
    if result.section == "abstract":
        return head + "\\begin{abstract}\n" + body + "\n\\end{abstract}\n"
    return head + f"\\section{{{escape(result.title)}}}\n\\label{{sec:{result.section}}}\n\n" + body + "\n"


def bib_document(result: DraftResult) -> str:
    papers = list(result.papers.values())
    return bibtex(papers, result.keys) if papers else ""


def ledger_csv(result: DraftResult) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(LEDGER_COLUMNS)
    for row in result.ledger:
        writer.writerow(["" if getattr(row, c) is None else getattr(row, c) for c in LEDGER_COLUMNS])
    return buffer.getvalue()


def _cell(value) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.3f}"
    return " ".join(str(value).split()).replace("|", "\\|")


SUPPORT_MARK = {"supported": "✓ supported", "partial": "? partly", "unsupported": "✗ unsupported"}


def _support_cell(row) -> str:
    """The support check's verdict (and why, where it is not "supported")."""
    verdict = row.support if isinstance(row.support, str) else ""
    text = SUPPORT_MARK.get(verdict, verdict or "not checked")
    if verdict != "supported" and getattr(row, "support_note", ""):
        text += f": {_cell(row.support_note)}"
    return text


def ledger_markdown(result: DraftResult) -> str:
    lines = [f"# Evidence ledger: {result.title}", ""]
    lines += [
        "| ¶ | Claim | Key | Page | Quote (≤ 30 words) | Vector | LLM | Combined | Support |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in result.ledger:
        claim = r.claim if len(r.claim) <= 160 else r.claim[:159] + "…"
        page = str(r.page) + (f" ({r.page_label})" if r.page_label and r.page_label != str(r.page) else "")
        lines.append(f"| {r.paragraph} | {_cell(claim)} | {r.key} | {page} | {_cell(r.quote)} | {_cell(r.vector_score)} | "
                     f"{_cell(r.llm_score)} | {_cell(r.combined_score)} | {_support_cell(r)} |")
    lines += ["", "## Papers", ""]
    for pid, key in sorted(result.keys.items(), key=lambda t: t[1]):
        paper = result.papers[pid]
        lines.append(f"- {key}: {author_year(paper)}, {paper.title} (library id `{pid}`; pages {', '.join(map(str, result.pages(key)))})")
    lines += ["", "## Searches", "", "| # | Kind | Query | For gap | New passages | Papers | Seconds |", "|---|---|---|---|---|---|---|"]
    for s in result.searches:
        lines.append(f"| {s.number} | {s.kind} | {_cell(s.query)} | {_cell(s.gap) if s.gap else ''} | {s.found} | {len(s.papers)} | {s.seconds:.1f} |"
                     + (f" {s.note}" if s.note else ""))
    stop = result.stop_reason or ", ".join(result.limits_hit) or "default queries only"
    lines += ["", f"Stopped searching because: {stop}.",
              f"Evidence: {len(result.gathered)} passages gathered from {len({e.paper_id for e in result.gathered})} papers; "
              f"{len(result.offered)} passages from {len({e.paper_id for e in result.offered})} papers offered to the writer.",
              f"Time: {result.timings.get('total_s', 0):.0f} s in all ({result.timings.get('gather_s', 0):.0f} s gathering, {result.timings.get('write_s', 0):.0f} s writing)."]
    if result.decisions:
        lines += ["", "## Agent decisions", ""]
        for d in result.decisions:
            verdict = "sufficient" if d.get("sufficient") else "search “" + str(d.get("nextQuery", "")) + "”"
            extra = " (unusable reply)" if d.get("malformed") else " (time ran out)" if d.get("timeout") else ""
            missing = "; ".join(str(m) for m in d.get("missing", [])) or "nothing"
            lines.append(f"- {d.get('iteration')}: missing: {_cell(missing)} → {verdict}{extra}")
    if result.warnings or result.notes:
        lines += ["", "## Warnings", ""] + [f"- {w}" for w in result.warnings + result.notes]
    return "\n".join(lines) + "\n"


def write_outputs(result: DraftResult, out_dir: str | Path) -> dict[str, Path]:
    """Write the five files; returns {"markdown", "latex", "bibtex", "ledger_csv", "ledger_md"} → path."""
    out = Path(out_dir).expanduser()
    out.mkdir(parents=True, exist_ok=True)
    name = result.section
    files = {
        "markdown": (out / f"{name}.md", markdown_document(result)),
        "latex": (out / f"{name}.tex", latex_document(result)),
        "bibtex": (out / f"{name}.bib", bib_document(result)),
        "ledger_csv": (out / f"{name}_ledger.csv", ledger_csv(result)),
        "ledger_md": (out / f"{name}_ledger.md", ledger_markdown(result)),
    }
    for path, text in files.values():
        atomic_write_text(path, text)
    return {kind: path for kind, (path, _) in files.items()}
