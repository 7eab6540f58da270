"""The managed insight index in ``MEMORY.md``, between dreaming's own markers; every other byte is kept."""

from __future__ import annotations

from dreaming.memory._io import atomic_write_bytes
from dreaming.memory._workspace import Workspace
from dreaming.memory.verdicts._insight_files import InsightFile, read_insight

__all__ = ["INDEX_END", "INDEX_START", "active_insights", "write_memory_index"]

INDEX_START = "<!-- dreaming:insights:start -->"
INDEX_END = "<!-- dreaming:insights:end -->"
_HEADING = "# Long-Term Memory"


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


def _block(ws: Workspace, insights: list[InsightFile]) -> str:
    lines = [_index_line(ws, i) for i in insights] or ["_No active insights._"]
    return f"{INDEX_START}\n## Insights\n\n" + "\n".join(lines) + f"\n{INDEX_END}"


def write_memory_index(ws: Workspace) -> bool:
    """Rewrite the managed block of ``MEMORY.md`` from the active insight files; return whether the file changed.

    Bytes outside the markers are never changed. A missing MEMORY.md is created (with a ``# Long-Term Memory``
    heading) and a file without markers gets the block appended, but only when there is an insight to list.
    """
    insights = active_insights(ws)
    block = _block(ws, insights)
    try:
        text = ws.memory_md.read_bytes().decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        if not insights:
            return False
        return atomic_write_bytes(ws.memory_md, f"{_HEADING}\n\n{block}\n".encode())
    end = text.find(INDEX_END)
    start = text.rfind(INDEX_START, 0, end) if end >= 0 else -1
    if start >= 0:
        new = text[:start] + block + text[end + len(INDEX_END) :]
    elif not insights:
        return False
    else:
        sep = "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
        new = f"{text}{sep}{block}\n"
    return atomic_write_bytes(ws.memory_md, new.encode("utf-8", "surrogateescape"))
