"""The one way to reach a model: the LLM gateway and its budget.

This is the only module of the package that imports an LLM client or builds a chat model (a test scans the tree).
Every call goes through :meth:`LLMGateway.ainvoke`, which checks the budget again at call time even when the graph's
budget node already did (defence in depth: a node added later without the gate still cannot spend).

Order of the checks of a call (the contract, tested):

1. ``no_llm``: no API key, or no price for the model (unknown models are refused, never guessed);
2. ``budget_exceeded``: the breaker is tripped (latched for the run; an unusable ledger trips it from the start);
3. ``call_limit`` / ``gap_call_limit``: the per-run (``[budget] max_llm_calls_per_run``) or per-gap
   (``[autoresearch] max_llm_calls_per_gap``) call ceiling is reached;
4. the cache: an identical request already answered (with a well-formed answer) is served for nothing (recorded
   with cost 0);
5. ``budget_exceeded``: the window's spend (settled calls, plus the reservations of calls in flight or left by a
   crash) plus this call's estimate (tiktoken input tokens + the maximum output tokens, priced) would pass the cap.
   This refusal also latches the breaker for the run: once the window cannot take another call, the run stops its LLM
   work instead of trickling through smaller ones.

Write-ahead (``_ledger.py``): check 5 and the reservation of the estimate are one atomic step of the ledger, written
and fsynced before the request leaves; the reply settles the reservation with the reported usage (or keeps the
estimate when none is reported). A call that raises keeps its estimate (a provider may bill a request that errored
or timed out), unless the error proves no request left: the connection was refused or never made
(``httpx.ConnectError``, ``httpx.ConnectTimeout``, ``ConnectionRefusedError`` in its chain of causes); then the
reservation is released.

A call that went out and failed (the client's timeout, connection or HTTP status error, a reply that is not a chat
completion, a reply longer than the output cap) raises :class:`~dreaming.errors.ModelCallError` and nothing else, once
its cost is settled. A reply whose reported completion tokens pass the cap is recorded at that real usage, flagged
``over_output_cap`` in the ledger, logged, counted in the report, and refused. The cap is sent as
``max_completion_tokens`` and, to OpenAI-compatible servers other than OpenAI's own API (llama.cpp reads only that
field; OpenAI refuses both at once), as ``max_tokens`` too.

A fleet's global ledger: when ``DREAMING_BUDGET_LEDGER`` names a file (``dreaming fleet run`` sets it for each
night it starts), the run reserves and settles there instead of in its workspace's ledger, shared with every other
workspace of the fleet (safe across processes, see ``ledger.py``), and ``DREAMING_BUDGET_MAX_COST_USD`` /
``DREAMING_BUDGET_WINDOW_MINUTES`` replace the workspace's ``[budget]`` cap and window for it. A value that is not a
positive number fails closed (the breaker starts tripped). Without the variable nothing changes.

The distributed fleet's global ledger: when ``DREAMING_DATABASE_URL`` is set and that database holds a
``dreaming_budget`` row, the run reserves and settles in Postgres (``ledger_postgres.py``, imported only then), under
the cap and window of that row; ``events.jsonl`` gets a ``budget.fleet_ledger`` event and the report says so. A
database that cannot be reached (or psycopg not installed) fails closed: the night runs, its model calls are refused.
A database that answers without a budget row leaves the ledger as above. The database is not contacted when no model
can be called (no key, no price).
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, ValidationError

from dreaming.config import BudgetConfig, DreamingConfig, ModelPrice
from dreaming.errors import BudgetError, ModelCallError
from dreaming.llm.budget import Allowed, CandidateGuard, Decision, Skipped
from dreaming.llm.cache import LLMCache, request_key
from dreaming.llm.ledger import (
    FLEET_DATABASE_ENV,
    SHARED_CAP_ENV,
    SHARED_LEDGER_ENV,
    SHARED_WINDOW_ENV,
    BudgetLedger,
    LedgerEntry,
    SpendLedger,
)
from dreaming.llm.pricing import cost_usd, count_message_tokens, load_price_table
from dreaming.llm.report import BudgetReport, tally
from dreaming.memory import Workspace, record_event
from dreaming.memory.research import redact_secrets

__all__ = ["LLMGateway", "LLMReply", "build_gateway", "parse_structured"]

logger = logging.getLogger(__name__)

CACHE_FOLDER = "llm-cache"
"""Under ``memory/.dreams``."""
OPENAI_API_HOST = "api.openai.com"
"""OpenAI's own API: it reads ``max_completion_tokens`` and refuses a request that also carries ``max_tokens``."""
ERROR_DETAIL_CHARS = 200
"""A failed call's recorded detail is cut here."""


