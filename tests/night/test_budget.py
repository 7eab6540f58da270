"""The budget end to end through ``dreaming run`` (issue 4): the incident replayed, the cache, no key no call."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx
from typer.testing import CliRunner

from dreaming.cli import app
from dreaming.graph.verify import MAX_OUTPUT_TOKENS as VERIFY_MAX_OUTPUT_TOKENS
from tests._slow_server import SlowChatServer, completion_tokens
from tests._workspaces import NIGHT, build_verdict_workspace, snapshot

runner = CliRunner()
BASE = "http://llm.test/v1"
CONFIG = """
[verdicts]
llm_verify = true
[diary]
narrative = true
[budget]
max_cost_usd = 0.01
[llm]
model = "gpt-4.1-mini"
"""


def _junk(request: httpx.Request) -> httpx.Response:
    """Answer every request with garbage and report heavy usage: all of the prompt, all of max_tokens."""
    body = json.loads(request.content)
    return httpx.Response(
        200,
        json={
            "id": "chatcmpl-junk",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "~~ dream fragments ~~"},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": len(request.content) // 3,
                "completion_tokens": body.get("max_tokens") or body.get("max_completion_tokens") or 600,
                "total_tokens": 0,
            },
        },
    )


def _no_veto(request: httpx.Request) -> httpx.Response:
    """Answer the verifier properly: a forced tool call saying "no veto"."""
    response = _junk(request)
    payload = json.loads(response.content)
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "VerifyAnswer", "arguments": '{"veto": false, "reason": "plausible"}'},
    }
    payload["choices"][0]["message"] = {"role": "assistant", "content": None, "tool_calls": [call]}
    return httpx.Response(200, json=payload)


@pytest.fixture
def llm_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[respx.MockRouter]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    monkeypatch.setenv("OPENAI_BASE_URL", BASE)
    with respx.mock(assert_all_called=False) as router:
        router.post(f"{BASE}/chat/completions").mock(side_effect=_junk)
        yield router


def _ledger(ws: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((ws / "memory" / ".dreams" / "dreaming-budget.json").read_text())
    return data


def test_incident_replayed_the_breaker_stops_the_spend(tmp_path: Path, llm_env: respx.MockRouter) -> None:
    ws = build_verdict_workspace(tmp_path / "ws", assets=tuple(f"A{i}" for i in range(12)))
    (ws / "dreaming.toml").write_text(CONFIG)
    (ws / "memory" / "2026-08-30.md").write_text("A real daily note the dream must never touch.\n")
    user_files = {k: v for k, v in snapshot(ws).items() if not k.startswith("memory/.dreams/")}
    result = runner.invoke(app, ["run", "--workspace", str(ws), "--now", NIGHT, "--json"])
    assert result.exit_code in (0, 4), result.output
    route = llm_env.routes[0]
    entries = [e for e in _ledger(ws)["entries"] if not e.get("cache_hit")]
    assert route.call_count == len(entries) > 0  # the endpoint saw only the calls the budget allowed and recorded
    spend = sum(e["cost_usd"] for e in entries)
    one_estimate = max(e["cost_usd"] for e in entries)
    assert spend <= 0.01 + one_estimate
    insights = len(list((ws / "memory" / "insights").glob("*.md")))
    assert route.call_count < insights  # it stopped before asking about every insight
    after = {k: v for k, v in snapshot(ws).items() if not k.startswith("memory/.dreams/")}
    for name, content in user_files.items():
        if name != "MEMORY.md":
            assert after[name] == content, name
    assert after["MEMORY.md"].startswith(user_files["MEMORY.md"])
    changed = {k for k in after if k not in user_files or after[k] != user_files[k]}
    ours = ("memory/insights/", "memory/dreaming/")  # dreaming's own folders
    assert all(k in ("MEMORY.md", "DREAMS.md") or k.startswith(ours) for k in changed), changed
    diary = (ws / "DREAMS.md").read_text()
    assert "Budget breaker tripped" in diary
    assert "~~ dream fragments ~~" not in diary  # junk never becomes a narrative or a promotion


def test_second_run_is_served_from_the_cache_at_no_cost(tmp_path: Path, llm_env: respx.MockRouter) -> None:
    llm_env.routes[0].mock(side_effect=_no_veto)
    ws = build_verdict_workspace(tmp_path / "ws")
    (ws / "dreaming.toml").write_text("[verdicts]\nllm_verify = true\n")
    assert runner.invoke(app, ["run", "--workspace", str(ws), "--now", NIGHT]).exit_code == 0
    calls = llm_env.routes[0].call_count
    assert calls > 0
    assert runner.invoke(app, ["run", "--workspace", str(ws), "--now", NIGHT]).exit_code == 0
    assert llm_env.routes[0].call_count == calls
    hits = [e for e in _ledger(ws)["entries"] if e.get("cache_hit")]
    assert len(hits) == calls and all(e["cost_usd"] == 0 for e in hits)


def test_no_key_no_request_at_all(tmp_path: Path) -> None:
    ws = build_verdict_workspace(tmp_path / "ws")
    (ws / "dreaming.toml").write_text(CONFIG)
    with respx.mock(assert_all_called=False) as router:
        anything = router.route().mock(side_effect=AssertionError("no request may go out without a key"))
        result = runner.invoke(app, ["run", "--workspace", str(ws), "--now", NIGHT])
    assert result.exit_code == 0, result.output
    assert anything.call_count == 0
    assert "not used (no OPENAI_API_KEY" in (ws / "DREAMS.md").read_text()
    assert not (ws / "memory" / ".dreams" / "dreaming-budget.json").exists()


def test_budget_spent_before_the_run_exits_4_and_still_writes_the_diary(
    tmp_path: Path, llm_env: respx.MockRouter
) -> None:
    ws = build_verdict_workspace(tmp_path / "ws")
    (ws / "dreaming.toml").write_text(CONFIG)
    assert runner.invoke(app, ["run", "--workspace", str(ws), "--now", NIGHT]).exit_code in (0, 4)
    ledger = _ledger(ws)
    ledger["entries"].append({**ledger["entries"][-1], "cost_usd": 0.02, "id": "over"})  # the window is over the cap
    (ws / "memory" / ".dreams" / "dreaming-budget.json").write_text(json.dumps(ledger))
    calls = llm_env.routes[0].call_count
    result = runner.invoke(app, ["run", "--workspace", str(ws), "--now", NIGHT])
    assert result.exit_code == 4, result.output
    assert llm_env.routes[0].call_count == calls
    last_entry = (ws / "DREAMS.md").read_text().rsplit("<!-- dreaming:run:", 1)[1]
    assert "Budget breaker tripped" in last_entry and "Stopped `verify`: budget_exceeded" in last_entry


# Issue 9: a crash cannot escape the budget (write-ahead reservations)

LOOPBACK_PRICE_PER_MILLION = 1000.0
"""Output price of the loopback model; input is free, so a call's estimate is exactly what the server bills."""
KILLS = 8


