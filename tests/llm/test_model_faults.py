"""A model's misbehaviour against an OpenAI-compatible endpoint mocked with respx (issue 9, item 8).

The cap reaches the server in the form it reads; every fault of a call (a stall past the timeout, a refused
connection, an HTTP error, a body that is not JSON or not a completion, a reply longer than the cap) is one typed
error with its cost recorded; and a whole ``dreaming run`` whose model stalls on one gap ends as a normal night.
"""

from __future__ import annotations

import asyncio
import json
import logging
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx
from langchain_core.messages import HumanMessage
from typer.testing import CliRunner

from dreaming.cli import app
from dreaming.config import DreamingConfig, ModelPrice
from dreaming.errors import ModelCallError
from dreaming.graph.nodes import write_narrative
from dreaming.graph.verify import verify_insights_detailed
from dreaming.llm.gateway import LLMGateway, build_gateway
from dreaming.llm.pricing import cost_usd
from dreaming.memory import Workspace
from dreaming.memory.gaps import record_gap
from dreaming.memory.verdicts import VerdictCandidate
from tests._fakes import completion, file_ledger
from tests._workspaces import NIGHT, build_verdict_workspace

COMPATIBLE = "http://llm.test/v1"
"""A llama.cpp-like server: it reads ``max_tokens`` and ignores ``max_completion_tokens``."""
OPENAI = "https://api.openai.com/v1"
MINI = ModelPrice(input=0.40, output=1.60, cached_input=0.10)
CAP = 50


def llama_cpp(request: httpx.Request) -> httpx.Response:
    """Honour only ``max_tokens``: without it, run on to five times the cap (what llama.cpp did)."""
    body = json.loads(request.content)
    tokens = body["max_tokens"] if "max_tokens" in body else 5 * int(body["max_completion_tokens"])
    return httpx.Response(200, json=completion("word " * tokens, completion_tokens=tokens))


def gateway(ws: Workspace, now: datetime, base_url: str | None = COMPATIBLE) -> LLMGateway:
    env = {"OPENAI_API_KEY": "sk-test"} | ({"OPENAI_BASE_URL": base_url} if base_url else {})
    return build_gateway(DreamingConfig(), ws, env=env, now=lambda: now)


def ask(gw: LLMGateway) -> Any:
    return asyncio.run(gw.ainvoke([HumanMessage("Say something.")], node="test", max_output_tokens=CAP))


def events(ws: Workspace) -> list[dict[str, Any]]:
    return [json.loads(line) for line in ws.events.read_text().splitlines()] if ws.events.exists() else []


def test_the_output_cap_reaches_the_server_in_the_form_it_reads(workspace: Workspace, now: datetime) -> None:
    with respx.mock(assert_all_mocked=True) as router:
        compatible = router.post(f"{COMPATIBLE}/chat/completions").mock(side_effect=llama_cpp)
        reply = ask(gateway(workspace, now))
        openai = router.post(f"{OPENAI}/chat/completions").mock(
            return_value=httpx.Response(200, json=completion("hi", completion_tokens=2))
        )
        other = Workspace.at(workspace.root.parent / "other")  # its own cache: the same request goes out again
        ask(gateway(other, now, base_url=None))
    sent = json.loads(compatible.calls[0].request.content)
    assert sent["max_tokens"] == sent["max_completion_tokens"] == CAP
    assert (
        reply.recorded.output_tokens == CAP and not reply.recorded.estimated
    )  # the server honoured the cap it could read
    # OpenAI's own API refuses a request carrying both fields: it gets only the one it reads.
    to_openai = json.loads(openai.calls[0].request.content)
    assert to_openai["max_completion_tokens"] == CAP and "max_tokens" not in to_openai


