"""The gateway against an OpenAI-compatible endpoint mocked with respx: the seed-003 incident, the cross-run cache,
and no request at all without a key."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest
import respx
from langchain_core.utils.function_calling import convert_to_openai_tool

from dreaming.config import BudgetConfig, DreamingConfig, ModelPrice
from dreaming.graph.nodes import write_narrative
from dreaming.graph.verify import MAX_OUTPUT_TOKENS, VerifyAnswer, _messages, verify_insights_detailed
from dreaming.llm.gateway import LLMGateway, build_gateway
from dreaming.llm.pricing import cost_usd, count_message_tokens
from dreaming.memory import Workspace
from dreaming.memory.verdicts import VerdictCandidate
from tests._fakes import completion, file_ledger

BASE_URL = "http://llm.test/v1"
ENV = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": BASE_URL}
MINI = ModelPrice(input=0.40, output=1.60, cached_input=0.10)


def candidate(i: int) -> VerdictCandidate:
    return VerdictCandidate(
        id=f"btc-buy-bull-7d-{i}", asset="BTC", verdict="BUY", regime="bull", window="7d", kind="reliable",
        n=12 + i, hit_rate=0.83, wrong_way_rate=0.08, avg_change_pct=0.042, score=0.86, hits=0, passes_gate=True,
        last_seen="2026-01-01",
    )  # fmt: skip


def build(ws: Workspace, now: datetime, *, max_cost: float = 1.0, env: dict[str, str] = ENV) -> LLMGateway:
    config = DreamingConfig(budget=BudgetConfig(max_cost_usd=max_cost))
    return build_gateway(config, ws, env=env, now=lambda: now)


def files_under(root: Any) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def test_the_incident_replayed(workspace: Workspace, now: datetime) -> None:
    # Seed 003: a loop of calls answering garbage with confidence 0, reporting large usage. Here: 50 passing insights,
    # llm_verify and the narrative on, max_cost_usd = 0.01, every answer junk that fills the whole output budget and
    # reports twice the prompt tokens we counted.
    (workspace.root / "memory").mkdir()
    note = workspace.root / "memory" / "2026-04-14.md"
    note.write_text("# A real daily note\n")
    before = files_under(workspace.root)
    estimate_in = count_message_tokens(_messages(candidate(10)), extra=[convert_to_openai_tool(VerifyAnswer)])
    one_call_estimate = cost_usd(MINI, input_tokens=estimate_in, output_tokens=MAX_OUTPUT_TOKENS)
    bodies: list[dict[str, Any]] = []

    def junk(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        bodies.append(body)
        limit = body.get("max_completion_tokens") or body.get("max_tokens")
        return httpx.Response(
            200,
            json=completion(
                "confidence: 0.00 dream fragment " * 20, prompt_tokens=2 * estimate_in, completion_tokens=limit
            ),
        )

    with respx.mock(assert_all_mocked=True) as router:
        route = router.post(f"{BASE_URL}/chat/completions").mock(side_effect=junk)
        gw = build(workspace, now, max_cost=0.01)
        candidates = [candidate(i) for i in range(50)]
        result = asyncio.run(verify_insights_detailed(gw, candidates))
        narrative = asyncio.run(write_narrative(gw, "50 insights passed the gate."))

    report = gw.report()
    entries = file_ledger(gw).entries
    assert route.call_count == len(entries) == report.calls_made  # the endpoint saw only what the budget allowed
    assert 5 < route.call_count < 50
    assert all(b["model"] == "gpt-4.1-mini" and b["tools"][0]["function"]["name"] == "VerifyAnswer" for b in bodies)
    spend = gw.ledger.spend_in_window(now)
    assert spend <= 0.01 + one_call_estimate
    assert result.vetoes == {} and result.malformed == route.call_count  # junk never vetoes, never promotes
    assert result.stopped_by == "budget_exceeded" and result.unverified == 50 - route.call_count
    assert narrative is None
    assert report.breaker_tripped and report.refusals == {"budget_exceeded": 2}  # verify's stop, then the narrative
    assert any("breaker tripped" in line for line in report.lines())
    stored = json.loads(workspace.budget_ledger.read_text())
    assert sum(e["cost_usd"] for e in stored["entries"]) == pytest.approx(spend)
    # Nothing outside dreaming's own folder changed.
    after = files_under(workspace.root)
    assert {f for f in after - before if not f.startswith("memory/.dreams/")} == set()
    assert note.read_text() == "# A real daily note\n"
    # The next run, minutes later, cannot fit a call in the window: no request at all.
    with respx.mock(assert_all_mocked=True, assert_all_called=False) as router:
        again = router.post(f"{BASE_URL}/chat/completions").mock(side_effect=junk)
        gw2 = build(workspace, now + timedelta(minutes=10), max_cost=0.01)
        result2 = asyncio.run(verify_insights_detailed(gw2, candidates))
    assert again.call_count == 0 and result2.unverified == 50


def test_second_run_is_served_from_the_cache(workspace: Workspace, now: datetime) -> None:
    answer = '{"veto": true, "reason": "a single regime explains it"}'
    with respx.mock(assert_all_mocked=True) as router:
        route = router.post(f"{BASE_URL}/chat/completions").mock(
            return_value=httpx.Response(
                200, json=completion(answer, prompt_tokens=400, completion_tokens=30, cached=100)
            )
        )
        first = build(workspace, now)
        vetoes = asyncio.run(verify_insights_detailed(first, [candidate(1), candidate(2)])).vetoes
        assert route.call_count == 2
        first_entry = file_ledger(first).entries[0]
        assert (first_entry.input_tokens, first_entry.output_tokens, first_entry.cached_tokens) == (400, 30, 100)
        assert first_entry.cost_usd == pytest.approx(
            cost_usd(MINI, input_tokens=400, output_tokens=30, cached_tokens=100)
        )

        second = build(workspace, now + timedelta(hours=2))
        again = asyncio.run(verify_insights_detailed(second, [candidate(1), candidate(2)])).vetoes
    assert route.call_count == 2, "identical requests must not reach the endpoint again"
    assert again == vetoes == {c: "a single regime explains it" for c in ("btc-buy-bull-7d-1", "btc-buy-bull-7d-2")}
    report = second.report()
    assert (report.calls_made, report.cache_hits, report.run_spend_usd) == (0, 2, 0)
    stored = json.loads(workspace.budget_ledger.read_text())["entries"]
    assert [(e["cache_hit"], e["cost_usd"]) for e in stored] == [(True, 0.0), (True, 0.0)]  # the first run aged out


def test_no_key_means_no_http_request(workspace: Workspace, now: datetime) -> None:
    def forbidden(request: httpx.Request) -> httpx.Response:
        pytest.fail(f"an HTTP request was made without a key: {request.url}")

    with respx.mock(assert_all_mocked=True, assert_all_called=False) as router:
        route = router.route().mock(side_effect=forbidden)
        gw = build(workspace, now, env={"OPENAI_BASE_URL": BASE_URL})
        result = asyncio.run(verify_insights_detailed(gw, [candidate(1)]))
        narrative = asyncio.run(write_narrative(gw, "facts"))
    assert not route.called
    assert result.unverified == 1 and result.vetoes == {} and narrative is None
    assert not workspace.budget_ledger.exists()