def _loopback_config(cap: float) -> str:
    return f"""
[verdicts]
llm_verify = true
[budget]
max_cost_usd = {cap!r}
[llm]
model = "loopback-model"
[llm.prices.loopback-model]
input = 0
output = {LOOPBACK_PRICE_PER_MILLION!r}
"""


def _dreaming_run(ws: Path, server: SlowChatServer) -> subprocess.Popen[str]:
    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "DREAMING_"))}
    env |= {
        "PYTHONPATH": os.pathsep.join([str(root / "src"), str(root)]),
        "OPENAI_API_KEY": "sk-test-loopback",
        "OPENAI_BASE_URL": server.base_url,
    }
    return subprocess.Popen(
        [sys.executable, "-m", "dreaming", "run", "--workspace", str(ws), "--now", NIGHT],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _kill_once_a_request_is_in_flight(run: subprocess.Popen[str], server: SlowChatServer, seen: int) -> bool:
    """SIGKILL ``run`` as soon as the server holds a request of it; return False when the run ended without one."""
    for _ in range(6000):  # a bounded wait for the run to reach the model, not a measure of its speed
        if len(server.requests) > seen:
            run.kill()
            run.communicate(timeout=60)
            return True
        if run.poll() is not None:
            run.communicate(timeout=60)
            return False
        time.sleep(0.02)
    run.kill()
    run.communicate(timeout=60)
    pytest.fail("the run neither reached the model nor ended")


@pytest.mark.slow
def test_killed_with_calls_in_flight_8_times_then_a_clean_run_bills_at_most_cap_plus_one_call(tmp_path: Path) -> None:
    one_call = VERIFY_MAX_OUTPUT_TOKENS * LOOPBACK_PRICE_PER_MILLION / 1e6  # the estimate of every verify call
    cap = (KILLS + 2.5) * one_call  # room for the 8 killed calls and 2 answered ones
    ws = build_verdict_workspace(tmp_path / "ws", assets=("A0", "A1", "A2", "A3"))  # 16 insights to verify
    (ws / "dreaming.toml").write_text(_loopback_config(cap))
    with SlowChatServer() as server:
        killed = 0
        for _ in range(KILLS):
            killed += _kill_once_a_request_is_in_flight(_dreaming_run(ws, server), server, len(server.requests))
        server.answer_now()
        clean = _dreaming_run(ws, server)
        _out, err = clean.communicate(timeout=300)
        assert clean.returncode in (0, 4), err
        received = server.requests
    assert killed == KILLS  # before the fix too: every run sent a request, none was recorded
    billed = math.fsum(completion_tokens(body) * LOOPBACK_PRICE_PER_MILLION / 1e6 for body in received)
    assert billed <= cap + one_call, f"{len(received)} requests billed ${billed:.2f} against a cap of ${cap:.2f}"
    entries = [e for e in _ledger(ws)["entries"] if not e["cache_hit"]]
    assert len(entries) == len(received)  # every request the server received or answered has its entry
    assert math.fsum(e["cost_usd"] for e in entries) >= billed - 1e-9
    assert sum(e["reserved"] for e in entries) == KILLS  # the killed calls stay reserved at their estimate
    assert "Budget breaker tripped" in (ws / "DREAMS.md").read_text().rsplit("<!-- dreaming:run:", 1)[1]
