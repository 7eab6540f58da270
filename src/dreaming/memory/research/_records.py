"""A gap's research outcome and its row in ``research.jsonl`` (one row per attempt, append-only)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from dreaming.memory.files import append_jsonl, rotate_if_larger
from dreaming.memory.research._claims import Claim
from dreaming.memory.research._decide import Decision
from dreaming.memory.research._evidence import Evidence, redact_secrets
from dreaming.memory.research._validate import Validation, ValidationMethod
from dreaming.memory.workspace import Workspace

__all__ = [
    "RESEARCH_LOG_VERSION",
    "FindingOutcome",
    "ResearchFinding",
    "append_research_log",
    "finding_from_validation",
    "research_log_row",
]

RESEARCH_LOG_VERSION = 1
"""The ``v`` field of every research.jsonl row."""

FindingOutcome = Literal["keep", "discard", "abstain", "failed", "skipped_budget", "skipped_duplicate", "skipped_time"]


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
    decision: Decision,
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
