"""The recall store in OpenClaw 2026.9's SQLite database: rows read and written as OpenClaw does, and nothing else."""

from __future__ import annotations

import json
import logging
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from dreaming.errors import RecallStoreError
from dreaming.memory import Workspace
from dreaming.memory.recall import (
    RecallResult,
    read_store,
    record_phase_signals,
    record_rem_considered,
    record_short_term_recalls,
    write_store,
)
from dreaming.memory.recall import _openclaw_db as oc
from dreaming.memory.recall._openclaw_paths import entry_key, workspace_key
from dreaming.memory.recall._phase_signals import read_phase_signals
from dreaming.memory.recall._store import RecallStore, short_term_lock
from tests.conftest import NOW
from tests.memory.recall.helpers import at, note
from tests.memory.recall.openclaw_state import (
    OpenClawInstall,
    all_rows,
    create_openclaw_db,
    entries_in,
    file_digest,
    install_openclaw,
    put_entry,
    put_row,
    wrapper,
)

RECALL, PHASE, META = oc.RECALL_NAMESPACE, oc.PHASE_NAMESPACE, oc.META_NAMESPACE


@pytest.fixture
def install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workspace: Workspace) -> OpenClawInstall:
    """OpenClaw's state dir, named by the workspace's dreaming.toml."""
    made = install_openclaw(tmp_path, monkeypatch)
    workspace.config_file.write_text(f'[recall]\nopenclaw_state_dir = "{made.state_dir}"\n')
    return made


def entry(key: str, **fields: object) -> dict[str, object]:
    return {"key": key, "path": "memory/2026-04-14.md", "startLine": 1, "endLine": 1, "source": "memory", **fields}


def test_a_round_trip_keeps_openclaws_row_order_and_unknown_fields(
    workspace: Workspace, install: OpenClawInstall
) -> None:
    root = str(workspace.root)
    # OpenClaw's order is created_at, then entry_key: b (older) before a, whatever the hashes.
    put_entry(install.db, root, RECALL, "b", entry("b", futureField={"x": [1, 2]}), created_at=5)
    put_entry(install.db, root, RECALL, "a", entry("a", totalScore=1.5), created_at=9)
    store = read_store(workspace, now=NOW)
    assert list(store.entries) == ["b", "a"] and store.problem is None
    assert store.entries["b"]["futureField"] == {"x": [1, 2]}

    before = all_rows(install.db)
    assert write_store(workspace, store, now=NOW) is True  # first write: the meta row is new
    assert [r for r in all_rows(install.db) if r[1] == RECALL] == [r for r in before if r[1] == RECALL]
    assert write_store(workspace, read_store(workspace, now=NOW), now=NOW) is False  # nothing to change

    store.entries["a"]["totalScore"] = 2.0  # an integral float is written as JS writes it
    assert write_store(workspace, store, now=NOW) is True
    rows = {r[2]: r for r in all_rows(install.db) if r[1] == RECALL}
    key = workspace_key(root)
    row_a = rows[entry_key(key, "a")]
    assert row_a[3] == wrapper(root, "a", entry("a", totalScore=2))  # compact JSON, "totalScore":2 (not 2.0)
    assert json.loads(row_a[3])["value"]["totalScore"] == 2
    assert {r[4] for r in rows.values()} == {int(NOW.timestamp() * 1000)}  # every entry upserted, as OpenClaw does
    # Every row now has the same created_at: the order is entry_key's, which is what OpenClaw will read too.
    assert list(read_store(workspace, now=NOW).entries) == [k for k, _ in entries_in(install.db, root, RECALL)]


def test_the_meta_row_holds_updated_at(workspace: Workspace, install: OpenClawInstall) -> None:
    write_store(workspace, RecallStore(entries={"k": entry("k")}), now=NOW)
    assert entries_in(install.db, str(workspace.root), META) == [("recall", {"updatedAt": "2026-04-15T03:00:00.000Z"})]
    assert read_store(workspace, now=NOW).updated_at == "2026-04-15T03:00:00.000Z"


def test_dropped_entries_are_deleted(workspace: Workspace, install: OpenClawInstall) -> None:
    write_store(workspace, RecallStore(entries={"a": entry("a"), "b": entry("b")}), now=NOW)
    write_store(workspace, RecallStore(entries={"a": entry("a")}), now=at("2026-04-15T04:00:00"))
    assert [k for k, _ in entries_in(install.db, str(workspace.root), RECALL)] == ["a"]


