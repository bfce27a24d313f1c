"""Citing sentences of a Markdown manuscript with Pandoc citations.

Pandoc's forms: `[@key]`, `[see @a, p. 4; @b]`, `[-@key]` (author suppressed) and
`@key` in running text ("@smith2020 shows …"). Keys are Pandoc's: a letter, digit or
`_` first, then word characters and internal `:.#$%&-+?<>~/`; `@{…}` for anything else.
A YAML front matter's `bibliography:` names the .bib when none is given.
"""

from __future__ import annotations

import logging
import re

from .draft import Cite, Draft, Mapped, citing_sentences

log = logging.getLogger(__name__)

KEY = r"@(?:\{(?P<braced>[^}]+)\}|(?P<plain>[\w][\w:.#$%&\-+?<>~/]*))"
_KEY = re.compile(KEY)
_GROUP = re.compile(r"\[(?P<body>[^\[\]]*?-?@[^\[\]]*?)\](?!\()")
_BARE = re.compile(r"(?<![\w@.\-+])" + KEY)
_FENCE = re.compile(r"^(```|~~~)")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")


def _key(m: re.Match) -> str:
    key = m.group("braced") or m.group("plain")
    return key.rstrip(":.#$%&-+?<>~/")  # trailing punctuation ends the sentence, not the key


def cites_in_group(body: str) -> list[Cite]:
    """`see @a, p. 4; @b` -> [a (p. 4), b]."""
    out = []
    for item in body.split(";"):
        m = _KEY.search(item)
        if not m:
            continue
        key = _key(m)
        rest = item[m.start() + 1 + len(key) + (2 if m.group("braced") else 0) :]
        out.append(Cite(key, " ".join(rest.strip(" ,").split())))
    return out


def scan_line(line: str, offset: int, out: Mapped) -> None:
    """Copy one line of running text into `out`: citations become marks, markup goes."""
    i = 0
    while i < len(line):
        group = _GROUP.match(line, i) if line[i] == "[" else None
        if group:
            cites = cites_in_group(group.group("body"))
            if cites:
                out.cite(cites, offset + i)
                i = group.end()
                continue
        if line[i] == "@":
            bare = _BARE.match(line, i)
            if bare and (i == 0 or not (line[i - 1].isalnum() or line[i - 1] in ".-+_")):
                key = _key(bare)
                out.cite([Cite(key)], offset + i)
                i += 1 + len(key) + (2 if bare.group("braced") else 0)
                continue
        link = _LINK.match(line, i) if line[i] in "[!" else None
        if link:
            if not link.group(0).startswith("!"):
                out.add(link.group(1), offset + i + 1)
            i = link.end()
            continue
        ch = line[i]
        if ch == "`":
            close = line.find("`", i + 1)
            if close > 0:
                out.mark()  # code: a name, which may open a sentence in lower case
                out.add(line[i + 1 : close], offset + i + 1)
                i = close + 1
                continue
        if ch == "$":
            close = line.find("$", i + 1)
            if close > 0:
                out.mark()  # "$p$-values": a symbol
                out.add(re.sub(r"\\[A-Za-z]+|[{}^_]", " ", line[i + 1 : close]), offset + i + 1)
                i = close + 1
                continue
        if ch in "*_" and (i + 1 >= len(line) or not line[i + 1].isalnum() or i == 0 or not line[i - 1].isalnum()):
            if i + 1 < len(line) and line[i + 1].isalnum():
                out.mark()  # an emphasis opens: "*lacZ* mutants" may start a sentence in lower case
            i += 1  # emphasis markers (an underscore inside a word stays)
            continue
        if ch == "\\" and i + 1 < len(line):
            out.add(line[i + 1], offset + i + 1)
            i += 2
            continue
        out.add(ch, offset + i)
        i += 1


def parse_markdown(source: str, path: str = "") -> Draft:
    draft = Draft(path=path, format="markdown")
    lines = source.splitlines(keepends=True)
    offset = 0
    k = 0
    if lines and lines[0].strip() == "---":
        for j in range(1, len(lines)):
            if lines[j].strip() in ("---", "..."):
                front = "".join(lines[1:j])
                m = re.search(r"^bibliography:\s*(?:\[\s*)?[\"']?([^\"'\],\n]+)", front, re.M)
                if m:
                    draft.bib_hint = m.group(1).strip()
                offset = sum(len(x) for x in lines[: j + 1])
                k = j + 1
                break
    mapped = Mapped()
    in_fence = False
    in_math = False
    for line in lines[k:]:
        stripped = line.strip()
        if _FENCE.match(stripped):
            in_fence = not in_fence
            mapped.add_at("\n\n", offset)
        elif not in_fence and (stripped.startswith("$$") or (in_math and stripped.endswith("$$"))):
            one_line = not in_math and len(stripped) > 3 and stripped.endswith("$$")
            if not one_line:
                in_math = not in_math
            mapped.add_at("\n\n", offset)  # display math stands apart from the sentences
        elif in_fence or in_math:
            mapped.add_at(" ", offset)
        elif stripped.startswith("#") or stripped.startswith("|") or stripped.startswith("<!--"):
            mapped.add_at("\n\n", offset)  # headings, table rows, comments: not running text
        else:
            item = re.match(r"^\s*(?:[-*+]|\d+[.)]|>)\s+", line)
            if item:
                mapped.add_at("\n\n", offset)
            skip = item.end() if item else 0
            scan_line(line[skip:], offset + skip, mapped)
        offset += len(line)
    if in_fence:
        draft.problems.append(f"{path or 'the draft'}: a ``` code block is never closed; the text after it is not checked")
    draft.sentences = citing_sentences(mapped, source)
    return draft
