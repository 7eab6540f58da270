from __future__ import annotations

import asyncio
import json
import sys
import types
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from dreaming.memory import Workspace
from dreaming.memory.gaps import list_gaps
from dreaming.memory.recall import note_snippet
from dreaming.memory.search import SearchHit
from dreaming.tools.memory_search import (
    FakeMemorySearch,
    MemorySearch,
    WorkspaceMemorySearch,
    memory_search_tool,
    search_and_record,
)


def hit(path: str, score: float) -> SearchHit:
    return SearchHit(path=path, start_line=2, end_line=3, score=score, snippet=f"text of {path}")


def test_fake_is_driven_by_its_function_and_respects_limit() -> None:
    calls: list[tuple[str, int]] = []

    def fn(query: str, limit: int) -> list[SearchHit]:
        calls.append((query, limit))
        return [hit("a.md", 0.9), hit("b.md", 0.5), hit("c.md", 0.1)]

    fake: MemorySearch = FakeMemorySearch(fn)
    assert [h.path for h in fake.search("kafka", 2)] == ["a.md", "b.md"]
    assert calls == [("kafka", 2)]


def test_tool_returns_json_hits_sync_and_async() -> None:
    tool = memory_search_tool(FakeMemorySearch(lambda query, limit: [hit(f"{query}.md", 0.75)]))
    assert tool.name == "memory_search"
    out = tool.invoke({"query": "kafka", "limit": 3})
    assert json.loads(out) == [
        {
            "path": "kafka.md",
            "start_line": 2,
            "end_line": 3,
            "score": 0.75,
            "snippet": "text of kafka.md",
            "source": "memory",
        }
    ]
    assert json.loads(asyncio.run(tool.ainvoke({"query": "pg"})))[0]["path"] == "pg.md"


def test_tool_schema_bounds_limit() -> None:
    tool = memory_search_tool(FakeMemorySearch(lambda query, limit: []))
    schema = tool.tool_call_schema.model_json_schema()  # type: ignore[union-attr]
    assert schema["properties"]["limit"]["maximum"] == 20
    assert schema["required"] == ["query"]


def test_real_search_excludes_dreaming_output(workspace: Workspace) -> None:
    (workspace.root / "memory" / "dreaming" / "rem").mkdir(parents=True)
    (workspace.root / "memory" / "dreaming" / "rem" / "2026-04-14.md").write_text("ocelot reflections\n")
    (workspace.root / "DREAMS.md").write_text("ocelot diary\n")
    (workspace.root / "memory" / "2026-04-14.md").write_text("saw an ocelot today\n")
    tool = memory_search_tool(WorkspaceMemorySearch(workspace))
    hits = json.loads(tool.invoke({"query": "ocelot"}))
    assert [(h["path"], h["start_line"], h["end_line"]) for h in hits] == [("memory/2026-04-14.md", 1, 1)]


def test_research_never_cites_dreamings_own_insights(tmp_path: Path) -> None:
    from dreaming.memory import Workspace
    from dreaming.tools.memory_search import WorkspaceMemorySearch

    ws = Workspace.at(tmp_path / "ws")
    (ws.memory_dir / "insights" / "archive").mkdir(parents=True)
    (ws.memory_dir / "2026-08-31.md").write_text("# Notes\n\n- The upload retry limit lives in settings.\n")
    insight = "---\nid: research-retry\n---\n\nRETRY_LIMIT = 5: the upload retry limit.\n"
    (ws.insights_dir / "research-retry.md").write_text(insight)
    (ws.archive_dir / "research-old.md").write_text(insight)
    search = WorkspaceMemorySearch(ws)
    try:
        paths = [hit.path for hit in search.search("upload retry limit", 5)]
    finally:
        search.close()
    assert paths == ["memory/2026-08-31.md"]


