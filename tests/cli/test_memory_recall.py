from __future__ import annotations

import json
import os

import typer
from typer.testing import CliRunner

from dreaming.cli.memory import register
from dreaming.memory import Workspace
from dreaming.memory.recall import RecallResult, record_short_term_recalls
from tests.memory.recall.helpers import at, note

app = typer.Typer()
register(app)
NOW = "2026-04-01T12:00:00Z"


def _seed(ws: Workspace) -> None:
    note(ws, "memory/2026-04-01.md", ["Gateway binds loopback and port 18789"])
    (ws.root / "dreaming.toml").write_text("[deep]\nmin_score = 0\nmin_recall_count = 0\nmin_unique_queries = 0\n")
    record_short_term_recalls(
        ws, query="q", results=[RecallResult("memory/2026-04-01.md", 1, 1, 0.9, "Gateway binds loopback and port 18789")],
        now=at("2026-04-01T12:00:00"),
    )  # fmt: skip


def test_promote_dry_run_json_shape(workspace: Workspace) -> None:
    _seed(workspace)
    out = CliRunner().invoke(app, ["promote", "--dry-run", "--json", "--now", NOW, "-w", str(workspace.root)])
    assert out.exit_code == 0, out.output
    payload = json.loads(out.stdout)
    assert set(payload) == {"candidates", "skipped"}
    (c,) = payload["candidates"]
    assert set(c) == {"key", "path", "start_line", "end_line", "score", "recall_count", "daily_count",
                      "grounded_count", "unique_queries", "components"}  # fmt: skip
    assert set(c["components"]) == {"relevance", "frequency", "diversity", "recency", "consolidation", "conceptual",
                                    "phase_boost"}  # fmt: skip
    assert round(c["components"]["relevance"], 3) == 0.9 and not workspace.memory_md.exists()


def test_promote_applies_and_then_reports_promoted_gate(workspace: Workspace) -> None:
    _seed(workspace)
    args = ["promote", "--json", "--now", NOW, "-w", str(workspace.root)]
    assert CliRunner().invoke(app, args).exit_code == 0
    assert "Gateway binds loopback" in workspace.memory_md.read_text()
    again = json.loads(CliRunner().invoke(app, args).stdout)
    assert again["candidates"] == [] and again["skipped"][0]["gate"] == "promoted"


def test_promote_exits_3_when_the_consolidation_lock_is_busy(workspace: Workspace) -> None:
    _seed(workspace)
    (workspace.root / "dreaming.toml").write_text("lock_timeout_seconds = 0.1\n")
    import fcntl

    workspace.lock_file.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(workspace.lock_file, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        out = CliRunner().invoke(app, ["promote", "--now", NOW, "-w", str(workspace.root)])
    finally:
        os.close(fd)
    assert out.exit_code == 3


def test_doctor_repair_json(workspace: Workspace) -> None:
    _seed(workspace)
    lock = workspace.state_dir / "short-term-promotion.lock"
    lock.write_text("999999:0\n")
    old = at("2026-04-01T11:00:00").timestamp()
    os.utime(lock, (old, old))
    out = CliRunner().invoke(app, ["doctor", "--repair", "--json", "--now", NOW, "-w", str(workspace.root)])
    assert out.exit_code == 0, out.output
    payload = json.loads(out.stdout)
    assert payload["repair"]["removed_stale_lock"] is True and payload["audit"]["issues"] == []
    assert not lock.exists()
