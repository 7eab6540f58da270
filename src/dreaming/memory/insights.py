"""Insight files ``memory/insights/<slug>.md``, verdict and research alike: one codec, the index, the prior insights.

This module holds the one front-matter codec, the MEMORY.md index of the active insights, and the prior insights the
next committee sees.

The front matter is a flat block of ``key: value`` lines between ``---`` fences (no YAML library), read by
:func:`parse_front_matter` and written by :func:`render_front_matter`. A key with no value followed by ``  - item``
lines is a list (research insights list their sources so). How a single value is read and written is the one thing
each file kind chooses:

- Verdict insights (:func:`read_insight`, :func:`render_insight`) hold typed scalars: integers, floats,
  ``true``/``false``, ``null`` and strings. A string that could be read back as something else, or that holds
  characters outside a plain set, is written JSON-quoted; the reader also accepts single-quoted strings. Lists are
  read as ``null``.
- Research insights (``memory/research/_insights.py``) are read as strings (:func:`unquote`) and written with
  their own value style: floats with two decimals, ids, dates and enums bare, free text always JSON-quoted.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from dreaming.memory._decode import has_undecodable
from dreaming.memory._managed_block import marker_lines, rewrite_managed_block
from dreaming.memory.files import InputReport, atomic_write_bytes, atomic_write_text, record_event
from dreaming.memory.workspace import Workspace

__all__ = [
    "INDEX_END",
    "INDEX_START",
    "FrontValue",
    "InsightFile",
    "PriorInsights",
    "Scalar",
    "active_insights",
    "insight_paths",
    "load_prior_insights",
    "parse_front_matter",
    "parse_scalar",
    "read_front_matter",
    "read_insight",
    "render_front_matter",
    "render_insight",
    "render_scalar",
    "unquote",
    "write_insight",
    "write_memory_index",
]

Scalar = str | int | float | bool | None
FrontValue = Scalar | Sequence[Scalar]
"""A value to write: a scalar, or a list written as ``  - item`` lines (each item JSON-quoted)."""
_V = TypeVar("_V")

_FENCE = "---"
_INT = re.compile(r"[-+]?\d+")
_FLOAT = re.compile(r"[-+]?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?")
_PLAIN = re.compile(r"[A-Za-z0-9_.+/-](?:[A-Za-z0-9_ .+/()-]*[A-Za-z0-9_.+/)-])?")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


_LIST_ITEM = "  - "
_INDEX_NAME = "insights"
INDEX_START, INDEX_END = marker_lines(_INDEX_NAME)
_HEADING = "# Long-Term Memory"
_log = logging.getLogger(__name__)


def unquote(text: str) -> str:
    """Return a JSON double-quoted value decoded, and any other value as it stands."""
    if not text.startswith('"'):
        return text
    try:
        value = json.loads(text)
    except ValueError:
        return text
    # An escaped lone surrogate could never be written back: keep the text as it stands.
    return value if isinstance(value, str) and not has_undecodable(value) else text


def parse_scalar(text: str) -> Scalar:
    """Read one front-matter value."""
    text = text.strip()
    if not text or text in ("null", "~"):
        return None
    if text == "true":
        return True
    if text == "false":
        return False
    if text[0] == '"':
        return unquote(text)
    if text[0] == "'" and text.endswith("'") and len(text) >= 2:
        return text[1:-1].replace("''", "'")
    if _INT.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text):
        return float(text)
    return text


def render_scalar(value: Scalar) -> str:
    """Write one verdict-insight value: bare when it reads back as itself, else JSON-quoted."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int | float):
        return repr(value)
    if _PLAIN.fullmatch(value) and parse_scalar(value) == value:
        return value
    return json.dumps(value, ensure_ascii=False)


@dataclass(frozen=True, kw_only=True, slots=True)
class InsightFile:
    """One insight file as read from disk."""

    path: Path
    """Where it was read from."""
    front: Mapping[str, Scalar] = field(default_factory=dict)
    """The front matter, in file order."""
    body: str = ""
    """Everything after the closing fence."""

    def _text(self, key: str) -> str:
        value = self.front.get(key)
        return "" if value is None else str(value)

    @property
    def id(self) -> str:
        """Return the ``id`` field, else the file stem."""
        return self._text("id") or self.path.stem

    @property
    def kind(self) -> str:
        """Return ``caution``, ``reliable``, ``research``, ... (empty when absent)."""
        return self._text("kind")

    @property
    def status(self) -> str:
        """Return the ``status`` field (``active`` when absent)."""
        return self._text("status") or "active"

    @property
    def title(self) -> str:
        """Return the ``title`` field, else the first ``# `` heading of the body, else the id."""
        if title := self._text("title"):
            return title
        for line in self.body.splitlines():
            if line.startswith("# "):
                return line[2:].strip()
        return self.id


