from __future__ import annotations

import asyncio
import json
from pathlib import Path

from dreaming.memory import Workspace
from dreaming.memory.search import SearchHit
from dreaming.tools.memory_search import (
    FakeMemorySearch,
    MemorySearch,
    WorkspaceMemorySearch,
    memory_search_tool,
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
