"""The diary narrative (``[diary] narrative``): one short model-written paragraph from the night's facts.

Without a model, or when the budget refuses or the call fails, there is no narrative and the caller writes the plain
factual entry. The narrative is prose for people: it is never a promotion source.
"""

from __future__ import annotations

import logging
from datetime import datetime

from langchain_core.messages import HumanMessage, SystemMessage

from dreaming.agent.gateway import LLMGateway
from dreaming.errors import BudgetError, ModelCallError
from dreaming.prompts import load_prompt

__all__ = ["write_narrative"]

logger = logging.getLogger(__name__)

NODE = "narrative"
"""Node name in the ledger and reports."""
MAX_OUTPUT_TOKENS = 200
"""About 80 words, with room to spare."""
MAX_CHARS = 1200
"""A runaway answer is cut here."""


async def write_narrative(gateway: LLMGateway, facts: str, *, now: datetime) -> str | None:
    """Return one paragraph written from ``facts``, or None (no model, refused, failed, or empty answer)."""
    if not gateway.available or not facts.strip():
        return None
    messages = [SystemMessage(load_prompt("narrative")), HumanMessage(f"Facts of tonight's run:\n{facts.strip()}")]
    try:
        reply = await gateway.ainvoke(messages, node=NODE, max_output_tokens=MAX_OUTPUT_TOKENS)
    except BudgetError as exc:
        logger.info("no diary narrative: the budget refused (%s)", exc.reason)
        return None
    except ModelCallError as exc:  # the factual entry is always written; a failed narrative only loses prose
        logger.warning("no diary narrative: the call failed (%s)", exc.reason)
        gateway.log_event("llm.narrative_failed", now, error=exc.reason)
        return None
    paragraph = " ".join(reply.text.split())
    if len(paragraph) > MAX_CHARS:
        paragraph = paragraph[:MAX_CHARS].rsplit(" ", 1)[0] + "…"
    return paragraph or None
