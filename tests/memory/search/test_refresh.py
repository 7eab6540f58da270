"""The index's refresh: an unchanged folder is not listed again, yet every change is found by the next search.

Each change is made and searched for at once, with no sleep and no moved mtime: a change in the same clock tick as the
last look must be found too. ``later`` is the clock a few seconds on, when every stamp has settled: the path where
unchanged folders are not listed.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dreaming.memory import Workspace
from dreaming.memory.search import (
    MemoryIndex,
    _changes,
    _chunks,
    _index,
    _search,
    open_index,
    refresh_index,
    search_index,
    search_memory,
)
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


# -- Between full looks: what a one-off search (or a MemoryIndex re-check) stats. -------------------------------------
#
# The clock is pretended (``now_ns``): ``t0`` is a few seconds ahead, so that every stamp has settled, and the window
# is crossed by moving it, never by sleeping. ``next_tick`` only waits out the kernel's clock grain (milliseconds)
# where a folder must get a new ctime; an edit in place changes the note's size, so its stamp differs at once.

SECOND = 1_000_000_000
WINDOW = int(_index.FULL_LOOK_INTERVAL_S * SECOND)


@pytest.fixture
def one_watched(monkeypatch: pytest.MonkeyPatch) -> None:
    """Watch only the most recently changed note between full looks (the default would watch every note here)."""
    monkeypatch.setattr(_changes, "HOT_NOTES", 1)


def quick(ws: Workspace, conn: sqlite3.Connection, now_ns: int) -> _index.IndexRefresh:
    """Refresh as a one-off search does: a full look only when the last one is older than the interval."""
    return refresh_index(ws, conn, now_ns=now_ns, full_look_every_s=_index.FULL_LOOK_INTERVAL_S)


def edit_in_place(path: Path, text: str) -> None:
    """Rewrite a note where it is (same inode, folder untouched), its mtime put back, as `cp -p` or `rsync -t` leave it."""
    before = path.stat()
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_ino == before.st_ino and path.stat().st_size != before.st_size


def test_an_edit_in_place_of_a_note_not_watched_is_found_by_the_first_full_look_after_the_window(
    workspace: Workspace, one_watched: None
) -> None:
    old = write(workspace, "memory/2026-04-01.md", "kafka retention\n")
    write(workspace, "memory/2026-04-02.md", "postgres vacuum\n")  # changed last: the one watched
    conn = open_index(workspace)
    try:
        t0 = later()
        assert quick(workspace, conn, t0).full_look  # no full look recorded yet
        edit_in_place(old, "kafka partitions\n")
        within = quick(workspace, conn, t0 + 10 * SECOND)
        assert (within.full_look, within.reread) == (False, ())  # the documented bound: not seen yet
        assert quick(workspace, conn, t0 + WINDOW).reread == ()  # the window's last instant
        after = quick(workspace, conn, t0 + WINDOW + 1)
        assert (after.full_look, after.reread) == (True, ("memory/2026-04-01.md",))
        assert [hit.path for hit in search_index(conn, "partitions")] == ["memory/2026-04-01.md"]
    finally:
        conn.close()


def test_an_edit_in_place_of_the_note_changed_last_is_seen_within_the_window(
    workspace: Workspace, one_watched: None
) -> None:
    write(workspace, "memory/2026-04-01.md", "kafka retention\n")
    today = write(workspace, "memory/2026-04-02.md", "postgres vacuum\n")
    conn = open_index(workspace)
    try:
        t0 = later()
        quick(workspace, conn, t0)
        edit_in_place(today, "postgres vacuum analyze\n")  # appended to today's note
        result = quick(workspace, conn, t0 + 10 * SECOND)
        assert (result.full_look, result.reread) == (False, ("memory/2026-04-02.md",))
    finally:
        conn.close()


def test_notes_added_removed_renamed_or_replaced_and_new_folders_are_seen_within_the_window(
    workspace: Workspace, one_watched: None
) -> None:
    write(workspace, "memory/2026-04-01.md", "kafka retention\n")
    write(workspace, "memory/2026-04-02.md", "postgres vacuum\n")
    write(workspace, "memory/2026-04-03.md", "redis eviction\n")
    conn = open_index(workspace)
    folder = workspace.memory_dir
    try:
        t0 = later()
        quick(workspace, conn, t0)
        steps: list[tuple[str, Callable[[], object]]] = [
            ("added", lambda: write(workspace, "memory/2026-04-04.md", "zookeeper ensemble\n")),
            ("renamed", lambda: (folder / "2026-04-04.md").rename(folder / "2026-04-05.md")),
            ("removed", lambda: (folder / "2026-04-02.md").unlink()),
            ("folder", lambda: write(workspace, "memory/projects/atlas.md", "atlas rollout\n")),
        ]
        results = {}
        for n, (name, change) in enumerate(steps, start=1):
            next_tick(folder)
            change()
            results[name] = quick(workspace, conn, t0 + n * SECOND)
        # An editor that saves by writing a new file and renaming it over the note (vim, most IDEs): a new inode.
        next_tick(folder)
        (folder / ".2026-04-01.md.swp").write_text("kafka compaction\n", encoding="utf-8")
        os.replace(folder / ".2026-04-01.md.swp", folder / "2026-04-01.md")
        results["replaced"] = quick(workspace, conn, t0 + 9 * SECOND)
    finally:
        conn.close()
    assert not any(result.full_look for result in results.values())
    assert [(r.reread, r.removed) for r in results.values()] == [
        (("memory/2026-04-04.md",), ()),
        (("memory/2026-04-05.md",), ("memory/2026-04-04.md",)),
        ((), ("memory/2026-04-02.md",)),
        (("memory/projects/atlas.md",), ()),
        (("memory/2026-04-01.md",), ()),
    ]
    assert paths(workspace, "zookeeper atlas compaction postgres") == [
        "memory/2026-04-01.md",
        "memory/2026-04-05.md",
        "memory/projects/atlas.md",
    ]


def test_the_last_full_look_is_kept_in_the_index_and_a_clock_set_back_takes_a_full_one(workspace: Workspace) -> None:
    write(workspace, "memory/2026-04-01.md", "kafka retention\n")
    first = open_index(workspace)
    other = open_index(workspace)  # as the next `dreaming search` would
    try:
        t0 = later()
        assert quick(workspace, first, t0).full_look
        assert not quick(workspace, other, t0 + 10 * SECOND).full_look
        assert quick(workspace, other, t0 - SECOND).full_look  # a last look "in the future" proves nothing
    finally:
        first.close()
        other.close()


def test_a_full_look_that_finds_nothing_records_its_time_only_when_the_time_recorded_is_half_the_window_old(
    workspace: Workspace,
) -> None:
    write(workspace, "memory/2026-04-01.md", "kafka retention\n")
    conn = open_index(workspace)
    other = open_index(workspace)
    try:
        t0 = later()
        refresh_index(workspace, conn, now_ns=t0)
        version = other.execute("PRAGMA data_version").fetchone()[0]
        refresh_index(workspace, conn, now_ns=t0 + WINDOW // 2)
        assert other.execute("PRAGMA data_version").fetchone()[0] == version  # nothing written
        refresh_index(workspace, conn, now_ns=t0 + WINDOW // 2 + 1)
        assert other.execute("PRAGMA data_version").fetchone()[0] != version  # its time recorded
        assert not quick(workspace, conn, t0 + WINDOW + WINDOW // 2).full_look  # counted from the new time
    finally:
        conn.close()
        other.close()


def test_one_off_searches_and_memory_index_rechecks_take_a_full_look_only_when_it_is_due(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(workspace, "memory/2026-04-01.md", "kafka retention\n")
    looks: list[bool] = []
    real = refresh_index

    def recording(ws: Workspace, conn: sqlite3.Connection, **options: Any) -> _index.IndexRefresh:
        result = real(ws, conn, **options)
        looks.append(result.full_look)
        return result

    monkeypatch.setattr(_search, "refresh_index", recording)
    search_memory(workspace, "kafka")
    search_memory(workspace, "kafka")
    clock = [0.0]
    with MemoryIndex(workspace, clock=lambda: clock[0]) as index:
        index.search("kafka")
        clock[0] = 10.0
        index.search("kafka")
        index.refresh()  # asked for: always full
    assert looks == [True, False, False, False, True]
