"""The index's refresh: an unchanged folder is not listed again, yet every change is found by the next search.

Each change is made and searched for at once, with no sleep and no moved mtime: a change in the same clock tick as the
last look must be found too. ``later`` is the clock a few seconds on, when every stamp has settled: the path where
unchanged folders are not listed.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from dreaming.memory import Workspace
from dreaming.memory.search import _changes, _chunks, _index, open_index, refresh_index, search_memory
from dreaming.memory.search._changes import SETTLE_NS, look


def write(ws: Workspace, relative: str, text: str) -> Path:
    path = ws.root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def paths(ws: Workspace, query: str) -> list[str]:
    return sorted(hit.path for hit in search_memory(ws, query))


def later() -> int:
    return time.time_ns() + 2 * SETTLE_NS


def next_tick(path: Path) -> None:
    """Wait until a change to ``path`` gets a later ctime than its last: what ``later`` pretends has happened."""
    while time.time_ns() < path.stat().st_ctime_ns + 20_000_000:  # past the grain of the kernel's clock
        time.sleep(0.005)


@pytest.fixture
def listings(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The folders a refresh listed (rather than only ``stat``-ing their notes)."""
    listed: list[str] = []
    real = _chunks.list_memory_folder

    def counting(ws: Workspace, folder: str, relative: str) -> _chunks.FolderListing:
        listed.append(relative)
        return real(ws, folder, relative)

    monkeypatch.setattr(_changes, "list_memory_folder", counting)
    return listed


def test_a_note_added_deleted_or_renamed_is_seen_at_once(workspace: Workspace) -> None:
    write(workspace, "memory/2026-04-01.md", "kafka retention\n")
    assert paths(workspace, "kafka") == ["memory/2026-04-01.md"]
    added = write(workspace, "memory/2026-04-02.md", "postgres vacuum\n")
    assert paths(workspace, "postgres") == ["memory/2026-04-02.md"]
    added.rename(workspace.memory_dir / "2026-04-03.md")
    assert paths(workspace, "postgres") == ["memory/2026-04-03.md"]
    (workspace.memory_dir / "2026-04-03.md").unlink()
    assert paths(workspace, "postgres") == []
    assert paths(workspace, "kafka") == ["memory/2026-04-01.md"]


@pytest.mark.parametrize("settled", [False, True])
def test_an_edit_in_place_of_the_same_size_is_seen_even_with_its_mtime_put_back(
    workspace: Workspace, settled: bool
) -> None:
    note = write(workspace, "memory/2026-04-01.md", "kafka retention\n")
    conn = open_index(workspace)
    try:
        now = later() if settled else None
        refresh_index(workspace, conn, now_ns=now)
        before = note.stat()
        next_tick(note)
        note.write_text("kafka partition\n", encoding="utf-8")  # same size, same folder entry
        os.utime(note, ns=(before.st_atime_ns, before.st_mtime_ns))  # as `cp -p` or `rsync -t` would leave it
        assert note.stat().st_size == before.st_size
        assert refresh_index(workspace, conn, now_ns=now).reread == ("memory/2026-04-01.md",)
    finally:
        conn.close()
    assert paths(workspace, "partition") == ["memory/2026-04-01.md"]
    assert paths(workspace, "retention") == []


def test_an_edit_in_a_subfolder_is_seen(workspace: Workspace, listings: list[str]) -> None:
    note = write(workspace, "memory/projects/atlas/2026-04-01.md", "kafka retention\n")
    write(workspace, "memory/2026-04-02.md", "postgres vacuum\n")
    conn = open_index(workspace)
    try:
        refresh_index(workspace, conn, now_ns=later())
        listings.clear()
        next_tick(note)
        note.write_text("kafka partition\n", encoding="utf-8")
        result = refresh_index(workspace, conn, now_ns=later())
        assert result.reread == ("memory/projects/atlas/2026-04-01.md",)
        assert listings == []  # no entry changed in any folder: none was listed, the note's ctime told
    finally:
        conn.close()
    assert paths(workspace, "partition") == ["memory/projects/atlas/2026-04-01.md"]


def test_unchanged_folders_are_not_listed_and_nothing_is_written(workspace: Workspace, listings: list[str]) -> None:
    for relative in ("memory/2026-04-01.md", "memory/insights/a.md", "memory/projects/x.md", "MEMORY.md"):
        write(workspace, relative, "kafka retention\n")
    conn = open_index(workspace)
    other = open_index(workspace)
    try:
        first = refresh_index(workspace, conn, now_ns=later())
        assert first.scanned == 4 and len(first.reread) == 4
        version = other.execute("PRAGMA data_version").fetchone()[0]
        listings.clear()
        again = refresh_index(workspace, conn, now_ns=later())
        assert (again.scanned, again.reread, again.removed, again.chunks) == (4, (), (), first.chunks)
        assert listings == []
        assert other.execute("PRAGMA data_version").fetchone()[0] == version  # no write
    finally:
        conn.close()
        other.close()


