from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from dreaming.memory import Workspace
from dreaming.memory.search import (
    chunk_markdown,
    is_dreaming_output,
    iter_memory_files,
    open_index,
    refresh_index,
    search_memory,
)


def write(ws: Workspace, relative: str, text: str) -> Path:
    path = ws.root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def bump(path: Path, text: str) -> None:
    """Rewrite a file and move its mtime forward, so a same-size change is still seen."""
    stat = path.stat()
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))


def test_chunks_follow_paragraphs_and_headings_with_exact_lines() -> None:
    text = "# Title\n\nIntro line one\nIntro line two\n\n## Deploy\nUse blue green.\n\n- item a\n- item b\n"
    chunks = chunk_markdown(text)
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 4), (6, 7), (9, 10)]
    assert chunks[0].text == "# Title\n\nIntro line one\nIntro line two"
    assert chunks[1].text == "## Deploy\nUse blue green."


def test_long_paragraph_is_cut_and_fences_keep_blank_lines() -> None:
    long = "\n".join(f"line {n}" for n in range(1, 31))
    assert [(c.start_line, c.end_line) for c in chunk_markdown(long)] == [(1, 12), (13, 24), (25, 30)]
    fenced = "```\ncode a\n\ncode b\n```\n\nafter\n"
    assert [(c.start_line, c.end_line) for c in chunk_markdown(fenced)] == [(1, 5), (7, 7)]


def test_managed_dreaming_blocks_inside_notes_are_skipped() -> None:
    text = (
        "user note about kafka\n\n<!-- openclaw:dreaming:light:start -->\n## Light Sleep\n- Candidate: staged zebra\n"
        "<!-- openclaw:dreaming:light:end -->\n\nmore user text\n"
    )
    chunks = chunk_markdown(text)
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 1), (8, 8)]
    assert all("zebra" not in c.text for c in chunks)


@pytest.mark.parametrize(
    ("relative", "excluded"),
    [
        ("DREAMS.md", True),
        ("memory/dreams.md", True),
        ("memory/dreaming/light/2026-04-14.md", True),
        ("memory/.dreams/session-corpus/x.md", True),
        ("memory/.hidden/x.md", True),
        ("memory/2026-04-14.md", False),
        ("memory/team/2026-04-14-standup.md", False),
        ("MEMORY.md", False),
        ("memory/insights/research-kafka.md", False),
    ],
)
def test_dreaming_output_paths(relative: str, excluded: bool) -> None:
    assert is_dreaming_output(relative) is excluded


def test_memory_files_are_notes_memory_and_active_insights(workspace: Workspace) -> None:
    for relative in (
        "MEMORY.md",
        "DREAMS.md",
        "memory/2026-04-14.md",
        "memory/sub/2026-04-13-call.md",
        "memory/insights/a.md",
        "memory/insights/archive/old.md",
        "memory/dreaming/rem/2026-04-14.md",
        "memory/.dreams/x.md",
        "memory/notes.txt",
    ):
        write(workspace, relative, "text\n")
    assert [rel for rel, _ in iter_memory_files(workspace)] == [
        "MEMORY.md",
        "memory/2026-04-14.md",
        "memory/insights/a.md",
        "memory/sub/2026-04-13-call.md",
    ]


def test_refresh_rereads_only_changed_files_and_drops_deleted(workspace: Workspace) -> None:
    a = write(workspace, "memory/2026-04-01.md", "alpha kafka retention\n")
    b = write(workspace, "memory/2026-04-02.md", "beta postgres vacuum\n")
    write(workspace, "MEMORY.md", "gamma long term\n")
    conn = open_index(workspace)
    try:
        first = refresh_index(workspace, conn)
        assert first.reread == ("MEMORY.md", "memory/2026-04-01.md", "memory/2026-04-02.md")
        assert refresh_index(workspace, conn).reread == ()

        bump(a, "alpha kafka partitions\n")
        second = refresh_index(workspace, conn)
        assert second.reread == ("memory/2026-04-01.md",)
        assert second.scanned == 3

        b.unlink()
        third = refresh_index(workspace, conn)
        assert third.reread == ()
        assert third.removed == ("memory/2026-04-02.md",)
        assert third.chunks == 2
    finally:
        conn.close()
    assert [h.path for h in search_memory(workspace, "partitions")] == ["memory/2026-04-01.md"]
    assert search_memory(workspace, "retention") == []
    assert search_memory(workspace, "postgres") == []


def test_search_returns_line_ranges_and_snippets(workspace: Workspace) -> None:
    write(
        workspace,
        "memory/2026-04-10.md",
        "# Standup\n\nNothing special.\n\n## Incident\nThe kafka broker ran out of disk.\nWe raised retention.\n",
    )
    hits = search_memory(workspace, "kafka disk")
    assert len(hits) == 1
    hit = hits[0]
    assert (hit.path, hit.start_line, hit.end_line, hit.source) == ("memory/2026-04-10.md", 5, 7, "memory")
    lines = (workspace.root / hit.path).read_text().splitlines()
    assert "\n".join(lines[hit.start_line - 1 : hit.end_line]) == hit.snippet
    assert hit.score == 1.0