@dataclass(frozen=True, kw_only=True, slots=True)
class LLMReply:
    """A model's answer and what it cost."""

    message: AIMessage
    """The raw answer."""
    parsed: BaseModel | None = None
    """The structured answer when a schema was asked for and the answer fits it."""
    parse_error: str | None = None
    """Why the answer did not fit the schema (the caller decides what a malformed answer means)."""
    recorded: LedgerEntry
    """What the ledger recorded for the call: its tokens, its cost (0 for a cache hit), ``estimated``, ``cache_hit``."""

    @property
    def text(self) -> str:
        """The answer's text content."""
        return self.message.text


def parse_structured(message: AIMessage, schema: type[BaseModel]) -> tuple[BaseModel | None, str | None]:
    """Return the answer as ``schema`` (from a forced tool call, or JSON text), or why it does not fit."""
    for call in message.tool_calls:
        if call["name"] == schema.__name__:
            try:
                return schema.model_validate(call["args"]), None
            except ValidationError as exc:
                return None, f"tool call does not fit {schema.__name__}: {exc.errors(include_url=False)}"
    text = message.text.strip()
    if text.startswith("```"):
        text = text.strip("`").removeprefix("json").strip()
    try:
        return schema.model_validate_json(text), None
    except ValidationError:
        return None, f"answer is not a {schema.__name__}: {text[:200]!r}"