def test_a_reply_over_the_cap_is_recorded_at_its_real_usage_flagged_and_refused(
    workspace: Workspace, now: datetime, caplog: pytest.LogCaptureFixture
) -> None:
    def ignores_every_cap(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=completion("word " * 5 * CAP, prompt_tokens=30, completion_tokens=5 * CAP))

    with respx.mock(assert_all_mocked=True) as router:
        router.post(f"{COMPATIBLE}/chat/completions").mock(side_effect=ignores_every_cap)
        gw = gateway(workspace, now)
        with pytest.raises(ModelCallError) as raised:
            ask(gw)
    assert raised.value.kind == "oversized_reply" and f"{5 * CAP} completion tokens" in raised.value.reason
    (entry,) = file_ledger(gw).entries
    assert (entry.input_tokens, entry.output_tokens, entry.estimated, entry.over_output_cap) == (
        30,
        5 * CAP,
        False,
        True,
    )
    assert entry.cost_usd == pytest.approx(cost_usd(MINI, input_tokens=30, output_tokens=5 * CAP))
    stored = json.loads(workspace.budget_ledger.read_text())["entries"]
    assert stored[0]["over_output_cap"] is True and stored[0]["output_tokens"] == 5 * CAP
    report = gw.report()
    assert report.oversized_replies == 1 and report.failures == {"oversized_reply": 1}
    assert any("over the output cap: 1" in line for line in report.lines())
    assert any("oversized_reply" in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)
    assert [e["failure"] for e in events(workspace) if e["type"] == "llm.call_failed"] == ["oversized_reply"]


FAULTS: dict[str, tuple[dict[str, Any], str]] = {
    "stalls past the timeout": ({"side_effect": httpx.ReadTimeout("stalled")}, "timeout"),
    "refuses the connection": ({"side_effect": httpx.ConnectError("refused")}, "connection"),
    "answers 500": ({"return_value": httpx.Response(500, json={"error": {"message": "boom"}})}, "http_500"),
    "answers 429": ({"return_value": httpx.Response(429, json={"error": {"message": "slow down"}})}, "http_429"),
    "sends broken JSON": (
        {"return_value": httpx.Response(200, content=b'{"choices": [', headers={"content-type": "application/json"})},
        "malformed_reply",
    ),
    "sends no completion": ({"return_value": httpx.Response(200, json={"unexpected": True})}, "malformed_reply"),
}


@pytest.mark.parametrize("fault", FAULTS)
def test_every_fault_of_a_call_is_one_typed_error_with_its_estimate_settled(
    workspace: Workspace, now: datetime, fault: str
) -> None:
    mock, kind = FAULTS[fault]
    with respx.mock(assert_all_mocked=True) as router:
        route = router.post(f"{COMPATIBLE}/chat/completions").mock(**mock)
        gw = gateway(workspace, now)
        with pytest.raises(ModelCallError) as raised:
            ask(gw)
    assert route.call_count == 1  # no hidden retry
    assert raised.value.kind == kind
    if kind == "connection":  # no connection was made, so nothing was sent: the reservation is released
        assert file_ledger(gw).entries == ()
    else:
        (entry,) = file_ledger(gw).entries  # the provider may have billed it: the estimate is recorded (fail closed)
        assert entry.estimated and entry.output_tokens == CAP and entry.cost_usd > 0 and not entry.over_output_cap
    assert gw.report().failures == {kind: 1}
    assert "sk-test" not in raised.value.reason


def candidate(i: int) -> VerdictCandidate:
    return VerdictCandidate(
        id=f"eth-sell-bear-7d-{i}", asset="ETH", verdict="SELL", regime="bear", window="7d", kind="reliable",
        n=12 + i, hit_rate=0.8, wrong_way_rate=0.1, avg_change_pct=-0.03, score=0.82, hits=0, passes_gate=True,
        last_seen="2026-01-01",
    )  # fmt: skip


