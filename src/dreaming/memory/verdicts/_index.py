"""The managed insight index in ``MEMORY.md``, between dreaming's own markers; every other byte is kept."""

from __future__ import annotations

import logging
from datetime import datetime

from dreaming.memory._managed_block import marker_lines, rewrite_managed_block
from dreaming.memory.files import InputReport, atomic_write_bytes, record_event
from dreaming.memory.verdicts._insight_files import InsightFile, read_insight
from dreaming.memory.workspace import Workspace

__all__ = ["INDEX_END", "INDEX_START", "active_insights", "write_memory_index"]

INDEX_NAME = "insights"
INDEX_START, INDEX_END = marker_lines(INDEX_NAME)
_HEADING = "# Long-Term Memory"
_log = logging.getLogger(__name__)


def active_insights(ws: Workspace) -> list[InsightFile]:
    """Return every active insight in ``memory/insights/*.md`` (any kind), sorted by file name.

    Files without front matter, and files whose ``status`` is not ``active``, are left out.
    """
    folder = ws.insights_dir
    if not folder.is_dir():
        return []
    found = []
    for path in sorted(folder.glob("*.md")):
        insight = read_insight(path) if path.is_file() else None
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
    rewrite = rewrite_managed_block(text, INDEX_NAME, body, add=bool(insights))
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