class LLMGateway:
    """The budgeted path to one model for one run. Build it with :func:`build_gateway`."""

    def __init__(
        self,
        *,
        config: DreamingConfig,
        ws: Workspace,
        now: Callable[[], datetime],
        model_name: str,
        ledger: SpendLedger,
        chat_model: BaseChatModel | None = None,
        price: ModelPrice | None = None,
        unavailable_reason: str | None = None,
        cache: LLMCache | None = None,
        send_max_tokens: bool = False,
    ) -> None:
        """Hold one run's model, price, ledger and cache.

        ``send_max_tokens`` also puts the output cap in the request body as ``max_tokens`` (for OpenAI-compatible
        servers that ignore ``max_completion_tokens``; :func:`build_gateway` decides it from the server's address).
        """
        self._config = config
        self._ws = ws
        self._now = now
        self.model_name = model_name
        self._ledger = ledger
        self._model = chat_model
        self._price = price
        self.unavailable_reason: str | None = None
        if chat_model is None or price is None:
            default = "no chat model" if chat_model is None else f"no price for {model_name!r}"
            self.unavailable_reason = default if unavailable_reason is None else unavailable_reason
        self._cache = cache or LLMCache(ws.state_dir / CACHE_FOLDER)
        self._run_entries: list[LedgerEntry] = []
        self._calls_by_gap: Counter[str] = Counter()
        self._calls_made = 0
        self._refusals: Counter[str] = Counter()
        self._failures: Counter[str] = Counter()
        self._send_max_tokens = send_max_tokens
        self._candidates = CandidateGuard(config.budget, self.breaker_tripped)

    @property
    def available(self) -> bool:
        """Whether a model can be called at all (a key and a price for the model)."""
        return self.unavailable_reason is None

    @property
    def ledger(self) -> SpendLedger:
        """The run's ledger."""
        return self._ledger

    def breaker_tripped(self) -> bool:
        """Return True when LLM work must stop for the rest of the run."""
        return self._ledger.is_tripped(self._now())

    @property
    def candidates(self) -> CandidateGuard:
        """The run's candidate checks (budget, quality, duplicate), bound to its breaker.

        One guard per run: research and verify share its memory of candidates already seen.
        """
        return self._candidates

    def _decide(self, gap: str | None) -> Decision:
        if not self.available:
            return Skipped(reason="no_llm", detail=self.unavailable_reason or "")
        if self._ledger.is_tripped(self._now()):
            return Skipped(reason="budget_exceeded", detail=self._ledger.tripped_reason or "")
        limit = self._config.budget.max_llm_calls_per_run
        if self._calls_made >= limit:
            return Skipped(reason="call_limit", detail=f"{limit} calls already made this run")
        gap_limit = self._config.autoresearch.max_llm_calls_per_gap
        if gap is not None and self._calls_by_gap[gap] >= gap_limit:
            return Skipped(reason="gap_call_limit", detail=f"{gap_limit} calls already made for gap {gap!r}")
        return Allowed()

    def _refuse(self, decision: Skipped, *, node: str, gap: str | None) -> None:
        self._refusals[decision.reason] += 1
        if decision.reason == "no_llm":
            return  # running without a model is a configuration, not an event worth logging every time
        logger.warning("LLM call refused for %s: %s (%s)", node, decision.reason, decision.detail)
        fields: dict[str, Any] = {"node": node, "reason": decision.reason, "detail": decision.detail}
        if gap is not None:
            fields["gap"] = gap
        record_event(self._ws.events, "llm.refused", self._now(), **fields)

    def log_event(self, kind: str, **fields: Any) -> None:
        """Append an event about LLM work to the workspace's ``events.jsonl``, at the gateway's clock."""
        record_event(self._ws.events, kind, self._now(), **fields)

    def check(self, node: str, *, gap: str | None = None, log: bool = True) -> Decision:
        """Pre-flight check for the graph's budget node.

        A refusal is counted in the report and, unless ``log`` is False (the caller records it itself), written to
        ``events.jsonl``.
        """
        decision = self._decide(gap)
        if isinstance(decision, Skipped):
            if log:
                self._refuse(decision, node=node, gap=gap)
            else:
                self._refusals[decision.reason] += 1
        return decision

    def _record(self, entry: LedgerEntry, *, settles: bool = False) -> None:
        was_tripped = self._ledger.tripped_reason is not None
        if settles:
            self._ledger.settle(entry, now=entry.at)
        else:
            self._ledger.record(entry, now=entry.at)
        self._run_entries.append(entry)
        self._note_trip(was_tripped, entry.at)

    def _note_trip(self, was_tripped: bool, at: datetime) -> None:
        if not was_tripped and self._ledger.tripped_reason is not None:
            record_event(self._ws.events, "budget.breaker_tripped", at, reason=self._ledger.tripped_reason)

    def _reserve(self, reservation: LedgerEntry, *, node: str, gap: str | None) -> None:
        """Write the call's estimate ahead of its request (check 5); raise BudgetError when it does not fit."""
        was_tripped = self._ledger.tripped_reason is not None
        decision = self._ledger.reserve(reservation, now=reservation.at)
        if isinstance(decision, Skipped):
            self._refuse(decision, node=node, gap=gap)
            raise BudgetError(decision.reason)
        self._note_trip(was_tripped, reservation.at)

    def _settle_failed(self, reservation: LedgerEntry, error: BaseException) -> None:
        """Settle the reservation of a call that raised (see the module docstring)."""
        if _never_sent(error):
            self._ledger.release(reservation, now=self._now())
        else:
            self._record(replace(reservation, at=self._now(), reserved=False), settles=True)

    def _output_cap(self, max_out: int) -> dict[str, Any]:
        """Return the call's keyword arguments that carry the output cap (module docstring)."""
        # langchain-openai sends max_tokens as max_completion_tokens; extra_body adds the older field beside it.
        kwargs: dict[str, Any] = {"max_tokens": max_out}
        if self._send_max_tokens:
            kwargs["extra_body"] = {"max_tokens": max_out}
        return kwargs

    def _trace(self, node: str, gap: str | None, max_out: int, estimate: float) -> RunnableConfig:
        """Name the call's run for tracers (LangSmith when tracing is on): its node and gap, its model and estimate."""
        metadata = {"dreaming_node": node, "gap": gap, "model": self.model_name, "max_output_tokens": max_out,
                    "estimated_cost_usd": round(estimate, 8)}  # fmt: skip
        return {"run_name": f"llm {node}" + (f": {gap}" if gap else ""), "metadata": metadata}

    def _failed(self, error: ModelCallError, *, node: str, gap: str | None) -> ModelCallError:
        """Count, log and record a failed call; return the error for the caller to raise."""
        self._failures[error.kind] += 1
        logger.warning("LLM call from %s failed: %s", node, error.reason)
        fields: dict[str, Any] = {"node": node, "failure": error.kind, "detail": error.detail}
        if gap is not None:
            fields["gap"] = gap
        record_event(self._ws.events, "llm.call_failed", self._now(), **fields)
        return error

    async def ainvoke(
        self,
        messages: Sequence[BaseMessage],
        *,
        node: str,
        gap: str | None = None,
        max_output_tokens: int | None = None,
        schema: type[BaseModel] | None = None,
        tools: Sequence[BaseTool] | None = None,
    ) -> LLMReply:
        """Call the model through the budget and record what it cost.

        Args:
            messages: the conversation.
            node: the calling node, for the ledger and reports.
            gap: the knowledge gap worked on, if any (per-gap ceiling).
            max_output_tokens: defaults to ``[llm] max_output_tokens``.
            schema: ask for a structured answer (bound as a forced tool); see ``LLMReply.parsed``.
            tools: tools the model may call (not with ``schema``).

        Raises:
            BudgetError: the call was refused; ``reason`` says why (no call was made).
            ModelCallError: the call went out and failed, or its reply passed the output cap (its cost is recorded).
            ValueError: both ``schema`` and ``tools`` were given.
        """
        if schema is not None and tools:
            raise ValueError("ask for a schema or offer tools, not both")
        decision = self._decide(gap)
        if isinstance(decision, Skipped):
            self._refuse(decision, node=node, gap=gap)
            raise BudgetError(decision.reason)
        assert self._model is not None and self._price is not None  # available
        max_out = max_output_tokens or self._config.llm.max_output_tokens
        tool_specs = [convert_to_openai_tool(t) for t in ([schema] if schema is not None else list(tools or ()))]
        parameters = {"max_tokens": max_out, "tools": tool_specs, "forced": schema.__name__ if schema else None}
        key = request_key(self.model_name, messages, parameters)
        now = self._now()
        cached = self._cache.get(key, now=now)
        if cached is not None:
            hit = LedgerEntry(at=now, model=self.model_name, node=node, gap=gap, cache_hit=True)
            self._record(hit)
            return self._reply(cached.message, schema, hit)
        est_in = count_message_tokens(messages, extra=tool_specs)
        estimate = cost_usd(self._price, input_tokens=est_in, output_tokens=max_out)
        reservation = LedgerEntry(
            at=now, model=self.model_name, node=node, gap=gap, input_tokens=est_in, output_tokens=max_out,
            cost_usd=estimate, estimated=True, reserved=True,
        )  # fmt: skip
        self._reserve(reservation, node=node, gap=gap)
        self._calls_made += 1
        if gap is not None:
            self._calls_by_gap[gap] += 1
        try:
            runnable: Any = self._model
            if schema is not None:
                runnable = self._model.bind_tools([schema], tool_choice=schema.__name__)
            elif tools:
                runnable = self._model.bind_tools(list(tools))
            message = await runnable.ainvoke(
                list(messages), config=self._trace(node, gap, max_out, estimate), **self._output_cap(max_out)
            )
        except BaseException as exc:
            self._settle_failed(reservation, exc)
            if isinstance(exc, Exception):  # a cancellation (the caller's own time limit) passes through untouched
                raise self._failed(_model_call_error(exc), node=node, gap=gap) from exc
            raise
        if not isinstance(message, AIMessage):
            self._record(replace(reservation, at=self._now(), reserved=False), settles=True)
            error = ModelCallError("malformed_reply", f"the chat model returned {type(message).__name__}")
            raise self._failed(error, node=node, gap=gap)
        reported = _reported_usage(message)
        if reported is None:
            logger.info("no usable usage reported by %s for %s; recording the estimate", self.model_name, node)
            tokens_in, tokens_out, cached_in, estimated = est_in, max_out, 0, True
        else:
            (tokens_in, tokens_out, cached_in), estimated = reported, False
        over_cap = tokens_out > max_out
        cost = cost_usd(self._price, input_tokens=tokens_in, output_tokens=tokens_out, cached_tokens=cached_in)
        settled = replace(
            reservation, at=self._now(), reserved=False, input_tokens=tokens_in, output_tokens=tokens_out,
            cached_tokens=cached_in, cost_usd=cost, estimated=estimated, over_output_cap=over_cap,
        )  # fmt: skip
        self._record(settled, settles=True)
        if over_cap:
            # The server did not honour the cap the estimate assumed: the real usage is recorded, the reply refused.
            detail = f"{tokens_out} completion tokens, over the cap of {max_out}"
            raise self._failed(ModelCallError("oversized_reply", detail), node=node, gap=gap)
        reply = self._reply(message, schema, settled)
        if reply.parse_error is None:
            # A malformed answer is not cached, so that the next run asks again instead of replaying junk for free.
            self._cache.put(key, message, model=self.model_name, now=self._now())
        return reply

    def _reply(self, message: AIMessage, schema: type[BaseModel] | None, recorded: LedgerEntry) -> LLMReply:
        parsed, error = parse_structured(message, schema) if schema is not None else (None, None)
        return LLMReply(message=message, parsed=parsed, parse_error=error, recorded=recorded)

    def report(self) -> BudgetReport:
        """Return this run's account: spend, tokens per node and model, calls, cache hits, refusals, breaker."""
        now = self._now()
        by_node, by_model = tally(self._run_entries)
        tripped = self._ledger.tripped_reason is not None
        return BudgetReport(
            available=self.available,
            unavailable_reason=self.unavailable_reason,
            model=self.model_name,
            cap_usd=self._ledger.config.max_cost_usd,
            window_minutes=self._ledger.config.window_minutes,
            window_spend_usd=self._ledger.spend_in_window(now),
            run_spend_usd=sum(e.cost_usd for e in self._run_entries),
            calls_made=sum(1 for e in self._run_entries if not e.cache_hit),
            cache_hits=sum(1 for e in self._run_entries if e.cache_hit),
            refusals=dict(self._refusals),
            failures=dict(self._failures),
            oversized_replies=sum(1 for e in self._run_entries if e.over_output_cap),
            by_node=by_node,
            by_model=by_model,
            breaker_tripped=tripped,
            breaker_reason=self._ledger.tripped_reason,
            ledger_problem=self._ledger.problem,
            fleet_database=self._ledger.in_database,
        )


