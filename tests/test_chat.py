"""The chat agent's tools: "dream now" runs a real night; prior insights reads what it proved."""

from __future__ import annotations

import asyncio
from datetime import datetime
from pathlib import Path

from dreaming.chat import dream_now_tool, prior_insights_tool
from dreaming.memory import ConsolidationLock, Workspace
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
    assert answer.startswith("Not now:") and "holder" in answer
