"""Keep, discard or abstain: the threshold decides; a verifier can only say no."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from dreaming.memory.research._relevance import RELEVANCE_FRACTION
from dreaming.memory.research._validate import ClaimValidation, Validation

__all__ = ["Decision", "Outcome", "decide"]

Outcome = Literal["keep", "discard", "abstain"]


@dataclass(frozen=True, kw_only=True, slots=True)
class Decision:
    """What happens to a gap's finding, and why."""

    outcome: Outcome
    """``keep`` (a deep-sleep candidate), ``discard`` (logged with the reason) or ``abstain`` (no evidence at all)."""
    reason: str
    """One line for DREAMS.md and research.jsonl: the numbers and rules behind the outcome."""
    why: str = ""
    """For a discard or abstain: why, in plain words, for the user reading DREAMS.md."""


def _why_low(best: ClaimValidation, threshold: float) -> str:
    # The first thing that held the claim back, in the words a user would use.
    if not best.statement:
        return "the closest match is a fragment of code or text, not a statement"
    if best.relevance < RELEVANCE_FRACTION:
        return "what was found is about something else"
    if not best.supporting_ids:
        cited = [c for c in best.checks if c.cited]
        if any(c.reverified is False for c in cited):
            return "the code it rests on has changed or could not be re-read"
        if any(c.missing_numbers for c in cited):
            return "the sources it cites do not state its number"
        return "the sources it cites do not actually say it"
    if best.contradicting_sources:
        count = len(best.contradicting_sources)
        return f"{count} source{'s' if count > 1 else ''} say{'' if count > 1 else 's'} otherwise"
    if len(best.supporting_sources) == 1:
        return "only one source says it, and one web page or note is not enough on its own"
    return f"the sources agree only weakly ({best.confidence:.2f}, {threshold:.2f} needed)"


def decide(validation: Validation, threshold: float, *, veto: str | None = None) -> Decision:
    """Decide a gap from its validation.

    No evidence at all abstains: nothing is ever answered from a model's own knowledge. A confidence at or above
    ``threshold`` keeps, below it discards with the validation's reason. ``veto`` (an optional verifier's objection)
    can only turn a keep into a discard; it never raises anything.
    """
    if validation.evidence_count == 0:
        return Decision(
            outcome="abstain",
            reason="no evidence found; nothing is answered from a model's own knowledge",
            why="nothing was found in any source",
        )
    best = validation.best
    if best is None:
        dropped = f" ({validation.dropped_claims} cited unknown evidence)" if validation.dropped_claims else ""
        return Decision(
            outcome="discard",
            reason=f"{validation.evidence_count} evidence item(s) found but no claim stood on them{dropped}",
            why=f"{validation.evidence_count} passages were found, but none of them states an answer to the question",
        )
    if best.confidence >= threshold:
        if veto:
            return Decision(
                outcome="discard",
                reason=f"vetoed by the verifier: {veto.strip()}",
                why="a second reading by the model rejected it",
            )
        return Decision(
            outcome="keep", reason=f"confidence {best.confidence:.2f} >= {threshold:.2f} ({best.method}): {best.reason}"
        )
    return Decision(
        outcome="discard",
        reason=f"confidence {best.confidence:.2f} < {threshold:.2f} ({best.method}): {best.reason}",
        why=_why_low(best, threshold),
    )