def test_other_workspaces_namespaces_forged_and_corrupt_rows_are_ignored_and_untouched(
    workspace: Workspace, install: OpenClawInstall
) -> None:
    root, other = str(workspace.root), "/elsewhere/ws"
    key = workspace_key(root)
    put_entry(install.db, other, RECALL, "theirs", entry("theirs"))
    put_entry(install.db, root, "dreaming-daily-ingestion", "mine-but-another-namespace", {"x": 1})
    put_row(install.db, RECALL, f"{key}:{'0' * 64}", wrapper(root, "forged", entry("forged"), key="f" * 64))
    put_row(install.db, RECALL, f"{key}:{'1' * 64}", "{not json")
    put_row(install.db, RECALL, entry_key(key, "other-plugin"), wrapper(root, "x", {}), plugin="other-plugin")
    put_entry(install.db, root, RECALL, "mine", entry("mine"))
    foreign = [r for r in all_rows(install.db) if "mine" not in r[3]]

    store = read_store(workspace, now=NOW)
    assert list(store.entries) == ["mine"]
    assert store.problem is not None and "2 row(s) ignored" in store.problem

    store.entries = {"new": entry("new")}
    assert write_store(workspace, store, now=NOW)
    after = all_rows(install.db)
    assert [r for r in after if r in foreign] == foreign  # byte for byte, created_at included
    assert [k for k, _ in entries_in(install.db, root, RECALL)] == ["new"]


def test_an_entry_over_one_mib_is_refused_and_its_old_row_kept(
    workspace: Workspace, install: OpenClawInstall, caplog: pytest.LogCaptureFixture
) -> None:
    put_entry(install.db, str(workspace.root), RECALL, "big", entry("big", snippet="small"))
    huge = RecallStore(entries={"big": entry("big", snippet="x" * oc.MAX_VALUE_BYTES), "ok": entry("ok")})
    with caplog.at_level(logging.WARNING):
        write_store(workspace, huge, now=NOW)
    assert "exceeds OpenClaw's 1 MiB limit" in caplog.text
    kept = dict(entries_in(install.db, str(workspace.root), RECALL))
    assert kept["big"]["snippet"] == "small" and "ok" in kept


@pytest.mark.parametrize("version", [17, 19])
def test_another_schema_version_is_refused_and_never_written(
    workspace: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, version: int
) -> None:
    made = install_openclaw(tmp_path, monkeypatch, user_version=version)
    workspace.config_file.write_text(f'[recall]\nopenclaw_state_dir = "{made.state_dir}"\n')
    digest = file_digest(made.db)
    store = read_store(workspace, now=NOW, move_unreadable=True)
    assert store.entries == {} and store.problem is not None and f"user_version {version}" in store.problem
    with pytest.raises(RecallStoreError, match=f"user_version {version}; this dreaming reads only 18"):
        write_store(workspace, store, now=NOW)
    with pytest.raises(RecallStoreError), short_term_lock(workspace):
        pass
    note(workspace, "memory/2026-04-14.md", ["Kafka retention is seven days."])
    with pytest.raises(RecallStoreError):
        record_short_term_recalls(workspace, query="kafka", now=NOW,
                                  results=[RecallResult("memory/2026-04-14.md", 1, 1, 0.9, "Kafka retention")])  # fmt: skip
    assert read_phase_signals(workspace) == {}
    assert file_digest(made.db) == digest and sorted(p.name for p in made.db.parent.iterdir()) == ["openclaw.sqlite"]


def test_a_corrupt_database_is_reported_never_moved_or_rewritten(
    workspace: Workspace, install: OpenClawInstall
) -> None:
    install.db.write_bytes(b"this is not SQLite at all" * 100)
    store = read_store(workspace, now=NOW, move_unreadable=True)
    assert store.problem is not None and "not an SQLite database" in store.problem
    with pytest.raises(RecallStoreError, match="not an SQLite database"):
        write_store(workspace, RecallStore(entries={"k": entry("k")}), now=NOW)
    assert install.db.read_bytes() == b"this is not SQLite at all" * 100
    assert sorted(p.name for p in install.db.parent.iterdir()) == ["openclaw.sqlite"]
    assert not workspace.recall_store.exists()


