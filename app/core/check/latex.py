"""Citing sentences of a LaTeX manuscript.

Reads `\\cite`, `\\citep`, `\\citet`, `\\citealp`, biblatex's `\\parencite`, `\\textcite`,
`\\autocite` (and their starred and capitalised forms) with optional arguments
(`\\citep[see][p.~4]{a,b}`), and `\\bibitem` entries of a thebibliography environment as
the reference list. Comments, math, floats' code and formatting commands are removed
to get each sentence's text; every kept character keeps its offset in the file.
"""

from __future__ import annotations

import logging
import re

from .draft import Cite, Draft, Mapped, citing_sentences

log = logging.getLogger(__name__)

_CITE = re.compile(
    r"\\(?:[Cc]ite[tp]?|[Cc]itealp|[Cc]itealt|[Pp]arencite|[Tt]extcite|[Aa]utocite|[Ff]ootcite|[Ss]martcite|"
    r"[Ss]upercite|[Cc]iteauthor|[Cc]iteyear|[Cc]iteyearpar|cites|parencites|textcites|autocites)\*?(?![A-Za-z])"
)
_NOCITE = re.compile(r"\\nocite\*?\s*\{[^}]*\}")
# Commands whose (first) argument is not running text: dropped with it.
_DROP_ARG = {
    "label", "ref", "eqref", "cref", "Cref", "autoref", "pageref", "url", "includegraphics", "input", "include",
    "bibliographystyle", "bibliography", "addbibresource", "usepackage", "documentclass", "vspace", "hspace",
    "setlength", "newcommand", "renewcommand", "hypersetup", "thispagestyle", "pagestyle", "date",
}
# Commands whose argument is a heading: a paragraph of its own, never part of a sentence.
_HEADINGS = {"section", "subsection", "subsubsection", "chapter", "paragraph", "subparagraph", "part", "title", "author"}
_MATH_ENVS = {"equation", "align", "gather", "multline", "eqnarray", "displaymath", "math", "flalign", "alignat"}
_SKIP_ENVS = {"tabular", "tabular*", "verbatim", "lstlisting", "minted", "tikzpicture", "comment", "thebibliography"}
# Commands that set their argument apart (emphasis, code, a font): a word they open may
# start a sentence in lower case.
_EMPHASIS = {"emph", "textit", "textbf", "textsl", "texttt", "textsf", "textsc", "textup", "mathit", "mathrm",
             "underline", "em", "it", "bf", "sl", "tt", "sc"}
_SYMBOLS = {"%": "%", "&": "&", "$": "$", "#": "#", "_": "_", "{": "", "}": "", ",": " ", ";": " ", ":": " ", "!": "", " ": " ", "\\": " "}


def _braced(src: str, i: int) -> int:
    """Index just past the group opening at src[i] ("{" or "["), nesting respected; -1 if unclosed."""
    open_ch = src[i]
    close_ch = "}" if open_ch == "{" else "]"
    depth = 0
    j = i
    while j < len(src):
        ch = src[j]
        if ch == "\\":
            j += 2
            continue
        if ch == open_ch:
            depth += 1
        elif ch == close_ch:
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return -1


def _skip_space(src: str, i: int) -> int:
    while i < len(src) and src[i] in " \t\n":
        i += 1
    return i


def _locator(text: str) -> str:
    return " ".join(text.replace("~", " ").replace("\\,", " ").split())


def parse_latex(source: str, path: str = "") -> Draft:
    draft = Draft(path=path, format="latex")
    m = re.search(r"\\(?:bibliography|addbibresource)\{([^}]+)\}", _strip_comments(source))
    if m:
        draft.bib_hint = m.group(1).split(",")[0].strip()
    begin = source.find("\\begin{document}")
    start = begin + len("\\begin{document}") if begin >= 0 else 0
    end = source.find("\\end{document}")
    stop = end if end >= 0 else len(source)
    if begin >= 0 and end < 0:
        draft.problems.append(f"{path or 'the draft'}: \\begin{{document}} has no \\end{{document}}; read to the end of the file")
    _read_bibitems(source, draft)
    mapped = Mapped()
    _walk(source, start, stop, mapped, draft)
    draft.sentences = citing_sentences(mapped, source)
    return draft