def test_scores_reward_coverage_and_stay_in_unit_interval(workspace: Workspace) -> None:
    write(workspace, "memory/2026-04-01.md", "kafka retention policy for the orders topic\n")
    write(workspace, "memory/2026-04-02.md", "kafka consumers lag\n")
    write(workspace, "memory/2026-04-03.md", "unrelated cooking notes\n")
    hits = search_memory(workspace, "kafka retention orders")
    assert [h.path for h in hits] == ["memory/2026-04-01.md", "memory/2026-04-02.md"]
    assert hits[0].score == 1.0
    assert 0.0 < hits[1].score <= 1 / 3
    assert search_memory(workspace, "kafka retention orders") == hits


def test_prefix_and_diacritics_match(workspace: Workspace) -> None:
    write(workspace, "memory/2026-04-01.md", "Deployments go through the café pipeline\n")
    assert len(search_memory(workspace, "deploy")) == 1
    assert len(search_memory(workspace, "CAFE")) == 1


@pytest.mark.parametrize(
    ("query", "found"),
    [
        ('"', 0),
        ('kafka"', 1),
        ("kafka OR", 1),
        ("NEAR(kafka retention)", 1),
        ("kafka AND NOT x", 1),
        ("text:kafka", 1),
        ("*", 0),
        ("^kafka", 1),
        ("(", 0),
        ("zebra OR NOT", 0),
        ("a'b", 0),
        ("-", 0),
    ],
)
def test_fts_syntax_in_queries_is_just_text(workspace: Workspace, query: str, found: int) -> None:
    write(workspace, "memory/2026-04-01.md", "kafka retention\n")
    hits = search_memory(workspace, query)
    assert [h.path for h in hits] == ["memory/2026-04-01.md"] * found


@pytest.mark.parametrize("query", ["", "   ", "!!!", "«»"])
def test_empty_queries_find_nothing(workspace: Workspace, query: str) -> None:
    write(workspace, "memory/2026-04-01.md", "kafka retention\n")
    assert search_memory(workspace, query) == []


def test_search_never_returns_dreaming_output(workspace: Workspace) -> None:
    secret = "quokka nebula"
    write(workspace, "DREAMS.md", f"# Dream Diary\n\n- {secret} reflection\n")
    write(workspace, "memory/dreaming/light/2026-04-14.md", f"- Candidate: {secret}\n")
    write(workspace, "memory/dreaming/rem/2026-04-14.md", f"## REM\n{secret}\n")
    write(workspace, "memory/.dreams/session-corpus/2026-04-14.md", f"{secret}\n")
    write(
        workspace,
        "memory/2026-04-14.md",
        "user line\n\n<!-- openclaw:dreaming:light:start -->\n"
        f"- Staged: {secret}\n<!-- openclaw:dreaming:light:end -->\n",
    )
    assert search_memory(workspace, secret) == []
    assert search_memory(workspace, "quokka") == []
    write(workspace, "memory/2026-04-15.md", "a real quokka sighting\n")
    assert [h.path for h in search_memory(workspace, secret)] == ["memory/2026-04-15.md"]


def test_a_corrupt_index_is_rebuilt(workspace: Workspace) -> None:
    write(workspace, "memory/2026-04-01.md", "kafka retention\n")
    workspace.search_index.parent.mkdir(parents=True)
    workspace.search_index.write_bytes(b"this is not sqlite at all" * 100)
    assert len(search_memory(workspace, "kafka")) == 1


def test_an_index_of_another_schema_version_is_rebuilt(workspace: Workspace) -> None:
    write(workspace, "memory/2026-04-01.md", "kafka retention\n")
    workspace.search_index.parent.mkdir(parents=True)
    with sqlite3.connect(workspace.search_index) as conn:
        conn.execute("CREATE TABLE other (x)")
        conn.execute("PRAGMA user_version = 99")
    conn.close()
    assert len(search_memory(workspace, "kafka")) == 1


def test_limit_is_respected(workspace: Workspace) -> None:
    for day in range(1, 21):
        write(workspace, f"memory/2026-04-{day:02d}.md", f"kafka note {day}\n")
    assert len(search_memory(workspace, "kafka", limit=5)) == 5
    assert search_memory(workspace, "kafka", limit=0) == []


def test_memory_index_rechecks_files_only_after_the_staleness_bound(tmp_path: Path) -> None:
    from dreaming.memory import Workspace
    from dreaming.memory.search import MemoryIndex

    ws = Workspace.at(tmp_path)
    (tmp_path / "memory").mkdir()
    note = tmp_path / "memory" / "2026-04-01.md"
    note.write_text("The gateway binds loopback.\n")
    clock = [0.0]
    with MemoryIndex(ws, max_staleness_s=2.0, clock=lambda: clock[0]) as index:
        assert index.search("gateway loopback")[0].path == "memory/2026-04-01.md"
        (tmp_path / "memory" / "2026-04-02.md").write_text("Glacier holds the backups.\n")
        clock[0] = 1.0
        assert index.search("glacier backups") == []  # within the bound: files not re-checked
        clock[0] = 3.5
        assert index.search("glacier backups")[0].path == "memory/2026-04-02.md"
