"""The knowledge-gap record, how a query becomes its key, and whether a search left a gap (spec/research.md, Gaps)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, get_args

from dreaming.memory._terms import index_salient_terms, query_coverage

if TYPE_CHECKING:
    from dreaming.memory.search import SearchHit

__all__ = [
    "LOW_CONFIDENCE",
    "PARTIAL_COVERAGE",
    "GapStatus",
    "GapType",
    "KnowledgeGap",
    "classify_gap",
    "normalize_query",
]

GapType = Literal["no_results", "low_confidence", "partial_match"]
"""Why a search left a gap: it found nothing, only weak hits, or hits covering under half the query."""

GapStatus = Literal["open", "kept", "discarded", "unresolved", "backlog"]
"""Where a gap stands.

``open``: waiting for research (possibly in backoff after fruitless attempts, see ``next_attempt_after``).
``kept``: research kept a finding. ``backlog``: four fruitless attempts; listed in DREAMS.md for the user.
``discarded`` and ``unresolved`` close a gap without a finding; they are read and kept but never selected.
"""

GAP_TYPES: tuple[str, ...] = get_args(GapType)
GAP_STATUSES: tuple[str, ...] = get_args(GapStatus)

_SPACES = re.compile(r"\s+")
_EDGE_PUNCTUATION = re.compile(r"^[\W_]+|[\W_]+$")


def normalize_query(query: str) -> str:
    """Return the aggregation key of a query: lowercased, whitespace collapsed, punctuation stripped at both ends."""
    return _EDGE_PUNCTUATION.sub("", _SPACES.sub(" ", query.lower()).strip())


@dataclass(frozen=True, kw_only=True, slots=True)
class KnowledgeGap:
    """Something the agent searched its memory for and did not find, aggregated over every time it was asked."""

    key: str
    """The normalized query (:func:`normalize_query`), the key in ``knowledge-gaps.json``."""
    query: str
    """The query as first asked."""
    first_seen: datetime
    """When it was first recorded."""
    last_seen: datetime
    """When it was last recorded."""
    count: int
    """How many times it was recorded."""
    best_score: float
    """The best search score ever seen for it (0 when nothing was found)."""
    type: GapType
    """The classification of the latest recording."""
    status: GapStatus
    """Where it stands."""
    attempts: int = 0
    """Fruitless research attempts (discarded, abstained or failed)."""
    last_attempt: datetime | None = None
    """When research last tried it."""
    last_outcome: str | None = None
    """The outcome of that attempt: ``kept``, ``discarded``, ``abstained`` or ``failed``."""
    next_attempt_after: datetime | None = None
    """Research waits until then before trying again (backoff)."""

    def to_json(self) -> dict[str, Any]:
        """Return the stored form (without the key, which is the object's name in the file)."""
        return {
            "query": self.query,
            "first_seen": self.first_seen.isoformat(),
            "last_seen": self.last_seen.isoformat(),
            "count": self.count,
            "best_score": self.best_score,
            "type": self.type,
            "status": self.status,
            "attempts": self.attempts,
            "last_attempt": self.last_attempt.isoformat() if self.last_attempt else None,
            "last_outcome": self.last_outcome,
            "next_attempt_after": self.next_attempt_after.isoformat() if self.next_attempt_after else None,
        }

    @classmethod
    def from_json(cls, key: str, raw: Any) -> KnowledgeGap:
        """Parse one stored gap.

        Raises:
            ValueError: a field is missing or of the wrong type.
        """
        if not isinstance(raw, dict):
            raise ValueError("not a JSON object")
        try:
            gap_type = raw["type"]
            status = raw["status"]
            if gap_type not in GAP_TYPES or status not in GAP_STATUSES:
                raise ValueError(f"unknown type {gap_type!r} or status {status!r}")
            count, attempts = raw["count"], raw.get("attempts", 0)
            if not isinstance(count, int) or not isinstance(attempts, int) or isinstance(count, bool):
                raise ValueError("count and attempts must be integers")
            return cls(
                key=key,
                query=str(raw["query"]),
                first_seen=_when(raw["first_seen"]),
                last_seen=_when(raw["last_seen"]),
                count=count,
                best_score=float(raw.get("best_score") or 0.0),
                type=gap_type,
                status=status,
                attempts=attempts,
                last_attempt=_when(raw["last_attempt"]) if raw.get("last_attempt") else None,
                last_outcome=raw.get("last_outcome"),
                next_attempt_after=_when(raw["next_attempt_after"]) if raw.get("next_attempt_after") else None,
            )
        except (KeyError, TypeError) as exc:
            raise ValueError(f"missing or bad field: {exc}") from exc


def _when(value: Any) -> datetime:
    if not isinstance(value, str):
        raise ValueError(f"not a timestamp: {value!r}")
    parsed = datetime.fromisoformat(value)
    if parsed.tzinfo is None:
        raise ValueError(f"timestamp without a timezone: {value!r}")
    return parsed


LOW_CONFIDENCE = 0.35
"""A best score under this is a weak answer. With the search score, that means no hit holds even about a third of
the query's salient terms: a chunk with every term scores at least 0.6."""

PARTIAL_COVERAGE = 0.5
"""A best hit holding under this share of the query's salient terms answers only part of the question."""


def classify_gap(query: str, hits: Sequence[SearchHit]) -> GapType | None:
    """Return the gap a search for ``query`` left, or None when its hits answer it.

    The checks run in this order: no hits is ``no_results``; a best score under :data:`LOW_CONFIDENCE` is
    ``low_confidence``; a best hit (highest score) whose snippet holds under :data:`PARTIAL_COVERAGE` of the salient
    terms is ``partial_match``. A query with no letters or digits leaves no gap: there is nothing to look for.

    A term counts as held when the snippet holds it exactly or by morphology (:func:`dreaming.memory.search.
    query_coverage`): a hit the search found by its stems or CJK bigrams answers the query as well as the search says.
    """
    terms = index_salient_terms(query)
    if not terms:
        return None
    if not hits:
        return "no_results"
    best = max(hits, key=lambda hit: hit.score)
    if best.score < LOW_CONFIDENCE:
        return "low_confidence"
    if query_coverage(query, best.snippet) < PARTIAL_COVERAGE:
        return "partial_match"
    return None