def _never_sent(error: BaseException) -> bool:
    """Return True when ``error`` (or one of its causes) proves the request never left: no connection was made."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, (httpx.ConnectError, httpx.ConnectTimeout, ConnectionRefusedError)):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def _model_call_error(exc: Exception) -> ModelCallError:
    """Translate what a chat model's call raised into the one error callers handle (see the module docstring).

    The client's own errors are classified (``timeout``, ``connection``, ``http_<status>``); a reply that could not
    be read (not JSON, not a chat completion, fields of the wrong type) is ``malformed_reply``; anything else a model
    raised is ``error``. The detail is one line, redacted and shortened.
    """
    import httpx
    import openai

    if isinstance(exc, ModelCallError):
        return exc
    kind = "error"
    if isinstance(exc, (openai.APITimeoutError, httpx.TimeoutException, TimeoutError)):
        kind = "timeout"
    elif isinstance(exc, (openai.APIConnectionError, httpx.TransportError, ConnectionError)):
        kind = "connection"
    elif isinstance(exc, openai.APIStatusError):
        kind = f"http_{exc.status_code}"
    elif isinstance(exc, (openai.APIResponseValidationError, ValueError, TypeError, KeyError, AttributeError)):
        kind = "malformed_reply"  # json, pydantic and langchain parser errors are ValueErrors
    detail = redact_secrets(" ".join(f"{type(exc).__name__}: {exc}".split()))
    if len(detail) > ERROR_DETAIL_CHARS:
        detail = detail[: ERROR_DETAIL_CHARS - 1] + "…"
    return ModelCallError(kind, detail)


def _reported_usage(message: AIMessage) -> tuple[int, int, int] | None:
    """Return ``(input, output, cached input)`` tokens as the reply reports them, or None when absent or unusable."""
    usage = message.usage_metadata
    if usage is None:
        return None
    details = usage.get("input_token_details") or {}
    values = (usage.get("input_tokens"), usage.get("output_tokens"), details.get("cache_read") or 0)
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in values):
        return None
    return int(values[0] or 0), int(values[1] or 0), int(values[2] or 0)


def _sends_max_tokens(base_url: str | None) -> bool:
    """Return True when the output cap must also go out as ``max_tokens``: any server but OpenAI's own API."""
    if not base_url:
        return False
    return (urlsplit(base_url).hostname or "").lower() != OPENAI_API_HOST