def test_a_read_only_database_is_read_but_never_written(
    workspace: Workspace, install: OpenClawInstall, monkeypatch: pytest.MonkeyPatch
) -> None:
    put_entry(install.db, str(workspace.root), RECALL, "k", entry("k"))
    digest = file_digest(install.db)
    # Opened read-only, SQLite answers every write as it does for a write-protected file (root ignores chmod).
    monkeypatch.setattr(oc, "_OPEN_MODE", "ro")
    assert list(read_store(workspace, now=NOW).entries) == ["k"]
    with pytest.raises(RecallStoreError, match="read-only"):
        write_store(workspace, RecallStore(entries={}), now=NOW)
    with pytest.raises(RecallStoreError, match="read-only"), short_term_lock(workspace):
        pass
    assert file_digest(install.db) == digest


def test_a_database_locked_past_the_busy_timeout_is_reported(
    workspace: Workspace, install: OpenClawInstall, monkeypatch: pytest.MonkeyPatch
) -> None:
    put_entry(install.db, str(workspace.root), RECALL, "k", entry("k"))
    monkeypatch.setattr(oc, "BUSY_TIMEOUT_MS", 20)
    with closing(sqlite3.connect(install.db, isolation_level=None)) as other:
        other.execute("BEGIN IMMEDIATE")  # another writer holds the write lock
        assert list(read_store(workspace, now=NOW).entries) == ["k"]  # WAL: readers are not blocked
        with pytest.raises(RecallStoreError, match="locked by another writer"):
            write_store(workspace, RecallStore(entries={}), now=NOW)
        other.execute("ROLLBACK")
    assert [k for k, _ in entries_in(install.db, str(workspace.root), RECALL)] == ["k"]


def test_phase_signals_live_in_their_namespace_and_zero_hit_entries_are_dropped(
    workspace: Workspace, install: OpenClawInstall
) -> None:
    root = str(workspace.root)
    for key in ("a", "never-lit"):  # phase signals are kept only for keys the recall store holds
        put_entry(install.db, root, RECALL, key, entry(key, snippet=f"Fact {key}.", recallCount=1))
    put_entry(install.db, root, PHASE, "zero", {"key": "zero", "lightHits": 0, "remHits": 0})
    put_entry(install.db, root, PHASE, "gone", {"key": "gone", "lightHits": 2, "remHits": 0})
    record_phase_signals(workspace, phase="light", keys=["a", "not-stored"], now=NOW)
    record_rem_considered(workspace, keys=["a", "never-lit"], now=at("2026-04-15T04:00:00"))
    assert read_phase_signals(workspace) == {
        "a": {"key": "a", "lightHits": 1, "remHits": 0, "lastLightAt": "2026-04-15T03:00:00.000Z",
              "lastRemConsideredAt": "2026-04-15T04:00:00.000Z"},
    }  # fmt: skip
    # The zero-hit rows (never-lit's considered stamp too) and the signal of a key the store lacks are gone.
    assert [k for k, _ in entries_in(install.db, root, PHASE)] == ["a"]
    assert ("phase", {"updatedAt": "2026-04-15T04:00:00.000Z"}) in entries_in(install.db, root, META)
    assert not workspace.phase_signals.exists()


def test_recording_a_search_writes_rows_not_json(workspace: Workspace, install: OpenClawInstall) -> None:
    note(workspace, "memory/2026-04-14.md", ["Kafka retention is seven days."])
    hit = RecallResult("memory/2026-04-14.md", 1, 1, 0.9, "Kafka retention is seven days.")
    assert record_short_term_recalls(workspace, query="kafka retention", results=[hit], now=NOW) == 1
    ((key, value),) = entries_in(install.db, str(workspace.root), RECALL)
    assert key == "memory:memory/2026-04-14.md:1:1" and value["recallCount"] == 1
    assert not workspace.recall_store.exists() and not (workspace.state_dir / "short-term-promotion.lock").exists()
    assert [r for r in all_rows(install.db) if r[1] == oc.LOCK_NAMESPACE] == []  # the lock row was released


def test_the_schema_helper_builds_what_openclaw_builds(tmp_path: Path) -> None:
    db = create_openclaw_db(tmp_path / "s")
    with closing(sqlite3.connect(db)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (18,)
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'plugin_state_entries'").fetchone()[0]
    assert "STRICT" in sql and "PRIMARY KEY (plugin_id, namespace, entry_key)" in sql
