"""The short factual lines the diary shows above the REM Research section."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from dreaming.memory.research import Conflict, ResearchFinding, redact_secrets

__all__ = ["collect_lines", "promotion_lines"]

_ORDER = ("keep", "discard", "abstain", "failed", "skipped_budget", "skipped_time", "skipped_duplicate")
_WORDS = {
    "keep": "kept",
    "discard": "discarded",
    "abstain": "abstained",
    "failed": "failed",
    "skipped_budget": "skipped (budget)",
    "skipped_time": "skipped (time limit)",
    "skipped_duplicate": "skipped (duplicate)",
}


def collect_lines(findings: Sequence[ResearchFinding], results: Sequence[Mapping[str, Any]]) -> list[str]:
    """Return the counts, what stopped research, and failed sources."""
    if not findings:
        return ["No open knowledge gap to research tonight."]
    counts: Counter[str] = Counter(f.decision for f in findings)
    parts = [f"{counts[d]} {_WORDS[d]}" for d in _ORDER if counts[d]]
    tokens = sum(f.tokens for f in findings)
    cost = sum(f.cost_usd for f in findings)
    lines = [f"Researched {len(findings)} knowledge gaps: {', '.join(parts)}."]
    if tokens:
        lines.append(f"Research used {tokens:,} tokens (${cost:.4f}).")
    budget = [f for f in findings if f.decision == "skipped_budget"]
    if budget:
        lines.append(f"Research stopped by the budget: {budget[0].reason}.")
    if counts["skipped_time"]:
        lines.append(f"Research stopped by its time limit: {counts['skipped_time']} gap(s) not researched.")
    for result in results:
        for source, message in sorted((result.get("failed_sources") or {}).items()):
            lines.append(f"Source `{source}` failed for {result['key']!r}: {redact_secrets(str(message))}")
    return lines


def promotion_lines(promoted: Sequence[Mapping[str, Any]], conflicts: Sequence[Conflict]) -> list[str]:
    """Return one line per insight written and per conflict left for the user."""
    lines = []
    for item in promoted:
        superseded = f", superseding {', '.join(item['superseded'])}" if item.get("superseded") else ""
        lines.append(f"Research insight `{item['id']}` {item['action']}{superseded}.")
    for conflict in conflicts:
        lines.append(f"Conflict left for you: {conflict.question!r} contradicts `{conflict.existing_id}`.")
    return lines
