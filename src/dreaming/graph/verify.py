"""LLM verify (``[verdicts] llm_verify``): a model may veto a verdict insight that passed the gate.

The model sees each passing insight with its statistics and answers ``{"veto": bool, "reason": str}``. It can only
take an insight away: it never promotes anything the gate refused and never changes a number. A malformed answer or a
failed call counts as no veto (and is logged); a refusal by the budget stops further calls, and the remaining
insights stay unverified (not vetoed).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from dreaming.errors import BudgetError, ModelCallError
from dreaming.llm import LLMGateway
from dreaming.memory.verdicts import VerdictCandidate
from dreaming.prompts import load_prompt

__all__ = ["VerifyAnswer", "VerifyResult", "verify_insights", "verify_insights_detailed"]

logger = logging.getLogger(__name__)

NODE = "llm_verify"
"""Node name in the ledger and reports."""
MAX_OUTPUT_TOKENS = 120
"""A verdict and one sentence."""


class VerifyAnswer(BaseModel):
    """The model's structured answer about one insight."""

    veto: bool = Field(description="True only if the pattern is likely spurious.")
    reason: str = Field(description="One short sentence explaining the decision.")


@dataclass(frozen=True, kw_only=True, slots=True)
class VerifyResult:
    """Vetoes and what happened to every candidate."""

    vetoes: Mapping[str, str] = field(default_factory=dict)
    """Candidate id to the model's reason, for vetoed insights only."""
    verified: int = 0
    """Candidates with a well-formed answer (vetoed or not)."""
    malformed: int = 0
    """Answers that did not fit the schema (counted as no veto)."""
    failed: int = 0
    """Calls that failed, ``ModelCallError`` (counted as no veto)."""
    unverified: int = 0
    """Candidates never sent (no model, or the budget refused): not vetoed."""
    stopped_by: str | None = None
    """The budget's refusal reason that stopped verification, if any."""


_SEEN = ("id", "asset", "verdict", "regime", "window", "kind")
"""What the model sees of an insight's bucket, as it is; its statistics follow (``_stats``)."""


def _stats(candidate: VerdictCandidate) -> dict[str, Any]:
    """Return what the model sees of an insight: its bucket and statistics."""
    stats: dict[str, Any] = {name: getattr(candidate, name) for name in _SEEN}
    stats.update(n=int(candidate.n), hit_rate=float(candidate.hit_rate), adverse_rate=float(candidate.adverse_rate),
                 avg_change=float(candidate.avg_change_pct), score=float(candidate.score))  # fmt: skip
    return stats


def _messages(candidate: VerdictCandidate) -> list[SystemMessage | HumanMessage]:
    # No date or run id in the request: identical insights must give identical requests so the cache can serve them.
    stats = json.dumps(_stats(candidate), sort_keys=True)
    return [SystemMessage(load_prompt("verify")), HumanMessage(f"Pattern:\n{stats}")]


async def verify_insights_detailed(gateway: LLMGateway, candidates: Sequence[VerdictCandidate]) -> VerifyResult:
    """Ask the model about each candidate in turn and return vetoes with counts (see the module docstring)."""
    if not gateway.available:
        return VerifyResult(unverified=len(candidates), stopped_by="no_llm" if candidates else None)
    vetoes: dict[str, str] = {}
    verified = malformed = failed = unverified = 0
    stopped_by: str | None = None
    for index, candidate in enumerate(candidates):
        try:
            reply = await gateway.ainvoke(
                _messages(candidate), node=NODE, max_output_tokens=MAX_OUTPUT_TOKENS, schema=VerifyAnswer
            )
        except BudgetError as exc:
            unverified, stopped_by = len(candidates) - index, exc.reason
            logger.warning("llm verify stopped by the budget (%s); %d insights left unverified", exc.reason, unverified)
            break
        except ModelCallError as exc:  # a failed call (oversized replies included) must not veto nor stop the night
            failed += 1
            logger.warning("llm verify of %s failed (%s); counted as no veto", candidate.id, exc.reason)
            gateway.log_event("llm.verify_failed", insight=candidate.id, error=exc.reason)
            continue
        answer = reply.parsed
        if not isinstance(answer, VerifyAnswer):
            malformed += 1
            logger.warning(
                "llm verify of %s: malformed answer (%s); counted as no veto", candidate.id, reply.parse_error
            )
            gateway.log_event("llm.verify_malformed", insight=candidate.id, error=(reply.parse_error or "")[:300])
            continue
        verified += 1
        if answer.veto:
            vetoes[candidate.id] = " ".join(answer.reason.split()) or "vetoed without a reason"
    return VerifyResult(vetoes=vetoes, verified=verified, malformed=malformed, failed=failed, unverified=unverified,
                        stopped_by=stopped_by)  # fmt: skip


async def verify_insights(gateway: LLMGateway, candidates: Sequence[VerdictCandidate]) -> dict[str, str]:
    """Return candidate id -> veto reason for the insights the model vetoed (none without a model)."""
    result = await verify_insights_detailed(gateway, candidates)
    return dict(result.vetoes)
