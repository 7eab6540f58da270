"""Which recall store a workspace uses: OpenClaw's database when the workspace is OpenClaw's, else the JSON file."""

from __future__ import annotations

from pathlib import Path

import pytest

from dreaming.errors import RecallStoreError
from dreaming.memory import Workspace
from dreaming.memory.recall import _openclaw_db as oc
from dreaming.memory.recall import describe_recall_store, read_store
from dreaming.memory.recall._openclaw_paths import workspace_key
from dreaming.memory.recall._store import short_term_lock
from dreaming.memory.recall._store_location import openclaw_store_of
from tests.conftest import NOW
from tests.memory.recall.openclaw_state import create_openclaw_db, install_openclaw, put_entry


def test_a_standalone_workspace_uses_json(workspace: Workspace) -> None:
    assert openclaw_store_of(workspace) is None
    info = describe_recall_store(workspace, now=NOW)
    assert info.kind == "json" and "no OpenClaw database" in info.reason


def test_a_database_without_this_workspace_leaves_it_on_json(
    workspace: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = install_openclaw(tmp_path, monkeypatch)
    put_entry(made.db, "/some/other/ws", oc.RECALL_NAMESPACE, "k", {})
    assert openclaw_store_of(workspace) is None
    assert describe_recall_store(workspace, now=NOW).reason.endswith("holds no rows of this workspace")


def test_the_configured_state_dir_is_used_and_must_hold_a_database(
    workspace: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENCLAW_HOME", str(tmp_path))  # "~" is OpenClaw's home
    create_openclaw_db(tmp_path / "claw")
    workspace.config_file.write_text('[recall]\nopenclaw_state_dir = "~/claw"\n')
    chosen = openclaw_store_of(workspace)
    assert chosen is not None and chosen.reason == "configured"
    assert chosen.db == tmp_path / "claw" / "state" / "openclaw.sqlite"
    assert chosen.workspace_key == workspace_key(str(workspace.root)) and chosen.workspace_dir == str(workspace.root)

    workspace.config_file.write_text('[recall]\nopenclaw_state_dir = "../nowhere"\n')  # relative to the workspace
    with pytest.raises(RecallStoreError, match=r"nowhere/state/openclaw\.sqlite cannot be used: it does not exist"):
        openclaw_store_of(workspace)
    assert read_store(workspace, now=NOW).problem is not None
    with pytest.raises(RecallStoreError), short_term_lock(workspace):
        pass
    assert not workspace.recall_store.exists()


def test_rows_of_this_workspace_select_the_database(
    workspace: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENCLAW_STATE_DIR")  # found as OpenClaw finds it: <home>/.openclaw
    monkeypatch.setenv("OPENCLAW_HOME", str(tmp_path / "home"))
    db = create_openclaw_db(tmp_path / "home" / ".openclaw")
    put_entry(db, str(workspace.root), oc.META_NAMESPACE, "recall", {"updatedAt": "2026-04-14T00:00:00.000Z"})
    chosen = openclaw_store_of(workspace)
    assert chosen is not None and chosen.reason == "rows" and chosen.db == db


def test_rows_written_through_a_linked_path_are_found_under_openclaws_key(
    workspace: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = install_openclaw(tmp_path, monkeypatch)
    link = tmp_path / "linked-ws"
    link.symlink_to(workspace.root, target_is_directory=True)
    put_entry(made.db, str(link), oc.META_NAMESPACE, "recall", {"updatedAt": "2026-04-14T00:00:00.000Z"})
    put_entry(made.db, str(link), oc.RECALL_NAMESPACE, "k", {"key": "k"})
    chosen = openclaw_store_of(workspace)
    assert chosen is not None and chosen.workspace_dir == str(link)
    assert chosen.workspace_key == workspace_key(str(link)) != workspace_key(str(workspace.root))
    assert list(read_store(workspace, now=NOW).entries) == ["k"]


def test_openclaws_default_workspace_uses_the_database_unless_a_json_store_awaits_import(
    workspace: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = install_openclaw(tmp_path, monkeypatch)
    monkeypatch.setenv("OPENCLAW_WORKSPACE_DIR", str(workspace.root))
    chosen = openclaw_store_of(workspace)
    assert chosen is not None and chosen.reason == "default-workspace" and chosen.db == made.db

    workspace.state_dir.mkdir(parents=True)
    workspace.recall_store.write_text('{"version": 1, "entries": {}}\n')
    assert openclaw_store_of(workspace) is None  # OpenClaw's doctor imports it once; until then it stays the store
    info = describe_recall_store(workspace, now=NOW)
    assert info.kind == "json" and "waits for OpenClaw's doctor to import it" in info.warnings[0]


def test_the_default_workspace_under_the_state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made = install_openclaw(tmp_path, monkeypatch)
    ws = Workspace.at(made.state_dir / "workspace")
    ws.memory_dir.mkdir(parents=True)
    chosen = openclaw_store_of(ws)
    assert chosen is not None and chosen.reason == "default-workspace"


def test_describe_names_the_database_key_rows_and_both_stores_warning(
    workspace: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = install_openclaw(tmp_path, monkeypatch)
    root = str(workspace.root)
    put_entry(made.db, root, oc.RECALL_NAMESPACE, "a", {})
    put_entry(made.db, root, oc.RECALL_NAMESPACE, "b", {})
    put_entry(made.db, root, oc.META_NAMESPACE, "recall", {"updatedAt": "x"})
    workspace.state_dir.mkdir(parents=True)
    workspace.recall_store.write_text('{"version": 1, "entries": {}}\n')
    info = describe_recall_store(workspace, now=NOW)
    assert (info.kind, info.db, info.workspace_key, info.user_version) == (
        "sqlite",
        str(made.db),
        workspace_key(root),
        18,
    )
    assert info.rows == {oc.RECALL_NAMESPACE: 2, oc.PHASE_NAMESPACE: 0, oc.META_NAMESPACE: 1, oc.LOCK_NAMESPACE: 0}
    assert len(info.warnings) == 1 and "OpenClaw 2026.9 reads only SQLite" in info.warnings[0]
    assert "dreaming uses the SQLite store" in info.warnings[0]
