from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dreaming.config import DeepConfig
from dreaming.memory import Workspace
from dreaming.memory.recall import RecallResult, record_short_term_recalls

ZERO = DeepConfig(min_score=0.0, min_recall_count=0, min_unique_queries=0)


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def rec(
    ws: Workspace,
    query: str,
    path: str,
    start: int,
    end: int,
    score: float,
    snippet: str,
    now: datetime,
    **kwargs: Any,
) -> int:
    return record_short_term_recalls(
        ws, query=query, results=[RecallResult(path, start, end, score, snippet)], now=now, **kwargs
    )


def note(ws: Workspace, rel: str, lines: list[str]) -> Path:
    path = ws.root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def store(ws: Workspace) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(ws.recall_store.read_text(encoding="utf-8"))
    return data


def entries(ws: Workspace) -> list[dict[str, Any]]:
    return list(store(ws)["entries"].values())