def _strip_comments(src: str) -> str:
    return re.sub(r"(?<!\\)%.*", "", src)


def _read_bibitems(src: str, draft: Draft) -> None:
    for env in re.finditer(r"\\begin\{thebibliography\}(.*?)(?:\\end\{thebibliography\}|$)", src, re.S):
        body = _strip_comments(env.group(1))
        items = list(re.finditer(r"\\bibitem\s*(?:\[[^\]]*\])?\s*\{([^}]+)\}", body))
        for k, item in enumerate(items):
            text_end = items[k + 1].start() if k + 1 < len(items) else len(body)
            text = re.sub(r"\\newblock|\\emph|\\textit|\\textbf|\\url|[{}~]", " ", body[item.end() : text_end])
            draft.bibitems[item.group(1).strip()] = " ".join(text.split())


def _walk(src: str, i: int, stop: int, out: Mapped, draft: Draft) -> None:
    """Copy running text from src[i:stop] into `out`, handling commands, math and citations."""
    while i < stop:
        ch = src[i]
        if ch == "%":
            nl = src.find("\n", i)
            i = stop if nl < 0 or nl > stop else nl + 1  # a comment also eats its line end (TeX's rule)
            if i < stop and re.match(r"[ \t]*(?:\n|$)", src[i : i + 80]):
                out.add_at("\n", nl)  # …but a blank line after it still ends the paragraph
            continue
        if ch == "$":
            display = src.startswith("$$", i)
            close = src.find("$$" if display else "$", i + (2 if display else 1))
            if close < 0 or close > stop:
                draft.problems.append(_where(src, i, draft, "unclosed $ math; the rest of the paragraph is skipped"))
                para = src.find("\n\n", i)
                i = stop if para < 0 else para
                continue
            if not display:  # inline math may carry a number the sentence states ("$n = 120$")
                out.mark()  # …and is a symbol, which may open a sentence in lower case ("$p$-values")
                out.add(_math_text(src[i + 1 : close]), i + 1)
            else:
                out.add_at(" ", i)
            i = close + (2 if display else 1)
            continue
        if ch == "\\":
            i = _command(src, i, stop, out, draft)
            continue
        if ch in "{}":
            i += 1
            continue
        if ch == "~":
            out.add_at(" ", i)
            i += 1
            continue
        if src.startswith("--", i):  # TeX's dashes: "Lemaître--Tolman" reads "Lemaître–Tolman"
            dash = 3 if src.startswith("---", i) else 2
            out.add_at("—" if dash == 3 else "–", i)
            i += dash
            continue
        out.add(ch, i)
        i += 1


def _math_text(math: str) -> str:
    math = re.sub(r"\\[A-Za-z]+", " ", math)
    return " ".join(math.replace("{", " ").replace("}", " ").replace("^", " ").replace("_", " ").split())


def _where(src: str, offset: int, draft: Draft, what: str) -> str:
    line = src.count("\n", 0, offset) + 1
    return f"{draft.path or 'the draft'}, line {line}: {what}"


