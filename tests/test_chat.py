"""The chat agent's tools: "dream now" runs a real night; prior insights reads what it proved."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import datetime
from pathlib import Path

from langchain_core.messages import ToolMessage

from dreaming import dream
from dreaming.chat import dream_now_tool, memory_search_tool, prior_insights_tool, record_gap_tool
from dreaming.memory import ConsolidationLock, Workspace
from dreaming.memory.gaps import list_gaps
from tests._workspaces import NIGHT, build_verdict_workspace


def test_dream_now_runs_a_night_and_answers_with_its_diary(tmp_path: Path) -> None:
    ws = Workspace.at(build_verdict_workspace(tmp_path / "ws"))
    tool = dream_now_tool(ws, env={}, clock=lambda: datetime.fromisoformat(NIGHT))
    answer = asyncio.run(tool.ainvoke({}))
    assert "### Verdicts" in answer and "reliable-buy-test-uptrend-7d" in answer
    assert "(now, 03:00 UTC)" in ws.dreams_md.read_text()
    assert answer.strip() in ws.dreams_md.read_text()  # the answer is the night's diary entry, as DREAMS.md holds it
    insights = prior_insights_tool(ws).invoke({"regime": "uptrend"})
    assert "Reliable" in insights
    assert prior_insights_tool(ws).invoke({"asset": "GOLD"}) == "No active insights."


def test_dream_now_while_a_night_runs_says_so_instead_of_failing(tmp_path: Path) -> None:
    ws = Workspace.at(build_verdict_workspace(tmp_path / "ws"))
    (ws.root / "dreaming.toml").write_text("lock_timeout_seconds = 0.1\n")
    tool = dream_now_tool(ws, env={}, clock=lambda: datetime.fromisoformat(NIGHT))
    with ConsolidationLock(ws.lock_file):
        answer = asyncio.run(tool.ainvoke({}))
    assert answer.startswith("busy: run ") and answer.endswith(" is dreaming")


def _notes_workspace(root: Path) -> Workspace:
    root.mkdir(parents=True)
    (root / "MEMORY.md").write_text("# My memory\n")
    (root / "memory").mkdir()
    (root / "memory" / "2026-08-30.md").write_text("## Ops\nThe staging database is backed up every night at 02:00.\n")
    return Workspace.at(root)


def test_memory_search_tool_feeds_the_night_unless_read_only(tmp_path: Path) -> None:
    ws = _notes_workspace(tmp_path / "ws")
    now = datetime.fromisoformat(NIGHT)
    tool = memory_search_tool(ws, clock=lambda: now)
    hits = json.loads(tool.invoke({"query": "staging database backed up"}))
    assert hits and hits[0]["path"] == "memory/2026-08-30.md"
    store = json.loads((ws.state_dir / "short-term-recall.json").read_text())
    assert any(entry["path"] == "memory/2026-08-30.md" for entry in store["entries"].values())  # a recall
    assert json.loads(tool.invoke({"query": "kafka retention policy"})) == []
    assert [g.query for g in list_gaps(ws)] == ["kafka retention policy"]  # a miss: a gap for tonight
    quiet = memory_search_tool(ws, read_only=True, clock=lambda: now)
    before = {p.name: p.read_bytes() for p in ws.state_dir.iterdir() if p.is_file()}
    assert json.loads(quiet.invoke({"query": "zebra migration"})) == []
    assert {p.name: p.read_bytes() for p in ws.state_dir.iterdir() if p.is_file()} == before


def test_record_gap_tool_records_what_the_agent_could_not_find(tmp_path: Path) -> None:
    ws = _notes_workspace(tmp_path / "ws")
    tool = record_gap_tool(ws, clock=lambda: datetime.fromisoformat(NIGHT))
    assert "a night will research it" in tool.invoke({"question": "what is the kafka retention"})
    (gap,) = list_gaps(ws)
    assert gap.query == "what is the kafka retention" and gap.status == "open"


def test_prior_insights_wording_is_generic_unless_there_are_verdict_insights(tmp_path: Path) -> None:
    plain = prior_insights_tool(_notes_workspace(tmp_path / "plain"))
    assert "asset" not in plain.description and "regime" not in plain.description
    assert plain.invoke({}) == "No active insights."
    ws = Workspace.at(build_verdict_workspace(tmp_path / "ws"))
    dream(ws, now=datetime.fromisoformat(NIGHT), env={})
    assert "asset" in prior_insights_tool(ws).description


def test_dream_now_returns_the_report_as_its_artifact_sync_and_async(tmp_path: Path) -> None:
    ws = Workspace.at(build_verdict_workspace(tmp_path / "ws"))
    tool = dream_now_tool(ws, env={}, clock=lambda: datetime.fromisoformat(NIGHT))
    call = {"name": "dream_now", "args": {}, "id": "call_1", "type": "tool_call"}
    message = tool.invoke(call)
    assert isinstance(message, ToolMessage) and "(now, 03:00 UTC)" in str(message.content)
    assert message.artifact["run_id"] == json.loads(json.dumps(message.artifact))["run_id"]
    assert "diary" in message.artifact["done"] and "-now-" in message.artifact["run_id"]
    again = asyncio.run(tool.ainvoke(call))
    assert again.artifact["run_id"] != message.artifact["run_id"]


def test_dream_now_without_waiting_answers_busy_at_once(tmp_path: Path) -> None:
    ws = Workspace.at(build_verdict_workspace(tmp_path / "ws"))
    (ws.root / "dreaming.toml").write_text("lock_timeout_seconds = 600\n")  # waiting would outlast any test run
    ws.state_dir.mkdir(parents=True, exist_ok=True)
    (ws.state_dir / "current-run.json").write_text('{"version": 1, "run_id": "20260901T030000Z-run-abc123"}')
    tool = dream_now_tool(ws, env={}, wait=False)
    with ConsolidationLock(ws.lock_file):
        assert tool.invoke({}) == "busy: run 20260901T030000Z-run-abc123 is dreaming"


def test_waiting_for_the_lock_never_blocks_the_event_loop(tmp_path: Path) -> None:
    ws = Workspace.at(build_verdict_workspace(tmp_path / "ws"))
    (ws.root / "dreaming.toml").write_text("lock_timeout_seconds = 3\n")
    tool = dream_now_tool(ws, env={})
    stalls: list[float] = []

    async def ticker(stop: asyncio.Event) -> None:
        last = time.monotonic()
        while not stop.is_set():
            await asyncio.sleep(0.02)
            stalls.append(time.monotonic() - last)
            last = time.monotonic()

    async def main() -> str:
        stop = asyncio.Event()
        ticking = asyncio.create_task(ticker(stop))
        try:
            return str(await tool.ainvoke({}))
        finally:
            stop.set()
            await ticking

    with ConsolidationLock(ws.lock_file):
        answer = asyncio.run(main())
    assert answer.startswith("busy: run ")
    # The old tool waited on the lock inside the loop: one stall of the whole 3 s wait. The bound is loose on purpose.
    assert len(stalls) > 10 and max(stalls) < 1.0