def test_verify_and_narrative_treat_an_oversized_reply_as_a_failed_call(workspace: Workspace, now: datetime) -> None:
    def oversized_veto(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        call = {"id": "c1", "type": "function", "function": {"name": "VerifyAnswer",
                "arguments": '{"veto": true, "reason": "spurious"}'}}  # fmt: skip
        payload = completion("", completion_tokens=10 * int(body["max_tokens"]))
        payload["choices"][0]["message"] = {"role": "assistant", "content": None, "tool_calls": [call]}
        return httpx.Response(200, json=payload)

    with respx.mock(assert_all_mocked=True) as router:
        router.post(f"{COMPATIBLE}/chat/completions").mock(side_effect=oversized_veto)
        gw = gateway(workspace, now)
        result = asyncio.run(verify_insights_detailed(gw, [candidate(1), candidate(2)]))
        narrative = asyncio.run(write_narrative(gw, "2 insights passed the gate."))
    # A reply that broke the cap vetoes nothing (it can only count as a failed call) and writes no prose.
    assert result.vetoes == {} and result.failed == 2 and narrative is None
    assert gw.report().oversized_replies == 3 and all(e.over_output_cap for e in file_ledger(gw).entries)


# A whole night through the CLI


CONFIG = """
[verdicts]
llm_verify = true
[diary]
narrative = true
[autoresearch]
enabled = true
sources = ["memory"]
concurrency = 1
max_gaps_per_night = 3
"""
GAPS = ("when does the flat band widen", "which lock file does the night take", "how is the cache bounded")
STALLED = GAPS[1]


def _night_server(request: httpx.Request) -> httpx.Response:
    """Answer every call briefly, except research on the stalled gap, which never answers in time."""
    body = json.loads(request.content)
    asked = [str(m.get("content")) for m in body["messages"] if m["role"] == "user"]
    names = [t["function"]["name"] for t in body.get("tools") or []]
    if any(text.startswith(f"Question: {STALLED}") for text in asked):
        raise httpx.ReadTimeout("the server stalled past the timeout")
    if "VerifyAnswer" in names or "ClaimsAnswer" in names or "VetoAnswer" in names:
        args = {"VerifyAnswer": {"veto": False, "reason": "plausible"}, "ClaimsAnswer": {"claims": []},
                "VetoAnswer": {"veto": False, "reason": "fine"}}[names[0]]  # fmt: skip
        call = {"id": "c1", "type": "function", "function": {"name": names[0], "arguments": json.dumps(args)}}
        payload = completion("", completion_tokens=12)
        payload["choices"][0]["message"] = {"role": "assistant", "content": None, "tool_calls": [call]}
        return httpx.Response(200, json=payload)
    return httpx.Response(200, json=completion("Tonight the memory rested.", completion_tokens=12))


def test_a_night_whose_model_stalls_on_one_gap_ends_normally_and_keeps_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = build_verdict_workspace(tmp_path / "ws")
    (root / "dreaming.toml").write_text(CONFIG)
    (root / "memory" / "2026-08-30.md").write_text("The flat band widens when volatility doubles.\n")
    ws = Workspace.at(root)
    night = datetime.fromisoformat(NIGHT)
    for rank, query in enumerate(GAPS):
        for _ in range(len(GAPS) - rank):  # earlier gaps are asked more often, so they are researched first
            record_gap(ws, query, "no_results", best_score=0.0, now=night)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    monkeypatch.setenv("OPENAI_BASE_URL", COMPATIBLE)
    with respx.mock(assert_all_mocked=True) as router:
        route = router.post(f"{COMPATIBLE}/chat/completions").mock(side_effect=_night_server)
        result = runner.invoke(app, ["run", "--workspace", str(root), "--now", NIGHT, "--json"])
    assert result.exit_code == 0, result.output
    assert route.call_count > 3  # research before and after the stall, verify and the narrative all went out
    rows = {row["gap"]: row for row in map(json.loads, ws.research_log.read_text().splitlines())}
    assert set(rows) == set(GAPS)  # the gaps researched before and after the failure are all recorded
    assert rows[STALLED]["decision"] == "failed" and "the model call failed (timeout" in rows[STALLED]["reason"]
    assert all(rows[g]["decision"] != "failed" for g in GAPS if g != STALLED)
    gaps = {g["query"]: g for g in json.loads(ws.knowledge_gaps.read_text())["gaps"].values()}
    assert gaps[STALLED]["last_outcome"] == "failed" and gaps[STALLED]["status"] == "open"  # tried again later
    entry = ws.dreams_md.read_text().rsplit("<!-- dreaming:run:", 1)[1]
    assert f'"{STALLED}" — FAILED' in entry and "Calls failed: timeout 1." in entry
    assert "Tonight the memory rested." in entry  # the narrative after the failure was written
    ledger = json.loads(ws.budget_ledger.read_text())["entries"]
    assert len([e for e in ledger if not e.get("cache_hit")]) == route.call_count  # every call sent is accounted


runner = CliRunner()