@dataclass(frozen=True, kw_only=True)
class _LedgerSource:
    path: Path
    config: BudgetConfig
    shared: bool
    problem: str | None = None
    database_url: str | None = None
    """The fleet's database: its global ledger is the run's when it holds a budget (else ``path`` is)."""


def _ledger_source(config: DreamingConfig, ws: Workspace, env: Mapping[str, str]) -> _LedgerSource:
    """Return where the run's ledger is and the limits it enforces: the workspace's, or the fleet's shared one.

    With ``DREAMING_DATABASE_URL``, the fleet's database comes first (:func:`_open_ledger` asks it for a budget).
    """
    database_url = (env.get(FLEET_DATABASE_ENV) or "").strip() or None
    shared = (env.get(SHARED_LEDGER_ENV) or "").strip()
    if not shared:
        return _LedgerSource(path=ws.budget_ledger, config=config.budget, shared=False, database_url=database_url)
    problems: list[str] = []

    def positive(key: str, default: float) -> float:
        raw = (env.get(key) or "").strip()
        if not raw:
            return default
        try:
            value = float(raw)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value <= 0:
            problems.append(f"{key}={raw!r} is not a positive number")
            return default
        return value

    budget = replace(
        config.budget,
        max_cost_usd=positive(SHARED_CAP_ENV, config.budget.max_cost_usd),
        window_minutes=positive(SHARED_WINDOW_ENV, config.budget.window_minutes),
    )
    path = Path(shared).expanduser().absolute()
    problem = "; ".join(problems) or None
    return _LedgerSource(path=path, config=budget, shared=True, problem=problem, database_url=database_url)


