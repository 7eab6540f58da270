"""One ``dreaming run`` dreams the recall path next to the verdict path (issue 3)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from typer.testing import CliRunner

from dreaming.cli import app
from dreaming.memory import Workspace
from dreaming.memory.recall import RecallResult, record_short_term_recalls
from tests._workspaces import NIGHT, build_verdict_workspace, snapshot

runner = CliRunner()


def _recall_workspace(root: Path) -> Path:
    build_verdict_workspace(root)
    note = root / "memory" / "2026-08-28.md"
    note.write_text("# Ops\n\nGateway binds loopback and port 18789.\n")
    ws = Workspace.at(root)
    start = datetime(2026, 8, 28, 9, tzinfo=UTC)
    hit = RecallResult(
        path="memory/2026-08-28.md",
        start_line=3,
        end_line=3,
        score=0.95,
        snippet="Gateway binds loopback and port 18789.",
    )
    for day, query in enumerate(["gateway port", "loopback binding", "which port does the gateway use"]):
        record_short_term_recalls(ws, query=query, results=[hit], now=start + timedelta(days=day))
    return root


def test_run_promotes_recalls_into_memory_md_next_to_the_verdict_index(tmp_path: Path) -> None:
    ws = _recall_workspace(tmp_path / "ws")
    result = runner.invoke(app, ["run", "--workspace", str(ws), "--now", NIGHT])
    assert result.exit_code == 0, result.output
    memory = (ws / "MEMORY.md").read_text()
    assert memory.startswith("# My memory\n\nKeep this line.\n")
    assert "## Promoted From Short-Term Memory (2026-09-01)" in memory
    assert "Gateway binds loopback and port 18789. [score=" in memory
    assert "<!-- dreaming:insights:start -->" in memory
    diary = (ws / "DREAMS.md").read_text()
    assert "### Recall" in diary and "3 real recalls" in diary
    assert (ws / "memory" / "dreaming" / "light" / "2026-09-01.md").exists()
    assert "2026-08-28.md" in [p.name for p in (ws / "memory").iterdir()]
    assert (ws / "memory" / "2026-08-28.md").read_text() == "# Ops\n\nGateway binds loopback and port 18789.\n"
    # A second night with the same inputs changes no byte of what the agent reads. (Phase signals and the day's
    # phase reports do change: each run is another dreaming revisit, as in OpenClaw.)
    kept = ("MEMORY.md", "memory/insights/", "memory/.dreams/candidates.json", "memory/2026-08-28.md")
    first = {k: v for k, v in snapshot(ws).items() if k.startswith(kept)}
    again = runner.invoke(app, ["run", "--workspace", str(ws), "--now", NIGHT])
    assert again.exit_code == 0, again.output
    assert {k: v for k, v in snapshot(ws).items() if k.startswith(kept)} == first
    assert (ws / "MEMORY.md").read_text().count("openclaw-memory-promotion:") == 1


def test_a_crlf_memory_file_keeps_its_bytes_when_recalls_are_promoted(tmp_path: Path) -> None:
    ws = _recall_workspace(tmp_path / "ws")
    user = b"\xef\xbb\xbf# My memory\r\n\r\nKeep this line.\r\n"
    (ws / "MEMORY.md").write_bytes(user)
    assert runner.invoke(app, ["run", "--workspace", str(ws), "--now", NIGHT]).exit_code == 0
    data = (ws / "MEMORY.md").read_bytes()
    assert data.startswith(user)
    assert b"Gateway binds loopback" in data and data.count(b"<!-- dreaming:insights:start -->") == 1
    assert runner.invoke(app, ["run", "--workspace", str(ws), "--now", NIGHT]).exit_code == 0
    assert (ws / "MEMORY.md").read_bytes() == data
