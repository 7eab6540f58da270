"""Regenerate the demo agent's recall store: the memory searches it made during the last days of 2018.

Run: ``.venv/bin/python examples/demo/make_recalls.py`` (rewrites workspace/memory/.dreams/short-term-recall.json).
"""

from __future__ import annotations

import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from dreaming.memory import Workspace
from dreaming.tools.memory_search import search_and_record

HERE = Path(__file__).parent / "workspace"
SEARCHES = [
    ("2018-12-28T09:00:00", "position limit single names"),
    ("2018-12-29T10:30:00", "what is our single-name limit"),
    ("2018-12-31T08:15:00", "risk position limit"),
    ("2018-12-28T16:00:00", "when are price files refreshed"),
    ("2018-12-31T07:00:00", "price refresh time"),
]


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        # Record against a scratch copy so the tracked workspace gets only the store, not the search index.
        scratch = Path(tmp) / "ws"
        shutil.copytree(HERE, scratch)
        ws = Workspace.at(scratch)
        ws.recall_store.unlink(missing_ok=True)  # recorded afresh: each search counts (OpenClaw 2026.9 memory_search)
        for when, query in SEARCHES:
            now = datetime.fromisoformat(when).replace(tzinfo=UTC)
            outcome = search_and_record(ws, query, now=now, limit=3)
            print(f"{when}  {query!r}: {len(outcome.hits)} hits")
        shutil.copy(ws.recall_store, HERE / "memory" / ".dreams" / "short-term-recall.json")
    print("wrote", HERE / "memory" / ".dreams" / "short-term-recall.json")


if __name__ == "__main__":
    main()