# search_and_record: search, then record the recall and any knowledge gap.
def write(ws: Workspace, relative: str, text: str) -> None:
    path = ws.root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def fake_recall(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Stand in for ``dreaming.memory.recall`` so the glue is tested on its own."""
    calls: list[dict[str, Any]] = []
    module = types.ModuleType("dreaming.memory.recall")

    def record_short_term_recalls(ws: Workspace, **kwargs: Any) -> int:
        calls.append(kwargs)
        if kwargs["query"] == "explode":
            raise OSError("disk full")
        return len(kwargs["results"])

    module.record_short_term_recalls = record_short_term_recalls  # type: ignore[attr-defined]
    module.note_snippet = note_snippet  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "dreaming.memory.recall", module)
    return calls


def test_hits_are_recorded_as_recalls_and_no_gap(
    workspace: Workspace, now: datetime, fake_recall: list[dict[str, Any]]
) -> None:
    write(workspace, "memory/2026-04-14.md", "kafka retention is seven days\n")
    outcome = search_and_record(workspace, "kafka retention", now=now, timezone="Europe/Paris")
    assert (outcome.gap_type, outcome.gap, outcome.recording_errors) == (None, None, 0)
    (call,) = fake_recall
    assert (call["query"], call["now"], call["timezone"]) == ("kafka retention", now, "Europe/Paris")
    assert [(r.path, r.start_line, r.end_line, r.score, r.snippet, r.source) for r in call["results"]] == [
        ("memory/2026-04-14.md", 1, 1, 1.0, "kafka retention is seven days", "memory")
    ]
    assert list_gaps(workspace) == []


def test_a_hit_is_recorded_as_one_snippet_line_with_its_heading_as_context(
    workspace: Workspace, now: datetime, fake_recall: list[dict[str, Any]]
) -> None:
    write(workspace, "memory/2026-04-14.md", "# 2026-04-14\n\n## Kafka\n- retention is seven days\n- two replicas\n")
    outcome = search_and_record(workspace, "kafka retention", now=now)
    assert (
        outcome.hits[0].snippet == "## Kafka\n- retention is seven days\n- two replicas"
    )  # the search shows the lines
    (call,) = fake_recall
    assert [(r.start_line, r.end_line, r.snippet) for r in call["results"]] == [
        (3, 5, "Kafka: retention is seven days; two replicas")
    ]


def test_no_hits_records_a_gap_and_no_recall(
    workspace: Workspace, now: datetime, fake_recall: list[dict[str, Any]]
) -> None:
    outcome = search_and_record(workspace, "postgres vacuum", now=now)
    assert outcome.hits == []
    assert outcome.gap_type == "no_results"
    assert outcome.gap is not None and outcome.gap.count == 1
    assert fake_recall == []


def test_recording_errors_never_fail_the_search(
    workspace: Workspace, now: datetime, fake_recall: list[dict[str, Any]], caplog: pytest.LogCaptureFixture
) -> None:
    write(workspace, "memory/2026-04-14.md", "explode the kafka\n")
    outcome = search_and_record(workspace, "explode", now=now)
    assert [h.path for h in outcome.hits] == ["memory/2026-04-14.md"]
    assert outcome.recording_errors == 1
    assert "could not record the recall" in caplog.text


def test_gap_recording_error_is_counted(
    workspace: Workspace, now: datetime, fake_recall: list[dict[str, Any]], caplog: pytest.LogCaptureFixture
) -> None:
    workspace.state_dir.mkdir(parents=True)
    (workspace.state_dir / "knowledge-gaps.lock").mkdir()  # the lock cannot be opened
    outcome = search_and_record(workspace, "nothing here", now=now)
    assert (outcome.hits, outcome.gap_type, outcome.gap, outcome.recording_errors) == ([], "no_results", None, 1)
    assert "could not record the knowledge gap" in caplog.text


def test_dreaming_output_never_enters_the_recall_store(workspace: Workspace, now: datetime) -> None:
    """With the real recorder: DREAMS.md lines and staged candidates searched for never reach the store."""
    write(workspace, "DREAMS.md", "# Dream Diary\n\n- the axolotl migration pattern\n")
    write(workspace, "memory/dreaming/light/2026-04-14.md", "- Staged candidate: axolotl migration\n")
    write(
        workspace,
        "memory/2026-04-14.md",
        "<!-- openclaw:dreaming:light:start -->\n- axolotl migration\n<!-- openclaw:dreaming:light:end -->\n",
    )
    write(workspace, "memory/2026-04-13.md", "the real note about kafka\n")
    for query in ("axolotl migration", "axolotl", "the axolotl migration pattern"):
        outcome = search_and_record(workspace, query, now=now)
        assert outcome.hits == []
        assert outcome.recording_errors == 0
    assert search_and_record(workspace, "kafka", now=now).recording_errors == 0
    store = json.loads(workspace.recall_store.read_text())
    assert store["entries"]
    assert all("axolotl" not in json.dumps(entry) for entry in store["entries"].values())
    assert all(entry["path"] == "memory/2026-04-13.md" for entry in store["entries"].values())


# -- A search that does not invent gaps (issue 13). ------------------------------------------------------------------

DAILY_NOTES = {
    "memory/2026-04-10.md": "# 2026-04-10\n\n## Ops\nThe rate limit is 100 requests per minute.\n",
    "memory/2026-04-11.md": "# 2026-04-11\n\n数据库迁移已经完成，明天检查备份任务。\n",
    "memory/2026-04-12.md": "# 2026-04-12\n\n本番サーバーの証明書を更新した。期限は来年三月。\n",
    "memory/2026-04-13.md": "# 2026-04-13\n\nMet the team at the Zürich office café.\n",
    "memory/2026-04-14.md": "# 2026-04-14\n\nLunch at the Straße canteen with the Łódź team.\n",
}


@pytest.fixture
def daily_notes(workspace: Workspace) -> Workspace:
    for relative, text in DAILY_NOTES.items():
        write(workspace, relative, text)
    return workspace


@pytest.mark.parametrize(
    ("query", "path"),
    [
        ("rate limits", "memory/2026-04-10.md"),  # found before too, by "rate" alone
        ("limits", "memory/2026-04-10.md"),
        ("limits per minutes", "memory/2026-04-10.md"),
        ("备份任务", "memory/2026-04-11.md"),
        ("备份", "memory/2026-04-11.md"),
        ("数据库迁移", "memory/2026-04-11.md"),  # found before too: it begins the clause (an FTS5 prefix query)
        ("証明書の更新", "memory/2026-04-12.md"),
        ("証明書", "memory/2026-04-12.md"),
        ("zurich cafe", "memory/2026-04-13.md"),  # found before too: FTS5 drops combining marks
        ("strasse lodz", "memory/2026-04-14.md"),
    ],
)
def test_a_query_that_lacked_only_morphology_finds_its_note_and_records_no_gap(
    daily_notes: Workspace, now: datetime, query: str, path: str
) -> None:
    outcome = search_and_record(daily_notes, query, now=now)
    assert outcome.hits and outcome.hits[0].path == path
    assert (outcome.gap_type, outcome.gap, outcome.recording_errors) == (None, None, 0)
    assert list_gaps(daily_notes) == []
    assert not daily_notes.knowledge_gaps.exists()


def test_the_agents_tool_finds_cjk_notes_and_records_no_gap(daily_notes: Workspace, now: datetime) -> None:
    tool = memory_search_tool(daily_notes, clock=lambda: now)
    for query, path in [("备份", "memory/2026-04-11.md"), ("証明書の更新", "memory/2026-04-12.md")]:
        assert json.loads(tool.invoke({"query": query}))[0]["path"] == path
    assert list_gaps(daily_notes) == []


def test_a_query_truly_absent_still_records_a_gap(daily_notes: Workspace, now: datetime) -> None:
    outcome = search_and_record(daily_notes, "kubernetes ingress controller", now=now)
    assert (outcome.hits, outcome.gap_type) == ([], "no_results")
    assert [(gap.key, gap.type) for gap in list_gaps(daily_notes)] == [("kubernetes ingress controller", "no_results")]
