"""Keep, discard or abstain: the threshold decides; a verifier can only say no."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from dreaming.memory.research._validate import Validation

__all__ = ["Decision", "Outcome", "decide"]

Outcome = Literal["keep", "discard", "abstain"]


@dataclass(frozen=True, kw_only=True, slots=True)
class Decision:
    """What happens to a gap's finding, and why."""

    outcome: Outcome
    """``keep`` (a deep-sleep candidate), ``discard`` (logged with the reason) or ``abstain`` (no evidence at all)."""
    reason: str
    """One line for DREAMS.md and research.jsonl."""


def decide(validation: Validation, threshold: float, *, veto: str | None = None) -> Decision:
    """Decide a gap from its validation.

    No evidence at all abstains: nothing is ever answered from a model's own knowledge. A confidence at or above
    ``threshold`` keeps, below it discards with the validation's reason. ``veto`` (an optional verifier's objection)
    can only turn a keep into a discard; it never raises anything.
    """
    if validation.evidence_count == 0:
        return Decision(outcome="abstain", reason="no evidence found; nothing is answered from a model's own knowledge")
    best = validation.best
    if best is None:
        dropped = f" ({validation.dropped_claims} cited unknown evidence)" if validation.dropped_claims else ""
        return Decision(
            outcome="discard",
            reason=f"{validation.evidence_count} evidence item(s) found but no claim stood on them{dropped}",
        )
    if best.confidence >= threshold:
        if veto:
            return Decision(outcome="discard", reason=f"vetoed by the verifier: {veto.strip()}")
        return Decision(
            outcome="keep", reason=f"confidence {best.confidence:.2f} >= {threshold:.2f} ({best.method}): {best.reason}"
        )
    return Decision(
        outcome="discard", reason=f"confidence {best.confidence:.2f} < {threshold:.2f} ({best.method}): {best.reason}"
    )
