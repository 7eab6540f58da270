"""Light and REM read the recall store unrepaired: hand-edited values are tolerated, never fatal."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from dreaming.config import DreamingConfig
from dreaming.memory import Workspace
from dreaming.memory.recall import deep_sleep_recall, light_sleep_recall, rem_sleep_recall

NOW = datetime(2026, 4, 3, 3, tzinfo=UTC)


def test_odd_counters_lists_and_scores_do_not_stop_the_night(workspace: Workspace) -> None:
    (workspace.memory_dir / "2026-04-02.md").parent.mkdir(parents=True, exist_ok=True)
    (workspace.memory_dir / "2026-04-02.md").write_text("Gateway binds loopback and port 18789.\n")
    entry = {
        "key": "memory:memory/2026-04-02.md:1:1", "path": "memory/2026-04-02.md", "startLine": 1, "endLine": 1,
        "source": "memory", "snippet": "Gateway binds loopback and port 18789.", "recallCount": "three",
        "dailyCount": None, "groundedCount": float("nan"), "totalScore": "high", "maxScore": 0.9,
        "firstRecalledAt": "2026-04-02T10:00:00.000Z", "lastRecalledAt": "2026-04-02T10:00:00.000Z",
        "queryHashes": 7, "recallDays": ["2026-04-02", 5], "conceptTags": ["gateway", None, 3],
    }  # fmt: skip
    workspace.state_dir.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"version": 1, "updatedAt": "2026-04-02T10:00:00.000Z", "entries": {entry["key"]: entry}})
    workspace.recall_store.write_text(text.replace("NaN", "1e999"))
    config = DreamingConfig()
    light = light_sleep_recall(workspace, config, now=NOW)
    assert light.report_path.exists()
    rem_sleep_recall(workspace, config, now=NOW)
    deep = deep_sleep_recall(workspace, config, now=NOW)
    assert deep.applied == ()
