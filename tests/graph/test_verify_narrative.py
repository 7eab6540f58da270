"""LLM verify (veto only) and the diary narrative, with the fake chat model; and the request cache's bounds."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timedelta
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from dreaming.config import BudgetConfig, DreamingConfig
from dreaming.graph.nodes import write_narrative
from dreaming.graph.verify import verify_insights, verify_insights_detailed
from dreaming.llm.cache import LLMCache, request_key
from dreaming.llm.gateway import LLMGateway, build_gateway
from dreaming.memory import Workspace
from dreaming.memory.verdicts import VerdictCandidate
from dreaming.prompts import load_prompt
from tests._fakes import FakeChatModel, tool_call_answer


def candidate(cid: str, n: int = 12) -> VerdictCandidate:
    return VerdictCandidate(
        id=cid, asset="ETH", verdict="SELL", regime="bear", window="7d", kind="reliable",
        n=n, hit_rate=0.8, wrong_way_rate=0.1, avg_change_pct=-0.03, score=0.82, hits=0, passes_gate=True,
        last_seen="2026-01-01",
    )  # fmt: skip


def gateway(ws: Workspace, now: datetime, fake: FakeChatModel, **budget: Any) -> LLMGateway:
    config = DreamingConfig(budget=BudgetConfig(**budget))
    return build_gateway(config, ws, env={"OPENAI_API_KEY": "k"}, now=lambda: now, model_factory=fake.factory)


def by_n(messages: list[BaseMessage]) -> AIMessage:
    stats = json.loads(str(messages[-1].content).split("\n", 1)[1])
    if stats["n"] < 10:
        return tool_call_answer("VerifyAnswer", {"veto": True, "reason": "  only   a few samples "})
    return tool_call_answer("VerifyAnswer", {"veto": False, "reason": "looks robust"})


def test_veto_only_for_the_candidates_the_model_rejects(workspace: Workspace, now: datetime) -> None:
    fake = FakeChatModel(respond=by_n)
    vetoes = asyncio.run(verify_insights(gateway(workspace, now, fake), [candidate("a", 5), candidate("b", 40)]))
    assert vetoes == {"a": "only a few samples"}
    sent = str(fake.calls[0][0][-1].content)
    for field in ("hit_rate", "adverse_rate", "avg_change", "score", "regime", "window", "kind", "asset", "verdict"):
        assert field in sent
    assert fake.calls[0][0][0].content == load_prompt("verify")


def test_malformed_answer_is_no_veto_and_logged(workspace: Workspace, now: datetime) -> None:
    answers = iter(
        [AIMessage(content="I think it is fine?"), tool_call_answer("VerifyAnswer", {"veto": True, "reason": "x"})]
    )
    gw = gateway(workspace, now, FakeChatModel(respond=lambda m: next(answers)))
    result = asyncio.run(verify_insights_detailed(gw, [candidate("a"), candidate("b")]))
    assert result.vetoes == {"b": "x"} and (result.malformed, result.verified) == (1, 1)
    logged = [json.loads(line) for line in workspace.events.read_text().splitlines()]
    assert [e["type"] for e in logged] == ["llm.verify_malformed"] and logged[0]["insight"] == "a"


def test_failed_call_is_no_veto_and_verification_continues(workspace: Workspace, now: datetime) -> None:
    def flaky(messages: list[BaseMessage]) -> AIMessage:
        if '"id": "a"' in str(messages[-1].content):
            raise TimeoutError("slow endpoint")
        return tool_call_answer("VerifyAnswer", {"veto": True, "reason": "spurious"})

    result = asyncio.run(
        verify_insights_detailed(
            gateway(workspace, now, FakeChatModel(respond=flaky)), [candidate("a"), candidate("b")]
        )
    )
    assert result.vetoes == {"b": "spurious"} and result.failed == 1


def test_budget_refusal_stops_and_leaves_the_rest_unvetoed(workspace: Workspace, now: datetime) -> None:
    fake = FakeChatModel(respond=lambda m: tool_call_answer("VerifyAnswer", {"veto": True, "reason": "no"}))
    gw = gateway(workspace, now, fake, max_llm_calls_per_run=2)
    result = asyncio.run(verify_insights_detailed(gw, [candidate(c) for c in "abcde"]))
    assert set(result.vetoes) == {"a", "b"} and result.unverified == 3 and result.stopped_by == "call_limit"
    assert len(fake.calls) == 2


def test_without_a_model_nothing_is_vetoed(workspace: Workspace, now: datetime) -> None:
    fake = FakeChatModel(respond=by_n)
    gw = build_gateway(DreamingConfig(), workspace, env={}, now=lambda: now, model_factory=fake.factory)
    result = asyncio.run(verify_insights_detailed(gw, [candidate("a", 1)]))
    assert result.vetoes == {} and result.unverified == 1 and fake.calls == []


# Narrative


def test_narrative_is_one_paragraph(workspace: Workspace, now: datetime) -> None:
    fake = FakeChatModel(respond=lambda m: "Tonight the memory   reviewed 3 insights.\n\nOne was set aside.")
    text = asyncio.run(write_narrative(gateway(workspace, now, fake), "3 insights; 1 vetoed"))
    assert text == "Tonight the memory reviewed 3 insights. One was set aside."
    messages = fake.calls[0][0]
    assert messages[0].content == load_prompt("narrative") and "3 insights; 1 vetoed" in str(messages[1].content)
    assert fake.calls[0][1]["max_tokens"] == 200


def test_runaway_narrative_is_cut(workspace: Workspace, now: datetime) -> None:
    fake = FakeChatModel(respond=lambda m: "word " * 1000)
    text = asyncio.run(write_narrative(gateway(workspace, now, fake), "facts"))
    assert text is not None and len(text) <= 1201 and text.endswith("…")


@pytest.mark.parametrize("answer", ["", "   \n "])
def test_empty_narrative_is_none(workspace: Workspace, now: datetime, answer: str) -> None:
    assert asyncio.run(write_narrative(gateway(workspace, now, FakeChatModel(respond=lambda m: answer)), "f")) is None


def test_narrative_none_when_refused_or_failing(workspace: Workspace, now: datetime) -> None:
    fake = FakeChatModel(respond=lambda m: "prose")
    assert asyncio.run(write_narrative(gateway(workspace, now, fake, max_cost_usd=0.0), "facts")) is None
    assert fake.calls == []

    def boom(messages: list[BaseMessage]) -> AIMessage:
        raise ConnectionError("down")

    assert asyncio.run(write_narrative(gateway(workspace, now, FakeChatModel(respond=boom)), "facts")) is None


# The request cache


def test_cache_key_ignores_message_ids_but_not_content() -> None:
    a = request_key("m", [HumanMessage("q", id="1")], {"max_tokens": 5})
    assert a == request_key("m", [HumanMessage("q", id="2")], {"max_tokens": 5})
    assert a != request_key("m", [HumanMessage("q2")], {"max_tokens": 5})
    assert a != request_key("other", [HumanMessage("q")], {"max_tokens": 5})
    assert a != request_key("m", [HumanMessage("q")], {"max_tokens": 6})


def test_cache_is_bounded_and_expires(workspace: Workspace, now: datetime) -> None:
    cache = LLMCache(workspace.state_dir / "llm-cache", max_entries=3, max_age=timedelta(days=1))
    for i in range(5):
        cache.put(f"k{i}", AIMessage(content=str(i)), model="m", now=now)
    assert len(list(cache.folder.glob("*.json"))) == 3
    hit = cache.get("k4", now=now)
    assert hit is not None and hit.message.content == "4"
    assert cache.get("k4", now=now + timedelta(days=2)) is None
    assert not (cache.folder / "k4.json").exists()


def test_corrupt_cache_entry_is_a_miss(workspace: Workspace, now: datetime) -> None:
    cache = LLMCache(workspace.state_dir / "llm-cache")
    cache.put("k", AIMessage(content="x"), model="m", now=now)
    (cache.folder / "k.json").write_text("{broken")
    assert cache.get("k", now=now) is None and not (cache.folder / "k.json").exists()