def test_a_touched_note_is_read_but_not_indexed_again(workspace: Workspace) -> None:
    note = write(workspace, "memory/2026-04-01.md", "kafka retention\n")
    conn = open_index(workspace)
    try:
        refresh_index(workspace, conn, now_ns=later())
        next_tick(note)
        os.utime(note)  # a new mtime and ctime, the same bytes
        assert refresh_index(workspace, conn, now_ns=later()).reread == ()
    finally:
        conn.close()


def test_a_folder_or_note_changed_in_the_last_seconds_is_checked_again_at_the_next_look(workspace: Workspace) -> None:
    # A change in the same tick as the look would leave the same stamp: a fresh stamp is not trusted.
    write(workspace, "memory/2026-04-01.md", "kafka retention\n")
    fresh = look(workspace, {}, now_ns=time.time_ns())
    assert fresh.folders["memory"].stamp == b""  # listed again next time
    assert fresh.folders["memory"].stamps == _changes.UNSETTLED  # read again next time
    again = look(workspace, fresh.folders, now_ns=time.time_ns())
    assert again.candidates == {"memory/2026-04-01.md": str(workspace.memory_dir / "2026-04-01.md")}
    settled = look(workspace, {}, now_ns=later())
    assert settled.folders["memory"].stamp != b""
    assert look(workspace, settled.folders, now_ns=later()).candidates == {}


def test_a_removed_folder_takes_its_notes_with_it(workspace: Workspace) -> None:
    write(workspace, "memory/projects/x.md", "kafka retention\n")
    write(workspace, "memory/2026-04-01.md", "postgres vacuum\n")
    conn = open_index(workspace)
    try:
        refresh_index(workspace, conn, now_ns=later())
        (workspace.memory_dir / "projects" / "x.md").unlink()
        (workspace.memory_dir / "projects").rmdir()
        assert refresh_index(workspace, conn, now_ns=later()).removed == ("memory/projects/x.md",)
        next_tick(workspace.memory_dir)
        (workspace.memory_dir / "secrets").mkdir()
        write(workspace, "memory/secrets/y.md", "kafka hidden\n")  # a folder whose name says secrets: never memory
        assert refresh_index(workspace, conn, now_ns=later()).reread == ()
    finally:
        conn.close()
    assert paths(workspace, "kafka") == []


def test_a_note_behind_a_link_is_rechecked_through_its_folder(workspace: Workspace, listings: list[str]) -> None:
    target = write(workspace, "notes/shared.md", "kafka retention\n")
    workspace.memory_dir.mkdir(parents=True, exist_ok=True)
    (workspace.memory_dir / "shared.md").symlink_to(target)
    conn = open_index(workspace)
    try:
        refresh_index(workspace, conn, now_ns=later())
        listings.clear()
        next_tick(target)
        target.write_text("kafka partition\n", encoding="utf-8")
        assert refresh_index(workspace, conn, now_ns=later()).reread == ("memory/shared.md",)
        assert listings == ["memory"]  # a folder holding a link is always listed: the link's target may change
    finally:
        conn.close()


def test_a_note_that_cannot_be_read_is_left_out_and_read_again_at_the_next_look(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(workspace, "memory/2026-04-01.md", "kafka retention\n")
    conn = open_index(workspace)
    try:
        with monkeypatch.context() as patch:
            patch.setattr(_index, "_read", lambda path: None)  # as a permission error would leave it
            assert refresh_index(workspace, conn, now_ns=later()).reread == ()
        # Nothing changed on disk since: the note is read because the last look could not read it.
        assert refresh_index(workspace, conn, now_ns=later()).reread == ("memory/2026-04-01.md",)
    finally:
        conn.close()
    assert paths(workspace, "kafka") == ["memory/2026-04-01.md"]


def test_names_with_a_newline_or_spaces_survive_the_stored_listing(workspace: Workspace) -> None:
    write(workspace, "memory/odd\nname.md", "kafka retention\n")
    write(workspace, "memory/a b/c d.md", "postgres vacuum\n")
    conn = open_index(workspace)
    try:
        assert len(refresh_index(workspace, conn, now_ns=later()).reread) == 2
        again = refresh_index(workspace, conn, now_ns=later())
        assert (again.scanned, again.reread, again.removed) == (2, (), ())
    finally:
        conn.close()
    assert paths(workspace, "kafka") == ["memory/odd\nname.md"]
    assert paths(workspace, "postgres") == ["memory/a b/c d.md"]
