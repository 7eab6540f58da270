"""The budget's typed decision (``Allowed | Skipped``) and its pure candidate checks.

The order of the checks is part of the contract (PR #65589, spec/budget.md) and is tested:

1. ``budget_exceeded``: the breaker is tripped;
2. ``low_quality``: confidence or recall count not finite, or below its threshold (exactly at it passes);
3. ``duplicate``: the fingerprint was already seen this run.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

from dreaming.config import BudgetConfig
from dreaming.memory import fingerprint

__all__ = [
    "Allowed",
    "CandidateGuard",
    "Decision",
    "FilterResult",
    "SkipReason",
    "Skipped",
    "filter_candidates",
    "is_low_quality",
]

SkipReason = Literal["budget_exceeded", "low_quality", "duplicate", "call_limit", "gap_call_limit", "no_llm"]
"""Why something was not done. The first three are the candidate checks; the rest come from the gateway."""

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Allowed:
    """Go ahead."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Skipped:
    """Refused, with the reason."""

    reason: SkipReason
    """Machine-readable reason, counted in reports."""
    detail: str = ""
    """Human-readable explanation for logs and the diary."""

    def describe(self) -> str:
        """Return ``"<reason>: <detail>"`` (the reason alone when there is no detail)."""
        return f"{self.reason}: {self.detail}" if self.detail else self.reason


Decision = Allowed | Skipped
"""The outcome of every budget check."""


def is_low_quality(confidence: float, recalls: float, config: BudgetConfig) -> bool:
    """Return True when either value is not finite or below its threshold; values exactly at it pass."""
    if not (math.isfinite(confidence) and math.isfinite(recalls)):
        return True
    return confidence < config.min_confidence or recalls < config.min_recalls


class CandidateGuard:
    """The three candidate checks of one run, in their contractual order.

    Args:
        config: thresholds (``min_confidence``, ``min_recalls``).
        breaker_tripped: returns True when LLM work must stop (the ledger's breaker).
    """

    def __init__(self, config: BudgetConfig, breaker_tripped: Callable[[], bool]) -> None:
        self._config = config
        self._breaker_tripped = breaker_tripped
        self._seen: set[str] = set()

    @property
    def processed_count(self) -> int:
        """Distinct fingerprints seen this run."""
        return len(self._seen)

    def check(self, text: str, confidence: float, recalls: float) -> Decision:
        """Decide one candidate; an allowed candidate's fingerprint is remembered for this run."""
        if self._breaker_tripped():
            return Skipped(reason="budget_exceeded", detail="the cost breaker is tripped")
        if is_low_quality(confidence, recalls, self._config):
            return Skipped(
                reason="low_quality",
                detail=f"confidence {confidence!r} (min {self._config.min_confidence:g}), "
                f"recalls {recalls!r} (min {self._config.min_recalls:g})",
            )
        key = fingerprint(text)
        if key in self._seen:
            return Skipped(reason="duplicate", detail=f"fingerprint {key} already seen this run")
        self._seen.add(key)
        return Allowed()


@dataclass(frozen=True, kw_only=True, slots=True)
class FilterResult(Generic[T]):
    """Candidates that passed the guard, and how many were skipped for each reason."""

    passed: tuple[T, ...]
    """Allowed candidates, in input order."""
    duplicate: int = 0
    """Skipped as already seen this run."""
    low_quality: int = 0
    """Skipped by the quality gate."""
    budget_exceeded: int = 0
    """Skipped because the breaker was tripped."""


def filter_candidates(
    candidates: Iterable[T],
    guard: CandidateGuard,
    *,
    text: Callable[[T], str],
    confidence: Callable[[T], float],
    recalls: Callable[[T], float],
) -> FilterResult[T]:
    """Run every candidate through ``guard`` and count the skips by reason."""
    passed: list[T] = []
    counts = {"duplicate": 0, "low_quality": 0, "budget_exceeded": 0}
    for candidate in candidates:
        decision = guard.check(text(candidate), confidence(candidate), recalls(candidate))
        if isinstance(decision, Allowed):
            passed.append(candidate)
        else:
            counts[decision.reason] = counts.get(decision.reason, 0) + 1
    return FilterResult(
        passed=tuple(passed),
        duplicate=counts["duplicate"],
        low_quality=counts["low_quality"],
        budget_exceeded=counts["budget_exceeded"],
    )