def _open_ledger(source: _LedgerSource, ws: Workspace, *, now: datetime) -> SpendLedger:
    """Load the run's ledger: the fleet's in Postgres when its database holds a budget, else the file of ``source``.

    Each choice that a user would want to know of is written to ``events.jsonl``.
    """
    if source.database_url is not None:
        fleet = _fleet_database_ledger(source, now=now)
        if fleet is not None:
            fields: dict[str, Any] = {
                "cap_usd": fleet.config.max_cost_usd,
                "window_minutes": fleet.config.window_minutes,
            }
            if fleet.problem is not None:
                fields["problem"] = fleet.problem
            record_event(ws.events, "budget.fleet_ledger", now, ledger="postgres", **fields)
            return fleet
        logger.warning(
            "%s is set but the database holds no dreaming_budget row: the run keeps its own ledger", FLEET_DATABASE_ENV
        )
    if source.problem is not None:
        return BudgetLedger(source.path, source.config, fail_closed=source.problem, shared=True)
    ledger = BudgetLedger.load(source.path, source.config, now=now, shared=source.shared)
    if ledger.moved_aside is not None:
        record_event(
            ws.events,
            "budget.ledger_moved_aside",
            now,
            problem=ledger.problem,
            moved_to=ws.relative(ledger.moved_aside),
        )
    return ledger


