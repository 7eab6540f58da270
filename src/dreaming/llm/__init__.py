"""The budgeted model: the ONE gateway to an LLM, the budget it enforces, pricing, the request cache and the report.

Below ``graph/``: the graph holds an :class:`LLMGateway` in its context and calls it directly. Tests and evals hand in
:class:`FakeChatModel` (a chat model that reports usage) through ``build_gateway(..., model_factory=...)``.

::

    gateway.py  check -> cache -> reserve (write-ahead) -> call -> settle; LLMReply
    budget.py   the typed decision Allowed | Skipped and the candidate checks (budget -> quality -> duplicate)
    ledger.py   the sliding-window spend ledger with reservations and the latched breaker (the rules, the file)
    ledger_postgres.py  the fleet's global ledger in Postgres (imports psycopg: not exported here)
    pricing.py  the dated price table, offline token counting, the cost of usage
    cache.py    identical requests answered once
    report.py   the run's account (BudgetReport) and the ledger's (BudgetStatus)
    fake.py     FakeChatModel
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dreaming._lazy import lazy_exports

if TYPE_CHECKING:
    from dreaming.llm.budget import Allowed, CandidateGuard, Decision, Skipped, SkipReason, filter_candidates
    from dreaming.llm.fake import FakeChatModel, tool_call_answer
    from dreaming.llm.gateway import LLMGateway, LLMReply, build_gateway
    from dreaming.llm.ledger import BudgetLedger, LedgerEntry
    from dreaming.llm.pricing import PriceTable, cost_usd, count_message_tokens, load_price_table
    from dreaming.llm.report import BudgetReport, BudgetStatus, read_budget_status

__all__ = [
    "Allowed",
    "BudgetLedger",
    "BudgetReport",
    "BudgetStatus",
    "CandidateGuard",
    "Decision",
    "FakeChatModel",
    "LLMGateway",
    "LLMReply",
    "LedgerEntry",
    "PriceTable",
    "SkipReason",
    "Skipped",
    "build_gateway",
    "cost_usd",
    "count_message_tokens",
    "filter_candidates",
    "load_price_table",
    "read_budget_status",
    "tool_call_answer",
]

_HOMES = {
    "Allowed": "dreaming.llm.budget",
    "CandidateGuard": "dreaming.llm.budget",
    "Decision": "dreaming.llm.budget",
    "Skipped": "dreaming.llm.budget",
    "SkipReason": "dreaming.llm.budget",
    "filter_candidates": "dreaming.llm.budget",
    "FakeChatModel": "dreaming.llm.fake",
    "tool_call_answer": "dreaming.llm.fake",
    "LLMGateway": "dreaming.llm.gateway",
    "LLMReply": "dreaming.llm.gateway",
    "build_gateway": "dreaming.llm.gateway",
    "BudgetLedger": "dreaming.llm.ledger",
    "LedgerEntry": "dreaming.llm.ledger",
    "PriceTable": "dreaming.llm.pricing",
    "cost_usd": "dreaming.llm.pricing",
    "count_message_tokens": "dreaming.llm.pricing",
    "load_price_table": "dreaming.llm.pricing",
    "BudgetReport": "dreaming.llm.report",
    "BudgetStatus": "dreaming.llm.report",
    "read_budget_status": "dreaming.llm.report",
}
"""Each public name -> the module that is its one home. Names load on first use, so that the ledger and the
report (``dreaming status``) pull in no LangChain, no tiktoken and no HTTP client."""


__getattr__, __dir__ = lazy_exports(__name__, _HOMES, __all__)
