"""The gateway with a fake chat model: availability, the order of checks, usage, estimates, cache, reporting."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from pydantic import BaseModel

from dreaming.config import AutoresearchConfig, BudgetConfig, DreamingConfig, LLMConfig, ModelPrice
from dreaming.errors import BudgetError, ModelCallError
from dreaming.llm.budget import Allowed, Skipped
from dreaming.llm.gateway import LLMGateway, build_gateway
from dreaming.llm.ledger import LedgerEntry
from dreaming.llm.pricing import cost_usd
from dreaming.memory import Workspace
from tests._fakes import FakeChatModel, file_ledger, tool_call_answer

KEY = {"OPENAI_API_KEY": "sk-test"}
MINI = ModelPrice(input=0.40, output=1.60, cached_input=0.10)


class Clock:
    def __init__(self, start: datetime) -> None:
        self.value = start

    def __call__(self) -> datetime:
        return self.value


def gateway(
    ws: Workspace,
    now: datetime,
    model: FakeChatModel | None = None,
    *,
    env: dict[str, str] | None = None,
    config: DreamingConfig | None = None,
) -> LLMGateway:
    fake = model or FakeChatModel()
    return build_gateway(
        config or DreamingConfig(), ws, env=KEY if env is None else env, now=Clock(now), model_factory=fake.factory
    )


def ask(gw: LLMGateway, text: str = "hello", **kwargs: Any) -> Any:
    return asyncio.run(gw.ainvoke([HumanMessage(text)], node=kwargs.pop("node", "test"), **kwargs))


def events(ws: Workspace) -> list[dict[str, Any]]:
    if not ws.events.exists():
        return []
    return [json.loads(line) for line in ws.events.read_text().splitlines()]


# Availability


def test_no_key_means_no_llm_and_no_model(workspace: Workspace, now: datetime) -> None:
    fake = FakeChatModel()
    gw = gateway(workspace, now, fake, env={})
    assert not gw.available and "OPENAI_API_KEY" in (gw.unavailable_reason or "")
    assert fake.factory_kwargs == {}, "the chat model must not even be built"
    assert gw.check("verify") == Skipped(reason="no_llm", detail=gw.unavailable_reason or "")
    with pytest.raises(BudgetError) as info:
        ask(gw)
    assert info.value.reason == "no_llm"
    assert fake.calls == [] and not workspace.state_dir.exists()
    assert gw.report().lines() == [f"- LLM: not used ({gw.unavailable_reason})."]


def test_unknown_model_refused_not_guessed(workspace: Workspace, now: datetime) -> None:
    fake = FakeChatModel()
    gw = gateway(workspace, now, fake, env=KEY | {"DREAMING_MODEL": "my-local-llama"})
    assert not gw.available and "my-local-llama" in (gw.unavailable_reason or "")
    assert fake.factory_kwargs == {}
    with pytest.raises(BudgetError):
        ask(gw)
    assert fake.calls == []


def test_configured_price_makes_a_model_usable(workspace: Workspace, now: datetime) -> None:
    config = DreamingConfig(
        llm=LLMConfig(model="my-local-llama", prices={"my-local-llama": ModelPrice(input=0, output=0)})
    )
    gw = gateway(workspace, now, config=config)
    assert gw.available and gw.model_name == "my-local-llama"


def test_environment_and_config_reach_the_factory(workspace: Workspace, now: datetime) -> None:
    fake = FakeChatModel()
    env = KEY | {"DREAMING_MODEL": "gpt-4o-mini", "OPENAI_BASE_URL": "http://env.test/v1"}
    gateway(workspace, now, fake, env=env)
    assert fake.factory_kwargs == {
        "model": "gpt-4o-mini",
        "api_key": "sk-test",
        "base_url": "http://env.test/v1",
        "timeout": 60.0,
        "max_retries": 0,
    }
    config = DreamingConfig(llm=LLMConfig(base_url="http://config.test/v1"))
    gateway(workspace, now, fake, env=env, config=config)
    assert fake.factory_kwargs["base_url"] == "http://config.test/v1"


# Usage and cost


def test_reported_usage_is_priced_and_recorded(workspace: Workspace, now: datetime) -> None:
    gw = gateway(workspace, now, FakeChatModel(usage=(1000, 200, 400)))
    reply = ask(gw, node="narrative", gap="g1")
    expected = cost_usd(MINI, input_tokens=1000, output_tokens=200, cached_tokens=400)
    assert (reply.recorded.input_tokens, reply.recorded.output_tokens, reply.recorded.cached_tokens) == (1000, 200, 400)
    assert reply.recorded.cost_usd == pytest.approx(expected) and not reply.recorded.estimated
    (entry,) = file_ledger(gw).entries
    assert entry == LedgerEntry(
        at=now, model="gpt-4.1-mini", node="narrative", gap="g1", input_tokens=1000, output_tokens=200,
        cached_tokens=400, cost_usd=expected, estimated=False, id=entry.id,
    )  # fmt: skip
    stored = json.loads(workspace.budget_ledger.read_text())["entries"]
    assert stored[0]["cost_usd"] == pytest.approx(expected)


def test_missing_usage_records_the_estimate(workspace: Workspace, now: datetime) -> None:
    gw = gateway(workspace, now, FakeChatModel(usage=None))
    reply = ask(gw, "a" * 400, max_output_tokens=50)
    assert reply.recorded.estimated and reply.recorded.output_tokens == 50 and reply.recorded.input_tokens > 50
    assert file_ledger(gw).entries[0].estimated
    assert reply.recorded.cost_usd == pytest.approx(
        cost_usd(MINI, input_tokens=reply.recorded.input_tokens, output_tokens=50)
    )


def test_max_tokens_is_sent_to_the_model(workspace: Workspace, now: datetime) -> None:
    fake = FakeChatModel()
    ask(gateway(workspace, now, fake), max_output_tokens=77)
    assert fake.calls[0][1]["max_tokens"] == 77


def test_provider_failure_records_the_estimate_and_raises(workspace: Workspace, now: datetime) -> None:
    def boom(messages: list[BaseMessage]) -> AIMessage:
        raise ConnectionError("endpoint down")

    gw = gateway(workspace, now, FakeChatModel(respond=boom))
    with pytest.raises(ModelCallError) as raised:
        ask(gw)
    assert raised.value.kind == "connection" and "endpoint down" in raised.value.reason
    (entry,) = file_ledger(gw).entries
    assert entry.estimated and entry.cost_usd > 0


# Structured output


class Answer(BaseModel):
    veto: bool
    reason: str


def test_schema_is_forced_as_a_tool_and_parsed(workspace: Workspace, now: datetime) -> None:
    fake = FakeChatModel(respond=lambda m: tool_call_answer("Answer", {"veto": True, "reason": "tiny sample"}))
    reply = ask(gateway(workspace, now, fake), schema=Answer)
    assert reply.parsed == Answer(veto=True, reason="tiny sample") and reply.parse_error is None
    kwargs = fake.calls[0][1]
    assert kwargs["tool_choice"] == "Answer" and kwargs["tools"][0]["function"]["name"] == "Answer"


def test_json_text_answer_is_accepted(workspace: Workspace, now: datetime) -> None:
    fake = FakeChatModel(respond=lambda m: '```json\n{"veto": false, "reason": "fine"}\n```')
    assert ask(gateway(workspace, now, fake), schema=Answer).parsed == Answer(veto=False, reason="fine")


@pytest.mark.parametrize(
    "answer",
    [AIMessage(content="garbage"), tool_call_answer("Answer", {"veto": "maybe"}), tool_call_answer("Other", {})],
)
def test_malformed_answer_is_reported_not_raised(workspace: Workspace, now: datetime, answer: AIMessage) -> None:
    fake = FakeChatModel(respond=lambda m: answer)
    reply = ask(gateway(workspace, now, fake), schema=Answer)
    assert reply.parsed is None and reply.parse_error
    ask(gateway(workspace, now, fake), schema=Answer)
    assert len(fake.calls) == 2, "a malformed answer is not cached: the next run asks again"


def test_schema_and_tools_together_rejected(workspace: Workspace, now: datetime) -> None:
    from langchain_core.tools import tool

    @tool
    def search(query: str) -> str:
        """Search."""
        return query

    with pytest.raises(ValueError, match="not both"):
        ask(gateway(workspace, now), schema=Answer, tools=[search])


# The order of checks


def tight(**budget: Any) -> DreamingConfig:
    return DreamingConfig(budget=BudgetConfig(**budget), autoresearch=AutoresearchConfig(max_llm_calls_per_gap=2))


def test_call_ceiling_per_run(workspace: Workspace, now: datetime) -> None:
    fake = FakeChatModel()
    gw = gateway(workspace, now, fake, config=tight(max_llm_calls_per_run=2))
    ask(gw, "one")
    ask(gw, "two")
    assert isinstance(gw.check("x"), Skipped)
    with pytest.raises(BudgetError) as info:
        ask(gw, "three")
    assert info.value.reason == "call_limit" and len(fake.calls) == 2


def test_call_ceiling_per_gap(workspace: Workspace, now: datetime) -> None:
    gw = gateway(workspace, now, config=tight())
    ask(gw, "one", gap="g")
    ask(gw, "two", gap="g")
    assert gw.check("research", gap="g") == Skipped(reason="gap_call_limit", detail="2 calls already made for gap 'g'")
    assert gw.check("research", gap="other") == Allowed()


def test_breaker_wins_over_call_ceiling(workspace: Workspace, now: datetime) -> None:
    gw = gateway(
        workspace, now, FakeChatModel(usage=(1_000_000, 0)), config=tight(max_cost_usd=0.5, max_llm_calls_per_run=1)
    )
    ask(gw)  # costs $0.40... below the cap
    assert isinstance(gw.check("x"), Skipped) and gw.check("x").reason == "call_limit"  # type: ignore[union-attr]
    gw.ledger.record(LedgerEntry(at=now, model="m", node="n", cost_usd=0.2), now=now)
    decision = gw.check("x")
    assert isinstance(decision, Skipped) and decision.reason == "budget_exceeded"


def test_estimate_that_would_pass_the_cap_is_refused_and_latches(workspace: Workspace, now: datetime) -> None:
    fake = FakeChatModel()
    gw = gateway(workspace, now, fake, config=tight(max_cost_usd=0.001))  # one call's estimate is ~$0.00096
    with pytest.raises(BudgetError) as info:
        ask(gw, "x" * 2000)
    assert info.value.reason == "budget_exceeded" and fake.calls == []
    assert gw.breaker_tripped() and "would pass the cap" in (gw.ledger.tripped_reason or "")
    with pytest.raises(BudgetError):
        ask(gw, "tiny")  # latched: even a call that would fit is refused for the rest of the run
    (refused, again) = [e for e in events(workspace) if e["type"] == "llm.refused"]
    assert refused["reason"] == again["reason"] == "budget_exceeded" and refused["node"] == "test"
    assert gw.report().refusals == {"budget_exceeded": 2}


def test_refused_check_is_an_event(workspace: Workspace, now: datetime) -> None:
    gw = gateway(workspace, now, config=tight(max_cost_usd=0.0))
    decision = gw.check("verify", gap="g")
    assert isinstance(decision, Skipped) and decision.reason == "budget_exceeded"
    (event,) = events(workspace)
    assert event["type"] == "llm.refused" and event["gap"] == "g" and event["at"] == now.isoformat()


def test_corrupt_ledger_fails_closed_and_is_reported(workspace: Workspace, now: datetime) -> None:
    workspace.state_dir.mkdir(parents=True)
    workspace.budget_ledger.write_text("{not json")
    fake = FakeChatModel()
    gw = gateway(workspace, now, fake)
    assert isinstance(gw.check("verify"), Skipped)
    with pytest.raises(BudgetError):
        ask(gw)
    assert fake.calls == []
    moved = [e for e in events(workspace) if e["type"] == "budget.ledger_moved_aside"]
    assert moved and moved[0]["moved_to"].startswith("memory/.dreams/dreaming-budget.json.corrupt-")
    report = gw.report()
    assert report.breaker_tripped and report.ledger_problem
    assert any("moved aside" in line for line in report.lines())


def test_concurrent_calls_reserve_their_estimates(workspace: Workspace, now: datetime) -> None:
    # Two calls in flight at once must not both fit in room for one.
    gate = asyncio.Event()

    class Slow(FakeChatModel):
        async def _agenerate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
            await gate.wait()
            return self._generate(messages, stop, None, **kwargs)

    slow = Slow(usage=(10, 10))
    gw = gateway(workspace, now, slow, config=tight(max_cost_usd=0.0015))  # room for one ~$0.001 estimate

    async def scenario() -> tuple[Any, Any]:
        first = asyncio.create_task(gw.ainvoke([HumanMessage("a")], node="n", max_output_tokens=600))
        await asyncio.sleep(0)
        second = asyncio.create_task(gw.ainvoke([HumanMessage("b")], node="n", max_output_tokens=600))
        await asyncio.sleep(0)
        gate.set()
        a, b = await asyncio.gather(first, second, return_exceptions=True)
        return a, b

    first, second = asyncio.run(scenario())
    assert not isinstance(first, BaseException)
    assert isinstance(second, BudgetError)
    assert len(slow.calls) == 1


# Cache and report


def test_identical_request_next_run_is_free(workspace: Workspace, now: datetime) -> None:
    first = FakeChatModel(respond=lambda m: "the answer", usage=(100, 20))
    ask(gateway(workspace, now, first), "same question")
    second = FakeChatModel(respond=lambda m: "a different answer", usage=(100, 20))
    gw = gateway(workspace, now + timedelta(minutes=5), second)
    reply = ask(gw, "same question")
    assert reply.recorded.cache_hit and reply.text == "the answer" and reply.recorded.cost_usd == 0
    assert second.calls == []
    hit = file_ledger(gw).entries[-1]
    assert hit.cache_hit and hit.cost_usd == 0 and hit.at == now + timedelta(minutes=5)
    report = gw.report()
    assert (report.calls_made, report.cache_hits, report.run_spend_usd) == (0, 1, 0)
    ask(gw, "another question")
    assert len(second.calls) == 1


def test_different_parameters_are_not_the_same_request(workspace: Workspace, now: datetime) -> None:
    fake = FakeChatModel()
    gw = gateway(workspace, now, fake)
    ask(gw, "q", max_output_tokens=10)
    ask(gw, "q", max_output_tokens=20)
    ask(gw, "q", schema=Answer)
    assert len(fake.calls) == 3


def test_report_groups_tokens_by_node_and_model(workspace: Workspace, now: datetime) -> None:
    gw = gateway(workspace, now, FakeChatModel(usage=(100, 10)))
    ask(gw, "a", node="verify")
    ask(gw, "b", node="verify")
    ask(gw, "c", node="narrative")
    report = gw.report()
    assert report.by_node["verify"].input_tokens == 200 and report.by_node["verify"].calls == 2
    assert report.by_node["narrative"].output_tokens == 10
    assert report.by_model["gpt-4.1-mini"].calls == 3 and report.calls_made == 3
    assert report.window_spend_usd == pytest.approx(report.run_spend_usd) and not report.breaker_tripped
    text = "\n".join(report.lines())
    assert "3 calls" in text and "node `verify`" in text and "model `gpt-4.1-mini`" in text


def test_candidate_guard_uses_the_run_breaker(workspace: Workspace, now: datetime) -> None:
    gw = gateway(workspace, now, config=tight(max_cost_usd=0.0))
    decision = gw.candidates.check("fact", 0.9, 3)
    assert isinstance(decision, Skipped) and decision.reason == "budget_exceeded"


def test_status_reads_without_writing(workspace: Workspace, now: datetime) -> None:
    from dreaming.llm.report import read_budget_status

    gw = gateway(workspace, now, FakeChatModel(usage=(1000, 100)))
    ask(gw, node="verify")
    before = sorted(p.name for p in workspace.state_dir.iterdir())
    status = read_budget_status(workspace, DreamingConfig(), now + timedelta(minutes=1))
    assert status.calls_in_window == 1 and status.window_spend_usd > 0 and not status.next_run_tripped
    assert "closed" in "\n".join(status.lines())
    later = read_budget_status(workspace, DreamingConfig(), now + timedelta(minutes=61))
    assert later.window_spend_usd == 0
    assert sorted(p.name for p in workspace.state_dir.iterdir()) == before


def test_the_graph_context_sees_the_gateway_refusals_and_report(workspace: Workspace, now: datetime) -> None:
    from dreaming.graph import DreamContext

    def context(gw: LLMGateway | None) -> DreamContext:
        return DreamContext(workspace=workspace, config=DreamingConfig(), now=now, run_id="r", gateway=gw)

    tripped = context(gateway(workspace, now, config=tight(max_cost_usd=0.0)))
    assert tripped.model is not None and tripped.model_refusal("verify") == "budget_exceeded"
    report = tripped.budget_report()
    assert report["refusals"] == {"budget_exceeded": 1} and report["breaker_tripped"] is True
    json.dumps(report)
    assert not workspace.events.exists(), "the graph's budget node records the refusal event itself"
    assert context(gateway(workspace, now)).model_refusal("verify") is None
    none = context(None)
    assert none.model is None and none.model_refusal("verify") == "no LLM configured"
    assert none.budget_report() == {"available": False, "lines": ["LLM: not used (no LLM configured)."]}


# Write-ahead reservations (issue 9)


def stored_entries(ws: Workspace) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads(ws.budget_ledger.read_text())["entries"]
    return rows


def test_the_estimate_is_on_disk_before_the_request_leaves(workspace: Workspace, now: datetime) -> None:
    seen: list[list[dict[str, Any]]] = []

    def inspect(messages: list[BaseMessage]) -> AIMessage:
        seen.append(stored_entries(workspace))  # what a crash at this instant would leave
        return AIMessage(content="ok")

    gw = gateway(workspace, now, FakeChatModel(respond=inspect, usage=(10, 5)))
    ask(gw, "x" * 400, node="verify", gap="g", max_output_tokens=50)
    ((held,),) = seen
    est_in = held["input_tokens"]
    assert held["reserved"] is True and held["estimated"] is True and held["node"] == "verify" and held["gap"] == "g"
    assert held["output_tokens"] == 50 and est_in > 50
    assert held["cost_usd"] == pytest.approx(cost_usd(MINI, input_tokens=est_in, output_tokens=50))
    (settled,) = stored_entries(workspace)
    assert settled["id"] == held["id"] and settled["reserved"] is False and not settled["estimated"]
    assert settled["cost_usd"] == pytest.approx(cost_usd(MINI, input_tokens=10, output_tokens=5))


def test_no_usage_settles_at_the_estimate(workspace: Workspace, now: datetime) -> None:
    gw = gateway(workspace, now, FakeChatModel(usage=None))
    ask(gw, max_output_tokens=50)
    (row,) = stored_entries(workspace)
    assert row["reserved"] is False and row["estimated"] is True and row["output_tokens"] == 50


def refused_connection(messages: list[BaseMessage]) -> AIMessage:
    import openai

    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    try:
        raise httpx.ConnectError("[Errno 111] Connection refused", request=request)
    except httpx.ConnectError as exc:
        raise openai.APIConnectionError(request=request) from exc  # what ChatOpenAI raises


def timed_out(messages: list[BaseMessage]) -> AIMessage:
    raise httpx.ReadTimeout("the server took too long")


@pytest.mark.parametrize(
    ("respond", "kept"),
    [(refused_connection, False), (timed_out, True)],
    ids=["connection-refused-nothing-sent", "read-timeout-may-be-billed"],
)
def test_a_failed_call_settles_its_reservation(workspace: Workspace, now: datetime, respond: Any, kept: bool) -> None:
    gw = gateway(workspace, now, FakeChatModel(respond=respond))
    with pytest.raises(Exception):  # noqa: B017 - the provider's own error goes on up
        ask(gw)
    rows = stored_entries(workspace)
    assert all(row["reserved"] is False for row in rows)
    if kept:
        (row,) = rows
        assert row["estimated"] and row["cost_usd"] > 0 and gw.report().calls_made == 1
    else:
        assert rows == [] and gw.ledger.spend_in_window(now) == 0


def test_a_crash_leftover_keeps_the_next_run_from_spending_it_again(workspace: Workspace, now: datetime) -> None:
    def die(messages: list[BaseMessage]) -> AIMessage:
        raise SystemExit("killed mid-call")  # stands for SIGKILL: settlement code never runs after the real one

    config = tight(max_cost_usd=0.0015)  # room for one ~$0.001 estimate
    first = gateway(workspace, now, FakeChatModel(respond=die), config=config)
    first._ledger.settle = lambda *a, **k: None  # type: ignore[method-assign]  # a killed process settles nothing
    with pytest.raises(SystemExit):
        ask(first, "a", max_output_tokens=600)
    (leftover,) = stored_entries(workspace)
    assert leftover["reserved"] is True
    from dreaming.llm.report import read_budget_status

    status = read_budget_status(workspace, config, now + timedelta(minutes=1))
    assert status.unsettled_in_window == 1 and status.unsettled_usd == pytest.approx(leftover["cost_usd"])
    assert any("1 calls never settled" in line for line in status.lines())
    fake = FakeChatModel()
    second = gateway(workspace, now + timedelta(minutes=5), fake, config=config)
    with pytest.raises(BudgetError) as info:
        ask(second, "b", max_output_tokens=600)
    assert info.value.reason == "budget_exceeded" and fake.calls == []
    assert "reserved by calls in flight or lost" in (second.ledger.tripped_reason or "")


def test_calls_in_flight_at_once_are_all_reserved_on_disk(workspace: Workspace, now: datetime) -> None:
    gate = asyncio.Event()
    in_flight: list[int] = []

    class Slow(FakeChatModel):
        async def _agenerate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
            in_flight.append(sum(row["reserved"] for row in stored_entries(workspace)))
            if len(in_flight) == 3:
                gate.set()
            await gate.wait()
            return self._generate(messages, stop, None, **kwargs)

    slow = Slow(usage=(10, 10))
    gw = gateway(workspace, now, slow, config=tight(max_cost_usd=0.0035))  # room for three ~$0.001 estimates

    async def scenario() -> list[Any]:
        calls = [gw.ainvoke([HumanMessage(str(i))], node="n", max_output_tokens=600) for i in range(5)]
        return await asyncio.gather(*calls, return_exceptions=True)

    results = asyncio.run(scenario())
    assert [isinstance(r, BudgetError) for r in results] == [False, False, False, True, True]
    # Each request left with its own reservation on disk; the last one to leave saw all three.
    assert len(in_flight) == len(slow.calls) == 3 and min(in_flight) >= 1 and max(in_flight) == 3
    assert [row["reserved"] for row in stored_entries(workspace)] == [False, False, False]


def test_each_call_is_a_named_run_for_tracers(workspace: Workspace, now: datetime) -> None:
    from langchain_core.tracers.context import collect_runs

    gw = gateway(workspace, now, FakeChatModel(usage=(100, 20)))
    with collect_runs() as runs:
        ask(gw, "what is K_FLAT", node="research", gap="what is K_FLAT")
    (run,) = runs.traced_runs
    assert run.name == "llm research: what is K_FLAT"
    metadata = (run.extra or {}).get("metadata") or {}
    assert metadata["dreaming_node"] == "research" and metadata["gap"] == "what is K_FLAT"
    assert metadata["model"] == gw.model_name and metadata["estimated_cost_usd"] > 0