def parse_front_matter(text: str, decode: Callable[[str], _V]) -> tuple[dict[str, _V | list[_V]], str] | None:
    """Split an insight file's text into its front matter and its body; None when it has no closed front matter.

    Each value is read by ``decode`` (stripped); a key with no value starts a list, whose ``  - item`` lines are
    read by ``decode`` too. Blank lines, ``#`` comment lines and lines without a ``key:`` are skipped; a repeated
    key keeps its last value, in the place of its first.
    """
    lines = text.split("\n")
    if not lines or lines[0].rstrip("\r") != _FENCE:
        return None
    front: dict[str, _V | list[_V]] = {}
    items: list[_V] | None = None
    for i in range(1, len(lines)):
        line = lines[i].rstrip("\r")
        if line == _FENCE:
            return front, "\n".join(lines[i + 1 :])
        if line.startswith(_LIST_ITEM) and items is not None:
            items.append(decode(line[len(_LIST_ITEM) :]))
            continue
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, value = line.partition(":")
        if sep and _KEY.fullmatch(key.strip()):
            value = value.strip()
            if value:
                items = None
                front[key.strip()] = decode(value)
            else:
                items = []
                front[key.strip()] = items
    return None


def render_front_matter(
    front: Iterable[tuple[str, FrontValue]], render: Callable[[str, Scalar], str] | None = None
) -> str:
    """Return the fenced front matter of ``front`` (pairs, in order; a key may repeat), ending with a newline.

    A scalar is written by ``render(key, value)`` (default: :func:`render_scalar`); a list is written as ``key:``
    followed by one JSON-quoted ``  - item`` line per item.
    """
    lines = [_FENCE]
    for key, value in front:
        if isinstance(value, str | int | float | bool) or value is None:
            lines.append(f"{key}: {render_scalar(value) if render is None else render(key, value)}")
        else:
            lines.append(f"{key}:")
            lines.extend(f"{_LIST_ITEM}{json.dumps(str(item), ensure_ascii=False)}" for item in value)
    lines.append(_FENCE)
    return "\n".join(lines) + "\n"


