"""What may be a claim: the substance rule, and how a code match becomes a statement.

**Substance.** A claim is a statement, not a fragment. It is one when either

1. it is a **definition**: an assignment with a value (``NAME = value``, ``name: type = value``), or a ``def``,
   ``class`` (``function``, ``fn``) line; or
2. it has at least ``MIN_CLAIM_WORDS`` (4) word tokens (identifier parts and numbers count: ``"MAX_GAPS is 5"`` has
   4) and at least one plain word outside any name. ``max_gaps,`` (2 words) and ``"max_gaps", "GAP_CAP_PCT",`` (names
   and punctuation only) are fragments.

**Code statements.** A codebase match offers one statement, built from its matched line only (never from the context
lines around it, which are there for a reader, not for support):

- a definition line, followed by its docstring when the next line of the snippet is one (``MAX_GAPS = 5`` then
  ``\"\"\"At most this many ...\"\"\"``): ``MAX_GAPS = 5 — At most this many ...``. A ``def`` or ``class`` without a
  docstring or trailing comment is only a signature and offers nothing. The cited lines are the definition and that
  docstring, and validation re-reads both;
- a docstring or comment line, as prose; a line of a prose file (Markdown, reStructuredText, text), as prose;
- any other code line that passes the substance rule, as a plain statement (the weakest kind).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from dreaming.memory._terms import word_count
from dreaming.memory.research._evidence import Evidence
from dreaming.memory.research._text import bindings

__all__ = [
    "MIN_CLAIM_WORDS",
    "PROSE_SUFFIXES",
    "CodeStatement",
    "cited_code_lines",
    "cited_span",
    "code_statement",
    "definition_name",
    "is_statement",
    "mapping_entry",
    "open_brackets",
]

MAX_CONTINUATION_LINES = 2
"""How many lines after a matched line a statement may run on to close its brackets (the snippet's context)."""
MIN_CLAIM_WORDS = 4
"""Word tokens a claim needs unless it is a definition (see the module docstring)."""
PROSE_SUFFIXES = (".md", ".markdown", ".rst", ".txt", ".adoc")
"""Files whose lines are prose, not code."""

StatementKind = Literal["definition", "signature", "raise", "prose", "code"]

_DEF = re.compile(r"^\s*(?:export\s+)?(?:async\s+)?(?:def|class|function|fn|func)\s+([A-Za-z_]\w*)")
# "NAME = value" with spaces around "=" (keyword arguments inside a call are not definitions), value not just "(".
_ASSIGN = re.compile(
    r"^\s*(?:export\s+)?(?:(?:const|let|var)\s+)?([A-Za-z_][\w.]*)\s*(?::\s*[^=]+?)?\s=\s+(?P<value>.*\S)"
)
_DOCSTRING = re.compile(r"^\s*[rRuUbBfF]?(\"\"\"|''')(?P<body>.*?)(?:\1)?\s*$")
_COMMENT = re.compile(r"^\s*(?:#+|//+|--|;+|\*+|/\*+)\s*(?P<body>.*?)\s*(?:\*/)?\s*$")
# An annotated parameter with a default on its own line of a signature ("multiplier: float = 1,"); a bare
# "name=value," is as likely a keyword argument of a call, which is not a definition.
_PARAM = re.compile(r"^\s*\*{0,2}(?P<name>[A-Za-z_]\w*)\s*:\s*[^=]+?\s=\s(?P<value>.+?),?\s*(?:#.*)?$")
# An entry of a mapping literal on its own line ("ENDOFPROMPT: 100276,", '"name": "p50k_base",'). A string after an
# unquoted name is as likely an annotation in a class body ('parent: "Node"'), so it needs a quoted key.
_ENTRY = re.compile(
    r"""^\s*(?:(?P<q>["'])(?P<key>[A-Za-z_]\w*)(?P=q)\s*:\s*(?:"[^"]*"|'[^']*'|-?\d[\w.]*|True|False|None)"""
    r"""|(?P<name>[A-Za-z_]\w*)\s*:\s*(?:-?\d[\w.]*|True|False)),?\s*(?:#.*)?$"""
)
_RAISE = re.compile(r"^\s*raise\s+(?P<exc>[A-Za-z_][\w.]*)")
_MARKDOWN_LEAD = re.compile(r"^\s*(?:#+|[-*+>]|\d+[.)])\s+")


def definition_name(line: str) -> str | None:
    """Return the name a code line defines (``MAX_GAPS``, ``select_gaps``), or None when it defines nothing."""
    match = _DEF.match(line)
    if match:
        return match.group(1)
    match = _ASSIGN.match(line)
    if match and re.search(r"[\w\"'`]", match.group("value")) and not line.lstrip().startswith(("#", "//")):
        return match.group(1)
    return None


def mapping_entry(line: str) -> str | None:
    """Return the key a mapping entry on its own line binds (``ENDOFPROMPT: 100276,`` -> ``ENDOFPROMPT``), or None."""
    match = _ENTRY.match(line)
    return (match.group("key") or match.group("name")) if match else None


def is_statement(text: str) -> bool:
    """Return whether ``text`` is a statement by the substance rule (a definition, or enough words with a plain one)."""
    if definition_name(text) is not None:
        return True
    words, plain = word_count(text)
    return words >= MIN_CLAIM_WORDS and plain >= 1


def _docstring(line: str) -> str | None:
    match = _DOCSTRING.match(line)
    return match.group("body").strip() if match and match.group("body").strip() else None


def _comment(line: str) -> str | None:
    match = _COMMENT.match(line)
    return match.group("body") if match and match.group("body") else None


def cited_code_lines(item: Evidence) -> tuple[str, ...]:
    """Return the consecutive lines a codebase match cites (see :func:`cited_span`)."""
    return cited_span(item)[1]


def cited_span(item: Evidence) -> tuple[int, tuple[str, ...]]:
    """Return where a codebase match's cited lines start (relative to ``item.line``) and the lines themselves.

    The matched line, then either the lines that close the brackets it opens (``LIMIT = int(`` ... ``)``, at most
    ``MAX_CONTINUATION_LINES``) or a definition's docstring on the next line; for a docstring line, the whole
    sentence it belongs to, when the snippet holds it. They come from the snippet, so validation re-reads each at
    ``line + offset``. Other evidence, and codebase evidence without a matched line, cites nothing here.
    """
    if item.source_type != "codebase" or item.line_text is None:
        return 0, ()
    matched = item.line_text.strip()
    lines = [line.strip() for line in item.snippet.splitlines()]
    at = next((i for i, line in enumerate(lines) if line == matched), None)
    if at is None or _is_prose_file(item):
        return 0, (matched,)
    if item.role == "docstring":
        return _sentence(lines, at)
    if item.role not in (None, "code", "signature", "body"):
        return 0, (matched,)
    depth = open_brackets(matched)
    if depth > 0:
        cited = [matched]
        for line in lines[at + 1 : at + 1 + MAX_CONTINUATION_LINES]:
            cited.append(line)
            depth += open_brackets(line)
            if depth <= 0:
                return 0, tuple(cited)
        return 0, (matched,)  # the statement goes on past the snippet: only its first line is cited
    if definition_name(matched) is not None and at + 1 < len(lines) and _docstring(lines[at + 1]) is not None:
        return 0, (matched, lines[at + 1])
    return 0, (matched,)


_SENTENCE_CLOSE = (".", "!", "?", ":")


def _prose_line(line: str) -> bool:
    return bool(line) and '"""' not in line and "'''" not in line and not line.endswith(":") and "```" not in line


def _sentence(lines: list[str], at: int) -> tuple[int, tuple[str, ...]]:
    # The docstring sentence around lines[at]: back while the previous line runs on into it, forward until it ends.
    start = at
    while start > 0 and _prose_line(lines[start - 1]) and not lines[start - 1].endswith(_SENTENCE_CLOSE):
        start -= 1
    end = at
    while end + 1 < len(lines) and not lines[end].endswith(_SENTENCE_CLOSE) and _prose_line(lines[end + 1]):
        end += 1
    if start == end or not lines[end].endswith(_SENTENCE_CLOSE[:3]):
        return 0, (lines[at],)
    return start - at, tuple(lines[start : end + 1])


def open_brackets(text: str) -> int:
    """Return the brackets ``text`` opens minus those it closes, outside string literals and comments (roughly)."""
    bare = re.sub(r"\"[^\"]*\"|'[^']*'", "", text.split("#", 1)[0])
    return sum(bare.count(c) for c in "([{") - sum(bare.count(c) for c in ")]}")


def _is_prose_file(item: Evidence) -> bool:
    return (item.path or item.locator.rsplit(":", 1)[0]).lower().endswith(PROSE_SUFFIXES)


@dataclass(frozen=True, slots=True)
class CodeStatement:
    """What a codebase match can say, and of which kind."""

    text: str
    """The statement, as a claim would read."""
    kind: StatementKind
    """``definition`` (a value bound to a name), ``signature`` (a def or class with its docstring), ``raise``,
    ``prose`` (docstring, comment, prose file) or ``code`` (another substantive line)."""
    name: str | None = None
    """For a definition: the name defined; for a ``raise``: the exception raised."""


def code_statement(item: Evidence) -> CodeStatement | None:
    """Return the statement a codebase match offers (see the module docstring), or None for a fragment.

    A line inside a docstring's usage example offers nothing (it shows a call, not what the code does). A code
    statement is followed by its enclosing scope when it has one (``multiplier: float = 1 (in
    wait_exponential.__init__)``), so that it says what it is about; the codebase tool read the scope from the file.
    """
    cited = cited_code_lines(item)
    if not cited or item.role == "example":
        return None
    line = cited[0]
    where = f" (in {item.scope})" if item.scope else ""
    if _is_prose_file(item) or item.role == "prose":
        text = _MARKDOWN_LEAD.sub("", line).strip()
        return CodeStatement(text, "prose") if is_statement(text) else None
    if item.role == "docstring" and len(cited) > 1:
        line = " ".join(part.strip().strip("\"'") for part in cited)
    if item.role in ("docstring", "comment"):
        prose = _docstring(line) or _comment(line) or line.strip().strip("\"'")
        return CodeStatement(prose + where, "prose") if is_statement(prose) else None
    if len(cited) > 1 and _docstring(cited[1]) is None:  # a statement over several lines, read as one
        line = " ".join(cited)
    param = _PARAM.match(line)
    name = definition_name(line) or (param.group("name") if param else None)
    name = name or (mapping_entry(line) if item.role in ("body", "code") else None)
    # A function's local computes; it defines only when it sets a literal ("self.attempt_number: int = 1").
    if name is not None and (item.role != "body" or bindings(line, literal=True)):
        note = _docstring(cited[1]) if len(cited) > 1 else None
        body = line.rstrip(",")
        if note:
            kind: StatementKind = "signature" if _DEF.match(line) else "definition"
            return CodeStatement(f"{body}{where} — {note}", kind, name)
        # A signature alone says nothing, unless it binds defaults ("def decode(self, errors='replace')") or carries
        # a trailing comment.
        if _DEF.match(line) is None or " #" in line or bindings(line):
            return CodeStatement(body + where, "definition", name)
        return None
    raised = _RAISE.match(line)
    if raised:
        return CodeStatement(line + where, "raise", raised.group("exc").rsplit(".", 1)[-1])
    said = _docstring(line) or _comment(line)
    if said is not None:
        return CodeStatement(said + where, "prose") if is_statement(said) else None
    return CodeStatement(line + where, "code") if is_statement(line) else None