def _fleet_database_ledger(source: _LedgerSource, *, now: datetime) -> SpendLedger | None:
    """Return the fleet's global ledger (tripped when unusable), or None when its database holds no budget."""
    assert source.database_url is not None
    try:
        from dreaming.llm.ledger_postgres import PostgresBudgetLedger
    except ImportError as exc:  # the fleet extra is missing: the global cap cannot be checked, so nothing is spent
        problem = f"{FLEET_DATABASE_ENV} is set but the fleet's ledger cannot be used ({exc}): install dreaming[fleet]"
        return BudgetLedger(source.path, source.config, fail_closed=problem)
    return PostgresBudgetLedger.load_if_budgeted(source.database_url, source.config, now=now)


def _openai_chat_model(**kwargs: Any) -> BaseChatModel:
    from langchain_openai import ChatOpenAI

    # No hidden retries: every request the endpoint sees is one the budget allowed and recorded.
    return ChatOpenAI(**kwargs)


def build_gateway(
    config: DreamingConfig,
    ws: Workspace,
    *,
    env: Mapping[str, str],
    now: Callable[[], datetime],
    model_factory: Callable[..., BaseChatModel] | None = None,
) -> LLMGateway:
    """Build the run's gateway from ``[llm]``, ``[llm.prices]`` and the environment.

    ``OPENAI_API_KEY`` is required; ``DREAMING_MODEL`` overrides ``[llm] model``; ``[llm] base_url`` wins over
    ``OPENAI_BASE_URL`` (any address but OpenAI's own API also gets the output cap as ``max_tokens``). Without a key or
    a price for the model the gateway is unavailable, the model is never built and the ledger is only read (nothing is
    written). With both, the ledger is loaded for the run (the fleet's in Postgres when ``DREAMING_DATABASE_URL``'s
    database holds a budget; see the module docstring): an unusable one is moved aside (reported in ``events.jsonl``)
    or, in Postgres, left alone, and the run starts with the breaker tripped.

    Args:
        config: the workspace configuration.
        ws: the workspace.
        env: environment variables (pass ``os.environ`` from the entry point).
        now: the clock.
        model_factory: builds the chat model from keyword arguments ``model``, ``api_key``, ``base_url``,
            ``timeout``, ``max_retries``; defaults to langchain-openai's ``ChatOpenAI``.
    """
    model_name = (env.get("DREAMING_MODEL") or "").strip() or config.llm.model
    price = load_price_table(config.llm.prices).price_for(model_name)
    api_key = (env.get("OPENAI_API_KEY") or "").strip()
    reason: str | None = None
    if not api_key:
        reason = "no OPENAI_API_KEY in the environment"
    elif price is None:
        reason = f"no price for model {model_name!r} (add it under [llm.prices])"
    source = _ledger_source(config, ws, env)
    if reason is not None:
        ledger: SpendLedger = BudgetLedger.peek(source.path, source.config, now=now())
        return LLMGateway(
            config=config, ws=ws, now=now, model_name=model_name, ledger=ledger, unavailable_reason=reason
        )
    ledger = _open_ledger(source, ws, now=now())
    base_url = config.llm.base_url or (env.get("OPENAI_BASE_URL") or "").strip() or None
    factory = model_factory or _openai_chat_model
    chat_model = factory(
        model=model_name, api_key=api_key, base_url=base_url, timeout=config.llm.timeout_seconds, max_retries=0
    )
    return LLMGateway(
        config=config, ws=ws, now=now, model_name=model_name, ledger=ledger, chat_model=chat_model, price=price,
        send_max_tokens=_sends_max_tokens(base_url),
    )  # fmt: skip