def read_front_matter(path: Path, decode: Callable[[str], _V]) -> tuple[dict[str, _V | list[_V]], str] | None:
    """Read a file's front matter and body (see :func:`parse_front_matter`); None when missing or unreadable."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return parse_front_matter(text, decode)


def read_insight(path: Path) -> InsightFile | None:
    """Read an insight file; return None when it is missing, unreadable or has no front matter."""
    split = read_front_matter(path, parse_scalar)
    if split is None:
        return None
    front, body = split
    scalars = {key: None if isinstance(value, list) else value for key, value in front.items()}
    return InsightFile(path=path, front=scalars, body=body)


def render_insight(front: Mapping[str, Scalar], body: str) -> str:
    """Return the text of an insight file: front matter in the given key order, then the body."""
    return render_front_matter(front.items()) + body


def write_insight(path: Path, front: Mapping[str, Scalar], body: str) -> bool:
    """Write an insight file atomically; return whether its bytes changed."""
    return atomic_write_text(path, render_insight(front, body))


# The MEMORY.md index.


def insight_paths(ws: Workspace, folder: Path, pattern: str = "*.md") -> list[Path]:
    """Return the files of ``folder`` matching ``pattern`` whose real path is in the workspace, sorted by name.

    A link leading out of the workspace is left out, as memory search leaves it out: an insight is read into the
    agent's prompt, MEMORY.md's index and the viewer, and ``memory/insights/x.md -> /etc/passwd`` must reach none.
    """
    if not folder.is_dir() or not ws.contains(folder):
        return []
    return [path for path in sorted(folder.glob(pattern)) if path.is_file() and ws.contains(path)]


def active_insights(ws: Workspace) -> list[InsightFile]:
    """Return every active insight in ``memory/insights/*.md`` (any kind), sorted by file name.

    Files without front matter, files whose ``status`` is not ``active``, and links leading out of the workspace
    (:func:`insight_paths`) are left out.
    """
    found = []
    for path in insight_paths(ws, ws.insights_dir):
        insight = read_insight(path)
        if insight is not None and insight.status == "active":
            found.append(insight)
    return found


def _index_line(ws: Workspace, insight: InsightFile) -> str:
    link = ws.relative(insight.path)
    front = insight.front
    if insight.kind == "research" or ("confidence" in front and "score" not in front):
        figures = f"confidence {front.get('confidence')}"
    else:
        figures = f"score {front.get('score')}, n={front.get('n')}"
    title = insight.title.replace("[", "(").replace("]", ")")
    return f"- [{title}]({link}) — {figures}"


def _body(ws: Workspace, insights: list[InsightFile]) -> list[str]:
    return ["## Insights", "", *([_index_line(ws, i) for i in insights] or ["_No active insights._"])]


def write_memory_index(ws: Workspace, *, now: datetime | None = None, report: InputReport | None = None) -> bool:
    """Rewrite the managed block of ``MEMORY.md`` from the active insight files; return whether the file changed.

    Lines outside the markers keep their bytes; a broken marker layout (an end before the start, duplicate or stray
    markers, text on a marker's line) is repaired to exactly one block (see ``memory/_managed_block.py``) and each
    repair is logged, added to ``report`` as ``MEMORY.md:<line>``, and recorded in ``events.jsonl`` stamped ``now``
    (when given). A missing
    MEMORY.md is created (with a ``# Long-Term Memory`` heading) and a file without markers gets the block appended,
    but only when there is an insight to list.
    """
    insights = active_insights(ws)
    body = _body(ws, insights)
    try:
        text = ws.memory_md.read_bytes().decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        if not insights:
            return False
        text = f"{_HEADING}\n"
    rewrite = rewrite_managed_block(text, _INDEX_NAME, body, add=bool(insights))
    for line, reason in rewrite.repairs:
        _log.warning("MEMORY.md:%d: %s", line, reason)
        if report is not None:
            report.skip("MEMORY.md", line, reason)
    if rewrite.repairs and now is not None:
        record_event(
            ws.events, "memory.markers_repaired", now,
            repairs=[f"MEMORY.md:{line}: {reason}" for line, reason in rewrite.repairs],
        )  # fmt: skip
    if rewrite.text == text:
        return False
    return atomic_write_bytes(ws.memory_md, rewrite.text.encode("utf-8", "surrogateescape"))


# The prior insights.


@dataclass(frozen=True, kw_only=True, slots=True)
class PriorInsights:
    """The active insights, newest confirmation first, and the same rendered as prompt text."""

    insights: tuple[InsightFile, ...] = ()
    """Active insight files, newest ``last_confirmed`` first, then by id."""
    text: str = ""
    """A block to put in a prompt; empty when there is no insight."""


def _matches(value: object, wanted: str | None) -> bool:
    return wanted is None or (isinstance(value, str) and value.casefold() == wanted.casefold())


def _figures(insight: InsightFile) -> str:
    front = insight.front
    parts = []
    if "score" in front:
        parts.append(f"score {front['score']}, n={front.get('n')}")
    elif "confidence" in front:
        parts.append(f"confidence {front['confidence']}")
    if front.get("last_confirmed"):
        parts.append(f"last confirmed {front['last_confirmed']}")
    return "; ".join(parts)


PRIOR_HEADING_LEVEL = 3
"""Each insight is a ``###`` heading in the prior-insights text; its body's own headings sit below it."""
_MD_HEADING = re.compile(r"^(#{1,6})(\s.*)?$")
_MD_FENCE = re.compile(r"^\s{0,3}(```|~~~)")


def _nested_body(body: str, under: int) -> list[str]:
    """Return an insight body's lines with its ``#`` title dropped and its headings moved under level ``under``.

    The shallowest remaining heading becomes level ``under + 1`` and the others keep their distance to it (at most
    six ``#``), so a body's ``## Statistics`` reads as ``#### Statistics`` under the insight's ``###`` heading.
    Lines inside fenced code blocks are never headings.
    """
    lines: list[str] = []
    headings: list[int] = []
    fenced = False
    for line in body.strip().splitlines():
        if _MD_FENCE.match(line):
            fenced = not fenced
        match = None if fenced else _MD_HEADING.match(line)
        if match and len(match.group(1)) == 1:
            continue  # the title, which the insight's own heading already says
        if match:
            headings.append(len(lines))
        lines.append(line)
    if headings:
        shift = under + 1 - min(len(lines[i]) - len(lines[i].lstrip("#")) for i in headings)
        for i in headings:
            level = len(lines[i]) - len(lines[i].lstrip("#"))
            lines[i] = "#" * min(6, level + shift) + lines[i][level:]
    return lines


def _prior_text(insight: InsightFile) -> str:
    figures = _figures(insight)
    head = "#" * PRIOR_HEADING_LEVEL + f" {insight.title}" + (f" ({figures})" if figures else "")
    return head + "\n" + "\n".join(_nested_body(insight.body, PRIOR_HEADING_LEVEL)).strip()


def load_prior_insights(ws: Workspace, *, asset: str | None = None, regime: str | None = None) -> PriorInsights:
    """Return the active insights (optionally only those about ``asset`` and/or ``regime``) and their prompt text.

    The text is one introductory line, then each insight under a ``###`` heading (its title and figures) with its
    body's headings below that (``####``), whatever levels the file itself uses.

    Filters compare case-insensitively with the insight's ``asset`` and ``regime`` fields, so an insight without
    them (a research finding) is included only when no filter is given.
    """
    chosen = [
        i
        for i in active_insights(ws)
        if _matches(i.front.get("asset"), asset) and _matches(i.front.get("regime"), regime)
    ]
    chosen.sort(key=lambda i: i.id)
    chosen.sort(key=lambda i: str(i.front.get("last_confirmed") or ""), reverse=True)
    if not chosen:
        return PriorInsights()
    kinds = [k for k, present in (("past committee verdicts", any("verdict" in i.front for i in chosen)),
                                  ("research", any("verdict" not in i.front for i in chosen))) if present]  # fmt: skip
    text = (
        f"Prior insights from dreaming ({len(chosen)}), learned from {' and '.join(kinds)}. "
        "The numbers are computed, not opinions:\n\n" + "\n\n".join(_prior_text(i) for i in chosen) + "\n"
    )
    return PriorInsights(insights=tuple(chosen), text=text)
