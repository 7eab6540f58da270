"""A folder that is not a workspace is refused by every command but ``init``; read-only commands write nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from dreaming.cli import app
from tests._workspaces import NIGHT, build_verdict_workspace

runner = CliRunner()

COMMANDS = [
    ["run", "--now", NIGHT],
    ["now", "--now", NIGHT],
    ["status"],
    ["status", "--json"],
    ["insights"],
    ["schedule"],
    ["search", "backup policy"],
    ["gap", "add", "what is K_FLAT"],
    ["gap", "list"],
    ["promote"],
    ["promote", "--dry-run"],
    ["doctor"],
    ["doctor", "--repair"],
]
READ_ONLY = [
    ["status"],
    ["status", "--json"],
    ["insights", "--json"],
    ["schedule"],
    ["gap", "list"],
    ["promote", "--dry-run", "--json"],
    ["doctor", "--json"],
]


def tree(folder: Path) -> dict[str, bytes | None]:
    """Every path under ``folder`` with its bytes (None for a folder)."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() if p.is_file() else None for p in folder.rglob("*")}


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_folder_that_is_not_a_workspace_is_refused_and_left_empty(tmp_path: Path, command: list[str]) -> None:
    folder = tmp_path / "not-a-workspace"
    folder.mkdir()
    (folder / "notes.txt").write_text("someone else's folder\n")
    result = runner.invoke(app, [*command, "--workspace", str(folder)])
    assert result.exit_code == 2, result.output
    assert "is not a dreaming workspace" in result.output and "dreaming init" in result.output
    assert tree(folder) == {"notes.txt": b"someone else's folder\n"}


def test_init_makes_a_workspace_that_runs(tmp_path: Path) -> None:
    folder = tmp_path / "new"
    result = runner.invoke(app, ["init", "--workspace", str(folder)])
    assert result.exit_code == 0, result.output
    assert set(tree(folder)) == {"MEMORY.md", "memory", "memory/.dreams"}
    run = runner.invoke(app, ["run", "--workspace", str(folder), "--now", NIGHT])
    assert run.exit_code == 0, run.output
    assert (folder / "DREAMS.md").read_text().startswith("# Dream Diary\n")


def test_init_changes_nothing_that_exists(tmp_path: Path) -> None:
    root = build_verdict_workspace(tmp_path / "ws", user_memory="# Mine\r\nkeep\r\n")
    before = tree(root)
    result = runner.invoke(app, ["init", "--workspace", str(root)])
    assert result.exit_code == 0, result.output
    assert "nothing to create" in result.output
    assert tree(root) == before


@pytest.mark.parametrize("command", READ_ONLY, ids=" ".join)
def test_read_only_commands_write_nothing(tmp_path: Path, command: list[str]) -> None:
    root = build_verdict_workspace(tmp_path / "ws")
    assert runner.invoke(app, ["run", "--workspace", str(root), "--now", NIGHT]).exit_code == 0
    state = root / "memory" / ".dreams"
    (state / "knowledge-gaps.json").write_text("{not json")
    (state / "knowledge-gaps.lock").unlink(missing_ok=True)
    before = tree(root)
    result = runner.invoke(app, [*command, "--workspace", str(root)])
    assert result.exit_code == 0, result.output
    assert tree(root) == before
