"""The public way to run a night: ``dream``/``adream`` return the report ``dreaming run --json`` prints."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dreaming import NightReport, adream, dream
from dreaming.cli import app
from dreaming.errors import LockBusyError, NotAWorkspaceError
from dreaming.memory import ConsolidationLock, Workspace
from tests._workspaces import NIGHT, build_verdict_workspace


def test_dream_returns_what_run_json_prints(tmp_path: Path) -> None:
    first, second = build_verdict_workspace(tmp_path / "a"), build_verdict_workspace(tmp_path / "b")
    report = dream(first, now=datetime.fromisoformat(NIGHT), env={})
    assert isinstance(report, NightReport) and report.done[-1] == "diary"
    printed = json.loads(CliRunner().invoke(app, ["run", "--workspace", str(second), "--now", NIGHT, "--json"]).output)

    def comparable(payload: dict[str, object]) -> str:
        text = json.dumps(payload, sort_keys=True).replace(str(first), "WS").replace(str(second), "WS")
        return text.replace(report.run_id, "RUN").replace(str(printed["run_id"]), "RUN")

    assert comparable(report.to_json()) == comparable(printed)
    assert report.diary_entry in (first / "DREAMS.md").read_text()


def test_dream_works_from_inside_a_running_event_loop(tmp_path: Path) -> None:
    ws = build_verdict_workspace(tmp_path / "ws")

    async def agent_code() -> NightReport:
        return dream(ws, now=datetime.fromisoformat(NIGHT), env={})  # a sync call in async code: its own thread

    assert asyncio.run(agent_code()).done[-1] == "diary"


def test_adream_refuses_a_folder_that_is_not_a_workspace_and_a_held_lock_without_waiting(tmp_path: Path) -> None:
    with pytest.raises(NotAWorkspaceError):
        asyncio.run(adream(tmp_path / "nothing-here", env={}))
    ws = Workspace.at(build_verdict_workspace(tmp_path / "ws"))
    (ws.root / "dreaming.toml").write_text("lock_timeout_seconds = 600\n")
    with ConsolidationLock(ws.lock_file), pytest.raises(LockBusyError):
        asyncio.run(adream(ws, env={}, wait=False))
