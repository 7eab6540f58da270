"""Knowledge gaps: what the agent searched its memory for and did not find (spec/research.md, Gaps)."""

from __future__ import annotations

from dreaming.memory.gaps._model import (
    GAP_STATUSES,
    GAP_TYPES,
    LOW_CONFIDENCE,
    PARTIAL_COVERAGE,
    GapStatus,
    GapType,
    KnowledgeGap,
    classify_gap,
    normalize_query,
)
from dreaming.memory.gaps._store import (
    BACKOFF_SLACK,
    MAX_FRUITLESS_ATTEMPTS,
    MAX_GAPS,
    AttemptOutcome,
    list_gaps,
    record_attempt,
    record_gap,
    select_gaps_for_night,
)

__all__ = [
    "BACKOFF_SLACK",
    "GAP_STATUSES",
    "GAP_TYPES",
    "LOW_CONFIDENCE",
    "MAX_FRUITLESS_ATTEMPTS",
    "MAX_GAPS",
    "PARTIAL_COVERAGE",
    "AttemptOutcome",
    "GapStatus",
    "GapType",
    "KnowledgeGap",
    "classify_gap",
    "list_gaps",
    "normalize_query",
    "record_attempt",
    "record_gap",
    "select_gaps_for_night",
]
