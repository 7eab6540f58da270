"""No write leaves the workspace through a symbolic link, and no note outside it is read, indexed or recorded.

The one sanctioned exception is OpenClaw 2026.9's recall database (and its -wal, -shm, -journal), for a workspace
whose recall store is there: a night writes nothing else outside the workspace.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dreaming.cli import app
from dreaming.errors import OutsideWorkspaceError
from dreaming.memory import InputReport, Workspace, append_jsonl, atomic_write_text, check_confined, check_write_path
from dreaming.memory.recall import (
    RecallResult,
    check_recall_store_confined,
    ingest_daily_notes,
    read_store,
    record_short_term_recalls,
)
from dreaming.memory.search import search_memory
from tests._workspaces import NIGHT, build_verdict_workspace
from tests.memory.recall.openclaw_state import entries_in, install_openclaw


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() if p.is_file() else b"/" for p in folder.rglob("*")}


def test_a_write_through_a_linked_folder_or_file_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.jsonl").write_text("theirs\n")
    inside = tmp_path / "ws"
    inside.mkdir()
    (inside / "folder").symlink_to(outside, target_is_directory=True)
    (inside / "file.jsonl").symlink_to(outside / "victim.jsonl")
    (inside / "dangling.md").symlink_to(outside / "not-yet.md")
    with pytest.raises(OutsideWorkspaceError, match=r"folder/x\.md"):
        atomic_write_text(inside / "folder" / "x.md", "escape")
    with pytest.raises(OutsideWorkspaceError, match=r"file\.jsonl"):
        append_jsonl(inside / "file.jsonl", [{"a": 1}])
    with pytest.raises(OutsideWorkspaceError):
        atomic_write_text(inside / "dangling.md", "escape")
    assert snapshot(outside) == {"victim.jsonl": b"theirs\n"}
    check_write_path(inside / "real" / "new.md")  # a real path, even one not created yet, is fine


@pytest.mark.parametrize(
    "linked",
    ["memory/insights", "memory/dreaming", "memory/.dreams/events.jsonl", "memory/dreaming/light", "MEMORY.md"],
)
def test_a_night_refuses_a_link_out_of_the_workspace_and_writes_nothing_there(tmp_path: Path, linked: str) -> None:
    root = build_verdict_workspace(tmp_path / "ws")
    outside = tmp_path / "outside"
    outside.mkdir()
    link = root / linked
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.suffix:
        (outside / link.name).write_text("outside file\n")
        link.unlink(missing_ok=True)
        link.symlink_to(outside / link.name)
    else:
        link.symlink_to(outside, target_is_directory=True)
    before = snapshot(outside)
    result = CliRunner().invoke(app, ["run", "--workspace", str(root), "--now", NIGHT])
    assert result.exit_code == 1, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "refusing to write" in errors[0] and linked.split("/")[-1] in errors[0]
    assert "Traceback" not in result.output
    assert snapshot(outside) == before


def test_a_note_linked_from_outside_is_not_read_indexed_or_recorded(workspace: Workspace, now: datetime) -> None:
    outside = workspace.root.parent / "outside"
    outside.mkdir()
    (outside / "2026-04-14.md").write_text("# Secret\n\nzebra quartz launch codes live here.\n")
    (outside / "notes").mkdir()
    (outside / "notes" / "2026-04-13.md").write_text("zebra quartz in a linked folder.\n")
    workspace.memory_dir.mkdir()
    (workspace.memory_dir / "2026-04-15.md").write_text("# Ops\n\nKafka retention is seven days.\n")
    (workspace.memory_dir / "2026-04-14.md").symlink_to(outside / "2026-04-14.md")
    (workspace.memory_dir / "linked").symlink_to(outside / "notes", target_is_directory=True)

    report = InputReport()
    ingested = ingest_daily_notes(workspace, now=now, report=report)
    assert ingested.outside_workspace == ("memory/2026-04-14.md",)
    assert [b.path for b in report.bad] == ["memory/2026-04-14.md"]
    assert "outside the workspace" in report.bad[0].reason
    paths = {entry["path"] for entry in read_store(workspace, now=now).entries.values()}
    assert paths == {"memory/2026-04-15.md"}

    assert search_memory(workspace, "zebra quartz") == []
    assert [hit.path for hit in search_memory(workspace, "kafka retention")] == ["memory/2026-04-15.md"]

    hit = RecallResult("memory/2026-04-14.md", 1, 3, 0.9, "zebra quartz launch codes live here.")
    assert record_short_term_recalls(workspace, query="zebra", results=[hit], now=now) == 0
    assert all("zebra" not in str(e.get("snippet")) for e in read_store(workspace, now=now).entries.values())


def _openclaw_workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A verdict workspace with a daily note, which is OpenClaw's default workspace; return it and its database."""
    root = build_verdict_workspace(tmp_path / "ws")
    (root / "memory" / "2026-08-31.md").write_text("# Ops\n\nKafka retention is seven days.\n")
    made = install_openclaw(tmp_path, monkeypatch)
    monkeypatch.setenv("OPENCLAW_WORKSPACE_DIR", str(root))
    return root, made.db


def test_the_only_file_a_night_writes_outside_the_workspace_is_openclaws_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, db = _openclaw_workspace(tmp_path, monkeypatch)
    outside = {k: v for k, v in snapshot(tmp_path).items() if not k.startswith("ws/")}
    result = CliRunner().invoke(app, ["run", "--workspace", str(root), "--now", NIGHT])
    assert result.exit_code == 0, result.output
    after = {k: v for k, v in snapshot(tmp_path).items() if not k.startswith("ws/")}
    changed = {k for k in outside.keys() | after.keys() if outside.get(k) != after.get(k)}
    assert changed and changed <= {f"openclaw-state/state/openclaw.sqlite{s}" for s in ("", "-wal", "-shm", "-journal")}
    assert entries_in(db, str(root), "short-term-recall")  # the night's ingestion went there
    assert not (root / "memory" / ".dreams" / "short-term-recall.json").exists()


def test_a_database_linked_to_a_regular_file_is_followed_as_openclaw_follows_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, db = _openclaw_workspace(tmp_path, monkeypatch)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    db.rename(elsewhere / "openclaw.sqlite")
    db.symlink_to(elsewhere / "openclaw.sqlite")
    check_confined(Workspace.at(root))
    check_recall_store_confined(Workspace.at(root))
    hit = RecallResult("memory/2026-08-31.md", 1, 3, 0.9, "Ops: Kafka retention is seven days.")
    assert record_short_term_recalls(Workspace.at(root), query="kafka", results=[hit], now=datetime.now(UTC)) == 1
    assert db.is_symlink() and entries_in(elsewhere / "openclaw.sqlite", str(root), "short-term-recall")


@pytest.mark.parametrize("planted", ["database", "wal"])
def test_a_database_or_sidecar_linked_elsewhere_fails_the_night_before_any_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, planted: str
) -> None:
    root, db = _openclaw_workspace(tmp_path, monkeypatch)
    target = tmp_path / "victim"
    target.mkdir()
    if planted == "database":
        db.unlink()
        db.symlink_to(target, target_is_directory=True)  # a folder (or a device): never a database
    else:
        (db.parent / "openclaw.sqlite-wal").unlink(missing_ok=True)
        (db.parent / "openclaw.sqlite-wal").symlink_to(target / "wal")
    before = snapshot(tmp_path)
    result = CliRunner().invoke(app, ["run", "--workspace", str(root), "--now", NIGHT])
    assert result.exit_code == 1, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "refusing to write" in errors[0] and "openclaw.sqlite" in errors[0]
    assert snapshot(tmp_path) == before
