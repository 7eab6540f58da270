"""A night releases what its research tools hold open (the memory index keeps a SQLite connection)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from dreaming.config import AutoresearchConfig, DreamingConfig
from dreaming.graph import DreamContext
from dreaming.memory import Workspace
from dreaming.night import research_tools, run_night
from dreaming.tools import WorkspaceMemorySearch
from dreaming.tools.sources import ResearchTools


class _Tool:
    def __init__(self) -> None:
        self.closed = 0

    def close(self) -> None:
        self.closed += 1


def test_close_reaches_every_tool_that_can_close() -> None:
    codebase, memory = _Tool(), _Tool()
    ResearchTools(codebase=codebase, memory=memory, web=None).close()  # type: ignore[arg-type]
    assert (codebase.closed, memory.closed) == (1, 1)


def test_a_night_closes_its_memory_index(tmp_path: Path) -> None:
    ws = Workspace.at(tmp_path)
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "2026-04-01.md").write_text("The gateway binds loopback.\n")
    config = replace(DreamingConfig(), autoresearch=AutoresearchConfig(enabled=True, sources=("memory",)))
    seen: list[ResearchTools] = []

    def make_context(base: DreamContext) -> DreamContext:
        deps = research_tools(ws, config, env={})
        assert deps is not None
        seen.append(deps)
        return replace(base, research=deps)

    asyncio.run(run_night(ws, config, now=datetime(2026, 4, 2, 3, tzinfo=UTC), make_context=make_context))
    memory = seen[0].memory
    assert isinstance(memory, WorkspaceMemorySearch)
    assert memory._index._conn is None
