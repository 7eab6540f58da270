"""The ``memory_search`` tool: the workspace's own memory search behind a narrow seam, and as a LangChain tool.

The seam is synchronous (``search(query, limit)``): the index is a local SQLite file and a search takes
milliseconds. The LangChain tool runs it in a worker thread (``asyncio.to_thread``) when called asynchronously,
so a graph fanning out research never blocks its event loop. Dreaming's own output (DREAMS.md, dream reports,
machine state) is excluded by construction: the index never contains it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field

from dreaming.memory import Workspace
from dreaming.memory.search import MemoryIndex, SearchHit

__all__ = [
    "MAX_TOOL_LIMIT",
    "FakeMemorySearch",
    "MemorySearch",
    "WorkspaceMemorySearch",
    "hits_to_json",
    "memory_search_tool",
]

MAX_TOOL_LIMIT = 20
"""The most hits a model may ask for in one call."""

TOOL_DESCRIPTION = (
    "Search the agent's own memory (daily notes, MEMORY.md, insights) by keywords. Returns a JSON list of hits, "
    "each with path, start_line, end_line, score in [0, 1], snippet and source. The memory never contains "
    "the dream diary or dream reports."
)


class MemorySearch(Protocol):
    """Anything that searches the memory: the real index or a fake."""

    def search(self, query: str, limit: int) -> list[SearchHit]:
        """Return at most ``limit`` hits for ``query``, best first."""
        ...


INSIGHT_ROOM = 8
"""Extra hits asked of the index, so that leaving the insight files out still leaves ``limit`` hits."""


class WorkspaceMemorySearch:
    """The real memory search over a workspace's index (read-only: records no recall and no gap), as research sees it.

    Research never cites dreaming's own conclusions: hits in the insight files (``memory/insights/``, its archive
    included) are left out, or a finding written last night would corroborate itself when its question comes back.

    Keeps the index open for its lifetime and re-checks the files at most every couple of seconds
    (:class:`dreaming.memory.search.MemoryIndex`), so a night of research does not re-scan the workspace per query.
    """

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self._index = MemoryIndex(ws)

    def search(self, query: str, limit: int) -> list[SearchHit]:
        """Search the workspace's memory, insight files left out; see :func:`dreaming.memory.search.search_memory`."""
        insights = self.ws.relative(self.ws.insights_dir) + "/"
        hits = self._index.search(query, limit=limit + INSIGHT_ROOM)
        return [hit for hit in hits if not hit.path.startswith(insights)][:limit]

    def close(self) -> None:
        """Close the index."""
        self._index.close()


@dataclass(frozen=True, slots=True)
class FakeMemorySearch:
    """A memory search driven by a function, for tests: ``FakeMemorySearch(lambda query, limit: [...])``."""

    fn: Callable[[str, int], list[SearchHit]]

    def search(self, query: str, limit: int) -> list[SearchHit]:
        """Return what the function returns, cut to ``limit``."""
        return list(self.fn(query, limit))[: max(0, limit)]


def hits_to_json(hits: list[SearchHit]) -> str:
    """Render hits as the JSON text the tool returns."""
    return json.dumps([hit.to_json() for hit in hits], ensure_ascii=False)


class _MemorySearchArgs(BaseModel):
    query: str = Field(description="Keywords to look for in the memory.")
    limit: int = Field(default=8, ge=1, le=MAX_TOOL_LIMIT, description="How many hits to return at most.")


def memory_search_tool(search: MemorySearch) -> BaseTool:
    """Return a LangChain tool named ``memory_search`` that calls ``search`` and returns the hits as JSON text."""

    def run(query: str, limit: int = 8) -> str:
        return hits_to_json(search.search(query, min(limit, MAX_TOOL_LIMIT)))

    async def arun(query: str, limit: int = 8) -> str:
        return await asyncio.to_thread(run, query, limit)

    return StructuredTool.from_function(
        func=run,
        coroutine=arun,
        name="memory_search",
        description=TOOL_DESCRIPTION,
        args_schema=_MemorySearchArgs,
    )
