"""The ``memory_search`` tool: the workspace's own memory search behind a narrow seam, and as a LangChain tool.

An agent's tool records what it searched (the day feeding the night); research's tool only searches.

The seam is synchronous (``search(query, limit)``): the index is a local SQLite file and a search takes
milliseconds. The LangChain tool runs it in a worker thread (``asyncio.to_thread``) when called asynchronously,
so a graph fanning out research never blocks its event loop. Dreaming's own output (DREAMS.md, dream reports,
machine state) is excluded by construction: the index never contains it.

:func:`search_and_record` is what ``dreaming search`` does: search, then record what was recalled (each hit's chunk read
as one snippet line, ``memory.recall.note_snippet``) and any knowledge gap. Recording is best effort and must never
fail or block the search (OpenClaw's "recall tracking must never block memory recall"): an error while recording is
logged as a warning and counted in the outcome, never raised.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Protocol

from dreaming.config import load_config
from dreaming.memory import Workspace
from dreaming.memory.gaps import GapType, KnowledgeGap, classify_gap, record_gap
from dreaming.memory.search import MemoryIndex, SearchHit, search_memory

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool
    from pydantic import BaseModel

__all__ = [
    "MAX_TOOL_LIMIT",
    "FakeMemorySearch",
    "MemorySearch",
    "SearchOutcome",
    "WorkspaceMemorySearch",
    "hits_to_json",
    "memory_search_tool",
    "search_and_record",
]

_log = logging.getLogger(__name__)

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
    ``semantic`` (``[search] semantic``) adds the semantic pass.
    """

    def __init__(self, ws: Workspace, *, semantic: bool = False) -> None:
        self.ws = ws
        self._index = MemoryIndex(ws, semantic=semantic)

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


@functools.cache
def _args_schema() -> type[BaseModel]:
    # Made on first use: pydantic and LangChain are the tool's, not the search's (``dreaming search`` loads neither).
    from pydantic import BaseModel, Field

    class _MemorySearchArgs(BaseModel):
        query: str = Field(description="Keywords to look for in the memory.")
        limit: int = Field(default=8, ge=1, le=MAX_TOOL_LIMIT, description="How many hits to return at most.")

    return _MemorySearchArgs


def memory_search_tool(
    source: Workspace | MemorySearch, *, read_only: bool = False, clock: Callable[[], datetime] | None = None
) -> BaseTool:
    """Return a LangChain tool named ``memory_search`` that searches the memory and returns the hits as JSON text.

    Given a workspace, each search is recorded as the night needs it (:func:`search_and_record`: the hits as recalls,
    a miss or a weak result as a knowledge gap), unless ``read_only``, and reads the workspace's ``dreaming.toml``
    (``[search] semantic``). Given a :class:`MemorySearch` (research's seam, or a fake), it only searches: research
    must not feed its own searches back into the night.

    Args:
        source: the workspace, or a search seam.
        read_only: search a workspace without recording anything.
        clock: the time recorded with each search; the real clock (UTC) by default.
    """
    import asyncio

    from langchain_core.tools import StructuredTool

    now = clock or (lambda: datetime.now(UTC))

    def run(query: str, limit: int = 8) -> str:
        limit = min(limit, MAX_TOOL_LIMIT)
        if not isinstance(source, Workspace):
            return hits_to_json(source.search(query, limit))
        config = load_config(source.config_file)
        if read_only:
            return hits_to_json(search_memory(source, query, limit=limit, semantic=config.search.semantic))
        outcome = search_and_record(source, query, now=now(), timezone=config.timezone, limit=limit,
                                    openclaw_compat=config.recall.openclaw_compat,
                                    semantic=config.search.semantic)  # fmt: skip
        return hits_to_json(outcome.hits)

    async def arun(query: str, limit: int = 8) -> str:
        return await asyncio.to_thread(run, query, limit)

    return StructuredTool.from_function(
        func=run,
        coroutine=arun,
        name="memory_search",
        description=TOOL_DESCRIPTION,
        args_schema=_args_schema(),
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class SearchOutcome:
    """The hits of a search and what recording them did."""

    hits: list[SearchHit]
    """The hits, best first."""
    gap_type: GapType | None = None
    """The gap the search left, if any."""
    gap: KnowledgeGap | None = None
    """The recorded gap (None when there was none, or recording it failed)."""
    recording_errors: int = 0
    """How many recording steps failed (each logged as a warning)."""


def search_and_record(
    ws: Workspace,
    query: str,
    *,
    now: datetime,
    timezone: str = "UTC",
    limit: int = 8,
    openclaw_compat: bool = True,
    semantic: bool = False,
) -> SearchOutcome:
    """Search the memory, record the hits as recalls, and record a knowledge gap when the search found little.

    Hits are recorded as OpenClaw's ``memory_search`` records them: every search counts, the same query again the
    same day included. With ``openclaw_compat=False`` (``[recall] openclaw_compat``) a query counts once per entry and
    day, so an agent repeating itself does not inflate a recall (this project's fix). ``semantic`` (``[search]
    semantic``) adds the semantic pass to the search.

    Raises:
        ToolError: the index cannot be opened (the search itself failed; nothing is recorded).
    """
    hits = search_memory(ws, query, limit=limit, semantic=semantic)
    errors = 0
    if hits:
        try:
            # Imported inside the try, as before the move: a recall path that cannot even load is a recording error.
            from dreaming.memory.recall import RecordRules, note_snippet, record_short_term_recalls

            # A hit's chunk is recorded as one snippet line with its heading as context (``Committee: ...; ...``):
            # what MEMORY.md and the diary show when it is promoted, never ``## Committee - ...``.
            recalls = [replace(hit, snippet=note_snippet(hit.snippet.splitlines())) for hit in hits]
            record_short_term_recalls(
                ws, query=query, results=recalls, now=now, timezone=timezone,
                dedupe_by_query_per_day=not openclaw_compat, rules=RecordRules(compat=openclaw_compat),
            )  # fmt: skip
        except Exception as exc:  # recording must never fail the search
            errors += 1
            _log.warning("could not record the recall of %r: %s", query, exc, exc_info=True)
    gap_type = classify_gap(query, hits)
    gap: KnowledgeGap | None = None
    if gap_type is not None:
        try:
            gap = record_gap(ws, query, gap_type, best_score=max((hit.score for hit in hits), default=0.0), now=now)
        except Exception as exc:  # recording must never fail the search
            errors += 1
            _log.warning("could not record the knowledge gap %r: %s", query, exc, exc_info=True)
    return SearchOutcome(hits=hits, gap_type=gap_type, gap=gap, recording_errors=errors)
