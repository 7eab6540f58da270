"""A managed block in a user's file (MEMORY.md): dreaming's own lines between a start and an end marker.

Markers are recognised on whole lines (``<!-- dreaming:<name>:start -->`` and ``:end -->``, spaces inside the
comment tolerated) and every layout, however broken, is rewritten to exactly one block:

- the first start marker followed by an end marker (later start markers before that end are strays) opens the block;
  the lines between any such pair are dreaming's, and are replaced (the first pair's place keeps the block, other
  pairs are dropped with their content: they are copies an earlier layout bug left);
- an end marker with no start before it, or a start marker with no end after it, is a stray: the marker goes, the
  lines around it stay;
- text sharing a line with a marker was written by someone, since dreaming writes its markers alone on their lines:
  it is kept, moved to its own line outside the block (before it for a start marker, after it for an end marker).

Every line outside the block keeps its bytes, line ending included; lines dreaming adds use the file's own line
ending (CRLF when its first line ends so), and a UTF-8 byte order mark stays first. Each repair is reported with the
line it was found on. Rewriting the result again changes nothing (a fixed point).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["BlockRewrite", "marker_lines", "rewrite_managed_block"]

_BOM = "\ufeff"


@dataclass(frozen=True, slots=True)
class BlockRewrite:
    """The rewritten text and what had to be repaired on the way."""

    text: str
    """The whole file, with exactly one block (or unchanged when there was no block and none was wanted)."""
    repairs: tuple[tuple[int, str], ...]
    """``(line, what was wrong and what was done)`` per repaired problem, 1-based lines of the old text."""


@dataclass(frozen=True, slots=True)
class _Line:
    content: str
    eol: str  # "\n", "\r\n", or "" for a last line without a newline


def marker_lines(name: str) -> tuple[str, str]:
    """Return the canonical start and end marker lines of the block ``name``."""
    return f"<!-- dreaming:{name}:start -->", f"<!-- dreaming:{name}:end -->"


def _split(text: str) -> list[_Line]:
    pieces = text.split("\n")
    lines = []
    for i, piece in enumerate(pieces):
        last = i == len(pieces) - 1
        if last and not piece:
            break
        if not last and piece.endswith("\r"):
            lines.append(_Line(piece[:-1], "\r\n"))
        else:
            lines.append(_Line(piece, "" if last else "\n"))
    return lines


def _fragments(content: str, pattern: re.Pattern[str]) -> tuple[list[str], list[str]]:
    """Return the marker kinds on a line, in order, and the non-blank text around them."""
    kinds = [m.group(1) for m in pattern.finditer(content)]
    texts = [part.strip() for part in pattern.split(content)[::2]]
    return kinds, [t for t in texts if t]


def rewrite_managed_block(text: str, name: str, body: Sequence[str], *, add: bool = True) -> BlockRewrite:
    """Return ``text`` with the block ``name`` holding exactly ``body``, repairing any broken marker layout.

    Args:
        text: the file as it is (decode with ``surrogateescape`` to keep undecodable bytes).
        name: the block's name, as in ``<!-- dreaming:<name>:start -->``.
        body: the lines between the markers. A body line holding a marker of this block is defused (``&lt;!--``).
        add: whether to append a block to a file that has no marker at all (with markers, the block is always kept).
    """
    start_line, end_line = marker_lines(name)
    pattern = re.compile(r"<!--\s*dreaming:" + re.escape(name) + r":(start|end)\s*-->")
    bom = _BOM if text.startswith(_BOM) else ""
    lines = _split(text[len(bom) :])
    newline = "\r\n" if lines and lines[0].eol == "\r\n" else "\n"
    body_lines = [
        line.replace("<!--", "&lt;!--") if pattern.search(line) else line
        for line in "\n".join(body).replace("\r", "").split("\n")
    ]

    repairs: list[tuple[int, str]] = []
    texts: dict[int, list[str]] = {}
    pairs: list[tuple[int, int]] = []
    opened: int | None = None
    for index, line in enumerate(lines):
        if "<!--" not in line.content:
            continue
        kinds, fragments = _fragments(line.content, pattern)
        if not kinds:
            continue
        texts[index] = fragments
        if fragments:
            repairs.append((index + 1, "text on a marker's line; kept on its own line outside the block"))
        for kind in kinds:
            if kind == "start" and opened is None:
                opened = index
            elif kind == "start":
                repairs.append((index + 1, "a second start marker inside the block; removed"))
            elif opened is not None:
                pairs.append((opened, index))
                opened = None
            else:
                repairs.append((index + 1, "an end marker with no start marker before it; removed"))
    if opened is not None:
        repairs.append((opened + 1, "a start marker with no end marker after it; removed (the lines after it kept)"))
    for first, last in pairs[1:]:
        repairs.append((first + 1, f"a second managed block (lines {first + 1}-{last + 1}); removed"))
    if not texts and not add:
        return BlockRewrite(text, ())

    inside = {i for first, last in pairs for i in range(first + 1, last)}
    block = [_Line(start_line, newline), *(_Line(b, newline) for b in body_lines), _Line(end_line, newline)]
    first, last = pairs[0] if pairs else (-1, -1)
    out: list[_Line] = []
    later: list[_Line] = []  # text from marker lines inside the block, moved out after it
    for index, line in enumerate(lines):
        kept = [_Line(t, newline) for t in texts.get(index, ())]
        if index in inside:
            if first < index < last:
                later += kept
            else:
                out += kept
        elif index not in texts:
            out.append(line)
        elif index == first:
            out += kept
            out += block
            if last == index:  # a one-line block: the line's own ending closes it
                out[-1] = _Line(end_line, line.eol)
        elif index == last:
            kept = later + kept
            if kept:
                out += [*kept[:-1], _Line(kept[-1].content, line.eol)]
            else:
                out[-1] = _Line(end_line, line.eol)
        else:
            out += kept
    if not pairs:
        if out and not out[-1].eol:
            out[-1] = _Line(out[-1].content, newline)
        if out and out[-1].content.strip():
            out.append(_Line("", newline))
        out += block
    new = bom + "".join(line.content + line.eol for line in out)
    return BlockRewrite(new, tuple(sorted(repairs)))
