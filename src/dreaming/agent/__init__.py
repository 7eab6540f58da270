"""Entry points and the one LLM gateway: the command line, a night's run, the budgeted model."""

from __future__ import annotations

from dreaming.agent._wiring import night_context
from dreaming.agent.gateway import BudgetedModels, LLMGateway, LLMReply, build_gateway
from dreaming.agent.run import RunOutcome, dream

__all__ = ["BudgetedModels", "LLMGateway", "LLMReply", "RunOutcome", "build_gateway", "dream", "night_context"]
