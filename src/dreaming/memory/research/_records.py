"""A gap's research outcome: keep, discard or abstain, and its row in ``research.jsonl`` (one per attempt, append-only).

:func:`decide` turns a validation into a :class:`FindingDecision`: the threshold decides; a verifier can only say no.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from dreaming.memory.files import append_jsonl, rotate_if_larger
from dreaming.memory.research._evidence import Claim, Evidence, redact_secrets
from dreaming.memory.research._relevance import RELEVANCE_FRACTION
from dreaming.memory.research._validate import ClaimValidation, Validation, ValidationMethod
from dreaming.memory.workspace import Workspace

__all__ = [
    "RESEARCH_LOG_VERSION",
    "FindingDecision",
    "FindingOutcome",
    "Outcome",
    "ResearchFinding",
    "append_research_log",
    "decide",
    "finding_from_validation",
    "research_log_row",
]

RESEARCH_LOG_VERSION = 1
"""The ``v`` field of every research.jsonl row."""

FindingOutcome = Literal["keep", "discard", "abstain", "failed", "skipped_budget", "skipped_duplicate", "skipped_time"]


Outcome = Literal["keep", "discard", "abstain"]


@dataclass(frozen=True, kw_only=True, slots=True)
class FindingDecision:
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


def decide(validation: Validation, threshold: float, *, veto: str | None = None) -> FindingDecision:
    """Decide a gap from its validation.

    No evidence at all abstains: nothing is ever answered from a model's own knowledge. A confidence at or above
    ``threshold`` keeps, below it discards with the validation's reason. ``veto`` (an optional verifier's objection)
    can only turn a keep into a discard; it never raises anything.
    """
    if validation.evidence_count == 0:
        return FindingDecision(
            outcome="abstain",
            reason="no evidence found; nothing is answered from a model's own knowledge",
            why="nothing was found in any source",
        )
    best = validation.best
    if best is None:
        dropped = f" ({validation.dropped_claims} cited unknown evidence)" if validation.dropped_claims else ""
        return FindingDecision(
            outcome="discard",
            reason=f"{validation.evidence_count} evidence item(s) found but no claim stood on them{dropped}",
            why=f"{validation.evidence_count} passages were found, but none of them states an answer to the question",
        )
    if best.confidence >= threshold:
        if veto:
            return FindingDecision(
                outcome="discard",
                reason=f"vetoed by the verifier: {veto.strip()}",
                why="a second reading by the model rejected it",
            )
        return FindingDecision(
            outcome="keep", reason=f"confidence {best.confidence:.2f} >= {threshold:.2f} ({best.method}): {best.reason}"
        )
    return FindingDecision(
        outcome="discard",
        reason=f"confidence {best.confidence:.2f} < {threshold:.2f} ({best.method}): {best.reason}",
        why=_why_low(best, threshold),
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class ResearchFinding:
    """Everything one gap's research came to."""

    gap: str
    """The gap's query."""
    decision: FindingOutcome
    """What happened to it."""
    reason: str
    """Why, in one line: the numbers and rules behind the decision."""
    why: str = ""
    """For a discard or abstain: why, in plain words (empty when not given)."""
    claim: Claim | None = None
    """The claim decided on (the best validated one), if any."""
    evidence: tuple[Evidence, ...] = ()
    """The claim's supporting evidence, or every evidence item when there is no supported claim."""
    confidence: float = 0.0
    """The validation's confidence."""
    method: ValidationMethod | None = None
    """The validation method, None when nothing was validated."""
    independent_sources: int = 0
    """How many independent sources support the claim (the supersede rule needs two)."""
    user_stated: bool = False
    """The claim is a line of the user's own notes (kept on the user's word)."""
    tokens: int = 0
    """LLM tokens spent on this gap."""
    cost_usd: float = 0.0
    """LLM cost of this gap."""
    duration_s: float = 0.0
    """Wall time spent on this gap."""

    @property
    def kept(self) -> bool:
        """Return whether the finding is kept."""
        return self.decision == "keep"

    @property
    def locators(self) -> tuple[str, ...]:
        """Return the rendered sources: URLs and ``path:line``, in evidence order."""
        return tuple(dict.fromkeys(item.locator for item in self.evidence))


def finding_from_validation(
    gap: str,
    validation: Validation,
    decision: FindingDecision,
    *,
    evidence: Iterable[Evidence],
    tokens: int = 0,
    cost_usd: float = 0.0,
    duration_s: float = 0.0,
) -> ResearchFinding:
    """Assemble a finding from a validation and its decision; ``evidence`` is the gap's whole pool."""
    pool = tuple(evidence)
    best = validation.best
    if best is not None and best.supporting_ids:
        cited = tuple(item for item in pool if item.id in best.supporting_ids)
    else:
        cited = pool
    return ResearchFinding(
        gap=gap,
        decision=decision.outcome,
        reason=decision.reason,
        why=decision.why,
        claim=best.claim if best else None,
        evidence=cited,
        confidence=best.confidence if best else 0.0,
        method=best.method if best else None,
        independent_sources=len(best.supporting_sources) if best else 0,
        user_stated=best.user_stated if best else False,
        tokens=tokens,
        cost_usd=cost_usd,
        duration_s=duration_s,
    )


def research_log_row(run_id: str, finding: ResearchFinding, now: datetime) -> dict[str, Any]:
    """Return the research.jsonl row of one attempt."""
    return {
        "v": RESEARCH_LOG_VERSION,
        "run_id": run_id,
        "ts": now.isoformat(),
        "gap": redact_secrets(finding.gap),
        "decision": finding.decision,
        "confidence": finding.confidence,
        "method": finding.method,
        "user_stated": finding.user_stated,
        "claim": redact_secrets(finding.claim.text) if finding.claim else None,
        "evidence_ids": [item.id for item in finding.evidence],
        "locators": list(finding.locators),
        "tokens": finding.tokens,
        "cost_usd": round(finding.cost_usd, 6),
        "reason": redact_secrets(finding.reason),
        "duration_s": round(finding.duration_s, 3),
    }


RESEARCH_LOG_MAX_BYTES = 8 * 1024 * 1024
"""Past this size ``research.jsonl`` is rotated to ``research.jsonl.1`` (one generation kept), so it stays bounded."""


def append_research_log(ws: Workspace, rows: Iterable[Mapping[str, Any]]) -> None:
    """Append rows to ``memory/.dreams/research.jsonl`` in one write (a night's rows stay together at the end)."""
    rotate_if_larger(ws.research_log, RESEARCH_LOG_MAX_BYTES)
    append_jsonl(ws.research_log, rows)
