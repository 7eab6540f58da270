from __future__ import annotations

import os
import sqlite3
import unicodedata
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
from dreaming.memory.search._index import SCHEMA_VERSION, tokenizer_config
from dreaming.memory.search._search import MORPH_SCORE_FACTOR


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


# -- The morphological table. ----------------------------------------------------------------------------------------

_V2_SCHEMA = """
CREATE TABLE files (path TEXT PRIMARY KEY, mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL);
CREATE TABLE chunks (
    id INTEGER PRIMARY KEY, path TEXT NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL,
    text TEXT NOT NULL
);
CREATE INDEX chunks_path ON chunks (path);
CREATE VIRTUAL TABLE chunks_fts USING fts5 (
    text, content='chunks', content_rowid='id', tokenize='unicode61 remove_diacritics 2'
);
"""


def test_plurals_cjk_and_folded_letters_are_found(workspace: Workspace) -> None:
    write(workspace, "memory/2026-04-01.md", "The rate limit is 100 requests per minute\n")
    write(workspace, "memory/2026-04-02.md", "数据库迁移已经完成，明天检查备份任务。\n")
    write(workspace, "memory/2026-04-03.md", "本番サーバーの証明書を更新した。期限は来年三月。\n")
    write(workspace, "memory/2026-04-04.md", "Lunch near the Straße office with the Łódź team\n")
    for query, path in [
        ("limits", "memory/2026-04-01.md"),
        ("备份任务", "memory/2026-04-02.md"),
        ("备份", "memory/2026-04-02.md"),
        ("証明書の更新", "memory/2026-04-03.md"),
        ("サーバー", "memory/2026-04-03.md"),
        ("strasse lodz", "memory/2026-04-04.md"),
    ]:
        assert [hit.path for hit in search_memory(workspace, query)] == [path], query


def test_exact_hits_keep_their_scores_and_rank_above_morphological_ones(workspace: Workspace) -> None:
    write(workspace, "memory/2026-04-01.md", "The gateway rate limits are per tenant\n")
    write(workspace, "memory/2026-04-02.md", "One rate limit for the whole gateway\n")
    write(workspace, "memory/2026-04-03.md", "Limits of the ingress\n")
    write(workspace, "memory/2026-04-04.md", "Limit the ingress to one region\n")
    # Both words as written; "gateway" as written and "limit" by its stem, lifted to a morph score; "limit" alone.
    full, lifted, exact_half, morph_half = search_memory(workspace, "gateway limits")
    assert [full.path, lifted.path, exact_half.path, morph_half.path] == [
        "memory/2026-04-01.md",
        "memory/2026-04-02.md",
        "memory/2026-04-03.md",
        "memory/2026-04-04.md",
    ]
    assert full.score == 1.0
    assert 0.5 < lifted.score <= MORPH_SCORE_FACTOR  # the exact search alone scores it at most 0.5: half the words
    assert 0.0 < morph_half.score <= MORPH_SCORE_FACTOR / 2
    # Every chunk holding the words as written ranks above every chunk that needs morphology.
    hits = search_memory(workspace, "limits")
    assert [hit.path for hit in hits[:2]] == ["memory/2026-04-03.md", "memory/2026-04-01.md"]
    assert min(hit.score for hit in hits[:2]) > MORPH_SCORE_FACTOR >= max(hit.score for hit in hits[2:])
    assert {hit.path for hit in hits[2:]} == {"memory/2026-04-02.md", "memory/2026-04-04.md"}


def test_morphological_hits_fill_only_what_exact_hits_leave(workspace: Workspace) -> None:
    for day in range(1, 9):
        write(workspace, f"memory/2026-04-{day:02d}.md", f"rate limits, note {day}\n")
    write(workspace, "memory/2026-04-20.md", "one rate limit\n")
    assert "memory/2026-04-20.md" not in {hit.path for hit in search_memory(workspace, "limits", limit=8)}
    nine = search_memory(workspace, "limits", limit=9)
    assert nine[-1].path == "memory/2026-04-20.md" and nine[-1].score == MORPH_SCORE_FACTOR
    assert nine[:8] == search_memory(workspace, "limits", limit=8)


def test_a_query_that_matches_nothing_either_way_finds_nothing(workspace: Workspace) -> None:
    write(workspace, "memory/2026-04-01.md", "The rate limit is 100 requests per minute\n")
    assert search_memory(workspace, "kubernetes ingress controller") == []


def test_a_changed_note_leaves_no_morphological_tokens_behind(workspace: Workspace) -> None:
    note = write(workspace, "memory/2026-04-01.md", "rate limits\n\n备份任务\n")
    assert len(search_memory(workspace, "limit 备份")) == 2
    bump(note, "nothing left here\n")
    assert search_memory(workspace, "limit 备份") == []
    note.unlink()
    assert search_memory(workspace, "nothing") == []
    conn = open_index(workspace)
    try:
        assert conn.execute(
            "SELECT count(*) FROM chunks_morph WHERE chunks_morph MATCH 'limit OR 备份'"
        ).fetchone() == (0,)
    finally:
        conn.close()


def test_an_index_of_the_previous_schema_is_rebuilt_from_the_notes(workspace: Workspace) -> None:
    note = write(workspace, "memory/2026-04-01.md", "明天检查备份任务。rate limits\n")
    workspace.search_index.parent.mkdir(parents=True)
    stat = note.stat()
    with sqlite3.connect(workspace.search_index) as conn:
        conn.executescript(_V2_SCHEMA + "PRAGMA user_version = 2;")
        # Up to date as version 2 saw it: only a rebuild makes the note read again.
        conn.execute("INSERT INTO files VALUES ('memory/2026-04-01.md', ?, ?)", (stat.st_mtime_ns, stat.st_size))
    conn.close()
    assert [hit.path for hit in search_memory(workspace, "备份")] == ["memory/2026-04-01.md"]
    conn = open_index(workspace)
    try:
        assert conn.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
        assert conn.execute("SELECT value FROM meta WHERE key = 'tokenizer'").fetchone() == (tokenizer_config(),)
    finally:
        conn.close()


def test_an_index_made_by_another_tokenizer_is_rebuilt(workspace: Workspace) -> None:
    write(workspace, "memory/2026-04-01.md", "明天检查备份任务。\n")
    conn = open_index(workspace)
    try:
        refresh_index(workspace, conn)
        # What another tokenizer would have left: other tokens in the table, another name in meta.
        conn.execute("INSERT INTO chunks_morph (chunks_morph) VALUES ('delete-all')")
        conn.execute("UPDATE meta SET value = 'morph-0' WHERE key = 'tokenizer'")
    finally:
        conn.close()
    assert [hit.path for hit in search_memory(workspace, "备份")] == ["memory/2026-04-01.md"]
    conn = open_index(workspace)
    try:
        assert conn.execute("SELECT value FROM meta WHERE key = 'tokenizer'").fetchone() == (tokenizer_config(),)
    finally:
        conn.close()


def test_the_tokenizer_config_names_what_can_change_a_token() -> None:
    config = tokenizer_config()
    assert "unicode61 remove_diacritics 2" in config
    assert "snowballstemmer=" in config and f"unicode={unicodedata.unidata_version}" in config
