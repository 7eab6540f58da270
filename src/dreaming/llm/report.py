"""What the budget reports: per-run :class:`BudgetReport` and the ledger-only :class:`BudgetStatus`.

Both render to markdown bullet lines for DREAMS.md and ``dreaming status``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from dreaming.config import DreamingConfig
from dreaming.llm.ledger import BudgetLedger, LedgerEntry
from dreaming.memory import Workspace

__all__ = ["BudgetReport", "BudgetStatus", "TokenCount", "read_budget_status", "tally"]


@dataclass(frozen=True, kw_only=True, slots=True)
class TokenCount:
    """Tokens and cost of a group of calls."""

    calls: int = 0
    """Calls made (cache hits excluded)."""
    cache_hits: int = 0
    """Answers served from the cache."""
    input_tokens: int = 0
    """Prompt tokens."""
    output_tokens: int = 0
    """Completion tokens."""
    cached_tokens: int = 0
    """Prompt tokens the provider served from its own cache."""
    cost_usd: float = 0.0
    """Priced cost."""

    def add(self, entry: LedgerEntry) -> TokenCount:
        """Return this count plus one ledger entry."""
        return TokenCount(
            calls=self.calls + (0 if entry.cache_hit else 1),
            cache_hits=self.cache_hits + (1 if entry.cache_hit else 0),
            input_tokens=self.input_tokens + entry.input_tokens,
            output_tokens=self.output_tokens + entry.output_tokens,
            cached_tokens=self.cached_tokens + entry.cached_tokens,
            cost_usd=self.cost_usd + entry.cost_usd,
        )


def tally(entries: Iterable[LedgerEntry]) -> tuple[dict[str, TokenCount], dict[str, TokenCount]]:
    """Group entries by node and by model."""
    by_node: dict[str, TokenCount] = {}
    by_model: dict[str, TokenCount] = {}
    for entry in entries:
        by_node[entry.node] = by_node.get(entry.node, TokenCount()).add(entry)
        by_model[entry.model] = by_model.get(entry.model, TokenCount()).add(entry)
    return by_node, by_model


def _count_lines(title: str, counts: Mapping[str, TokenCount]) -> list[str]:
    return [
        f"- {title} `{name}`: {c.calls} calls, {c.cache_hits} cache hits, "
        f"{c.input_tokens} in / {c.output_tokens} out tokens, ${c.cost_usd:.4f}"
        for name, c in sorted(counts.items())
    ]


@dataclass(frozen=True, kw_only=True, slots=True)
class BudgetReport:
    """The budget's account of one run."""

    available: bool
    """Whether a model could be used at all."""
    unavailable_reason: str | None
    """Why not (no key, no price for the model)."""
    model: str
    """The configured model."""
    cap_usd: float
    """``max_cost_usd``."""
    window_minutes: float
    """Length of the sliding window."""
    window_spend_usd: float
    """Spend in the window at report time."""
    run_spend_usd: float
    """Spend of this run's calls."""
    calls_made: int
    """Calls that reached the model this run."""
    cache_hits: int
    """Answers served from the cache this run."""
    refusals: Mapping[str, int] = field(default_factory=dict)
    """Refused calls by reason."""
    failures: Mapping[str, int] = field(default_factory=dict)
    """Calls that went out and failed, by kind (``ModelCallError.kind``: timeout, http_500, oversized_reply...)."""
    oversized_replies: int = 0
    """Replies whose reported completion tokens passed the output cap (recorded at their real usage)."""
    by_node: Mapping[str, TokenCount] = field(default_factory=dict)
    """This run's tokens per node."""
    by_model: Mapping[str, TokenCount] = field(default_factory=dict)
    """This run's tokens per model."""
    breaker_tripped: bool = False
    """Whether the breaker tripped (it stays tripped for the run)."""
    breaker_reason: str | None = None
    """Why it tripped."""
    ledger_problem: str | None = None
    """Why the stored ledger could not be used (the run then failed closed)."""
    fleet_database: bool = False
    """True when the run spent against the fleet's global ledger in Postgres (cap and window of its budget row)."""

    def to_json(self) -> dict[str, Any]:
        """Return the report as JSON-able data, with its diary ``lines`` (what the night's state keeps)."""
        return {**asdict(self), "lines": self.lines()}

    def lines(self) -> list[str]:
        """Render markdown bullet lines for the diary."""
        if not self.available:
            return [f"- LLM: not used ({self.unavailable_reason})."]
        out = [
            f"- LLM spend: ${self.run_spend_usd:.4f} this run, ${self.window_spend_usd:.4f} in the last "
            f"{self.window_minutes:g} min (cap ${self.cap_usd:g}); {self.calls_made} calls, "
            f"{self.cache_hits} cache hits.",
        ]
        if self.refusals:
            refused = ", ".join(f"{reason} {count}" for reason, count in sorted(self.refusals.items()))
            out.append(f"- Calls refused: {refused}.")
        if self.failures:
            failed = ", ".join(f"{kind} {count}" for kind, count in sorted(self.failures.items()))
            out.append(f"- Calls failed: {failed}.")
        if self.oversized_replies:
            out.append(
                f"- Replies over the output cap: {self.oversized_replies} (the server ignored the cap; recorded at "
                "their real usage)."
            )
        if self.breaker_tripped:
            out.append(f"- Budget breaker tripped: {self.breaker_reason}.")
        if self.fleet_database:
            out.append("- Budget: the fleet's global ledger in Postgres (its cap and window), shared by every worker.")
        if self.ledger_problem and self.fleet_database:
            out.append(
                f"- The fleet's budget ledger was unusable: no model call was made after that ({self.ledger_problem})."
            )
        elif self.ledger_problem:
            out.append(f"- Budget ledger was unusable and was moved aside ({self.ledger_problem}).")
        out += _count_lines("node", self.by_node) + _count_lines("model", self.by_model)
        return out


