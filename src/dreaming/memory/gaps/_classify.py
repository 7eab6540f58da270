"""Whether a search left a knowledge gap, and of which type (spec/research.md, Gaps)."""

from __future__ import annotations

from collections.abc import Sequence

from dreaming.memory.gaps._model import GapType
from dreaming.memory.search import SearchHit, salient_terms, term_coverage

__all__ = ["LOW_CONFIDENCE", "PARTIAL_COVERAGE", "classify_gap"]

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
    """
    terms = salient_terms(query)
    if not terms:
        return None
    if not hits:
        return "no_results"
    best = max(hits, key=lambda hit: hit.score)
    if best.score < LOW_CONFIDENCE:
        return "low_confidence"
    if term_coverage(terms, best.snippet) < PARTIAL_COVERAGE:
        return "partial_match"
    return None