def _command(src: str, i: int, stop: int, out: Mapped, draft: Draft) -> int:
    m = _CITE.match(src, i)
    if m:
        return _citation(src, i, m.end(), stop, out, draft)
    if src.startswith("\\nocite", i):
        n = _NOCITE.match(src, i)
        return n.end() if n else i + 7
    if src.startswith("\\(", i) or src.startswith("\\[", i):
        close = src.find("\\)" if src[i + 1] == "(" else "\\]", i + 2)
        if close < 0:
            draft.problems.append(_where(src, i, draft, f"unclosed {src[i:i+2]} math"))
            return stop
        if src[i + 1] == "(":
            out.mark()
            out.add(_math_text(src[i + 2 : close]), i + 2)
        return close + 2
    name_m = re.match(r"\\([A-Za-z]+\*?)", src[i:])
    if not name_m:
        sym = src[i + 1 : i + 2]
        out.add_at(_SYMBOLS.get(sym, ""), i)
        return i + 2
    name = name_m.group(1)
    j = i + len(name_m.group(0))
    base = name.rstrip("*")
    if base in ("begin", "end"):
        env_m = re.match(r"\s*\{([^}]+)\}", src[j:])
        env = env_m.group(1) if env_m else ""
        after = j + (env_m.end() if env_m else 0)
        if base == "begin" and (env.rstrip("*") in _MATH_ENVS or env in _SKIP_ENVS):
            close = src.find(f"\\end{{{env}}}", after)
            if close < 0:
                draft.problems.append(_where(src, i, draft, f"\\begin{{{env}}} is never closed; the rest is skipped"))
                return stop
            out.add_at(" " if env.rstrip("*") in _MATH_ENVS else "\n\n", i)
            return close + len(f"\\end{{{env}}}")
        if env in ("itemize", "enumerate", "description", "figure", "figure*", "table", "table*", "abstract"):
            out.add_at("\n\n", i)
        return after
    if base == "item":
        out.add_at("\n\n", i)
        k = _skip_space(src, j)
        if k < len(src) and src[k] == "[":
            end = _braced(src, k)
            return end if end > 0 else j
        return j
    if base in _HEADINGS or base in _DROP_ARG or base in ("caption", "footnote", "href"):
        k = _skip_space(src, j)
        if k < len(src) and src[k] == "[":
            end = _braced(src, k)
            k = _skip_space(src, end) if end > 0 else k
        if k >= len(src) or src[k] != "{":
            return j
        end = _braced(src, k)
        if end < 0:
            draft.problems.append(_where(src, i, draft, f"\\{base}{{ is never closed; the rest is skipped"))
            return stop
        if base in _HEADINGS:
            out.add_at("\n\n", i)
            return end
        if base in _DROP_ARG:
            return end
        if base == "href":  # \href{url}{text}: the text
            return end
        # caption: a paragraph of its own; footnote: read in place
        if base == "caption":
            out.add_at("\n\n", i)
        _walk(src, k + 1, end - 1, out, draft)
        if base == "caption":
            out.add_at("\n\n", end)
        return end
    # Any other command: dropped, its braced arguments read as text (\emph{x} -> x).
    if base in _EMPHASIS:
        out.mark()  # "\emph{p}-values", "{\it lacZ}": a name that may open a sentence in lower case
    if src[j : j + 1] == " " and base not in ("and",):
        return j + 1  # TeX swallows the space after a control word; keep one word gap
    return j


def _citation(src: str, i: int, j: int, stop: int, out: Mapped, draft: Draft) -> int:
    """\\citep[pre][post]{a,b} (biblatex's \\cites may repeat the group) -> marks for a and b."""
    cites: list[Cite] = []
    k = j
    while True:
        opts = []
        k = _skip_space(src, k)
        while k < stop and src[k] == "[":
            end = _braced(src, k)
            if end < 0:
                break
            opts.append(src[k + 1 : end - 1])
            k = _skip_space(src, end)
        if k >= stop or src[k] != "{":
            if not cites:
                draft.problems.append(_where(src, i, draft, f"{src[i:j]} without a {{key}}"))
            break
        end = _braced(src, k)
        if end < 0:
            draft.problems.append(_where(src, i, draft, f"{src[i:j]}{{ is never closed"))
            return stop
        locator = _locator(opts[-1]) if opts else ""
        for key in src[k + 1 : end - 1].split(","):
            key = key.strip()
            if key:
                cites.append(Cite(key, locator))
        k = end
        if not re.match(r"\s*[\[{]", src[k:k + 40]) or not src[i:j].rstrip("*").endswith("s"):
            break
    out.cite(cites, i)
    return k