@dataclass(frozen=True, kw_only=True, slots=True)
class BudgetStatus:
    """The ledger as ``dreaming status`` shows it; reading it changes nothing on disk."""

    cap_usd: float
    """``max_cost_usd``."""
    window_minutes: float
    """Length of the sliding window."""
    window_spend_usd: float
    """Spend in the window now."""
    calls_in_window: int
    """Calls recorded in the window (cache hits excluded)."""
    cache_hits_in_window: int
    """Cache hits recorded in the window."""
    by_node: Mapping[str, TokenCount]
    """Window tokens per node."""
    by_model: Mapping[str, TokenCount]
    """Window tokens per model."""
    next_run_tripped: bool
    """Whether a run started now would start with the breaker tripped."""
    problem: str | None
    """Why the ledger is unusable (the next run will move it aside and fail closed)."""
    unsettled_in_window: int = 0
    """Calls reserved but never settled (in flight now, or cut off by a crash), counted at their estimate."""
    unsettled_usd: float = 0.0
    """The part of ``window_spend_usd`` those calls hold."""

    def lines(self) -> list[str]:
        """Render markdown bullet lines."""
        out = [
            f"- LLM spend in the last {self.window_minutes:g} min: ${self.window_spend_usd:.4f} of ${self.cap_usd:g}"
            f" ({self.calls_in_window} calls, {self.cache_hits_in_window} cache hits).",
            f"- Budget breaker: {'tripped' if self.next_run_tripped else 'closed'}.",
        ]
        if self.unsettled_in_window:
            out.append(
                f"- {self.unsettled_in_window} calls never settled (in flight, or a run stopped mid-call): "
                f"${self.unsettled_usd:.4f} counted at their estimate until they age out."
            )
        if self.problem:
            out.append(f"- Budget ledger unusable: {self.problem}.")
        return out + _count_lines("node", self.by_node) + _count_lines("model", self.by_model)


def read_budget_status(ws: Workspace, config: DreamingConfig, now: datetime) -> BudgetStatus:
    """Summarise the ledger for ``dreaming status`` without writing anything."""
    ledger = BudgetLedger.peek(ws.budget_ledger, config.budget, now=now)
    window = ledger.entries_in_window(now)
    by_node, by_model = tally(window)
    return BudgetStatus(
        cap_usd=config.budget.max_cost_usd,
        window_minutes=config.budget.window_minutes,
        window_spend_usd=ledger.spend_in_window(now),
        calls_in_window=sum(1 for e in window if not e.cache_hit),
        cache_hits_in_window=sum(1 for e in window if e.cache_hit),
        by_node=by_node,
        by_model=by_model,
        next_run_tripped=ledger.is_tripped(now),
        problem=ledger.problem,
        unsettled_in_window=sum(1 for e in window if e.reserved),
        unsettled_usd=ledger.reserved_in_window(now),
    )
