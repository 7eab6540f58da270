"""Search, then record what was recalled and any knowledge gap: what ``dreaming search`` and the agent tool do.

Recording is best effort and must never fail or block the search (OpenClaw's "recall tracking must never block
memory recall"): an error while recording is logged as a warning and counted in the outcome, never raised.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from dreaming.memory.search._search import SearchHit, search_memory
from dreaming.memory.workspace import Workspace

if TYPE_CHECKING:
    from dreaming.memory.gaps import GapType, KnowledgeGap

__all__ = ["SearchOutcome", "search_and_record"]

_log = logging.getLogger(__name__)


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
    ws: Workspace, query: str, *, now: datetime, timezone: str = "UTC", limit: int = 8
) -> SearchOutcome:
    """Search the memory, record the hits as recalls, and record a knowledge gap when the search found little.

    Raises:
        ToolError: the index cannot be opened (the search itself failed; nothing is recorded).
    """
    from dreaming.memory.gaps import classify_gap, record_gap

    hits = search_memory(ws, query, limit=limit)
    errors = 0
    if hits:
        try:
            from dreaming.memory.recall import RecallResult, record_short_term_recalls

            results = [
                RecallResult(
                    path=hit.path,
                    start_line=hit.start_line,
                    end_line=hit.end_line,
                    score=hit.score,
                    snippet=hit.snippet,
                    source=hit.source,
                )
                for hit in hits
            ]
            record_short_term_recalls(ws, query=query, results=results, now=now, timezone=timezone)
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
