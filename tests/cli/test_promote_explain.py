"""``dreaming promote --dry-run --json`` accounts for every stored entry: a candidate, or skipped with its reason."""

from __future__ import annotations

import json
from typing import Any

import typer
from typer.testing import CliRunner

from dreaming.cli.memory import register
from dreaming.memory import Workspace
from tests.memory.recall.helpers import note

app = typer.Typer()
register(app)
NOW = "2026-04-04T12:00:00Z"
FACT = "Gateway binds loopback and port 18789"


def _entry(key: str, path: str, snippet: str, **extra: Any) -> dict[str, Any]:
    line = int(key.rsplit(":", 1)[-1]) if key.startswith("memory:") else 1
    return {
        "key": key, "path": path, "startLine": line, "endLine": line, "source": "memory", "snippet": snippet,
        "recallCount": 4, "dailyCount": 0, "groundedCount": 0, "totalScore": 3.6, "maxScore": 0.95,
        "firstRecalledAt": "2026-04-02T09:00:00.000Z", "lastRecalledAt": "2026-04-04T09:00:00.000Z",
        "queryHashes": ["a1", "b2", "c3", "d4"], "recallDays": ["2026-04-02", "2026-04-03", "2026-04-04"],
        "conceptTags": ["gateway", "loopback", "port"],
        # As 2026.9 records a search hit: without an owner or agent origin the sweep's consolidation filter holds it.
        "provenance": {"originClass": "agent", "sessionKind": "unknown", "observedAt": 1775293200000}, **extra,
    }  # fmt: skip


def _write(ws: Workspace, entries: dict[str, Any]) -> None:
    ws.state_dir.mkdir(parents=True, exist_ok=True)
    doc = {"version": 1, "updatedAt": "2026-04-04T09:00:00.000Z", "entries": entries}
    ws.recall_store.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")


def _explain(ws: Workspace) -> dict[str, Any]:
    out = CliRunner().invoke(app, ["promote", "--dry-run", "--json", "--now", NOW, "-w", str(ws.root)])
    assert out.exit_code == 0, out.output
    payload: dict[str, Any] = json.loads(out.stdout)
    return payload


def test_every_stored_entry_is_a_candidate_or_skipped_with_its_reason(workspace: Workspace) -> None:
    note(workspace, "memory/2026-04-02.md", [FACT])
    staged = ("Candidate: Default to action. confidence: 0.76 evidence: memory/2026-04-01.md:1-1 recalls: 3 "
              "status: staged")  # fmt: skip
    entries = {
        "memory:memory/2026-04-02.md:1:1": _entry("memory:memory/2026-04-02.md:1:1", "memory/2026-04-02.md", FACT),
        "memory:memory/2026-04-02.md:2:2": _entry("memory:memory/2026-04-02.md:2:2", "memory/2026-04-02.md", staged),
        "memory:notes/ideas.md:1:1": _entry("memory:notes/ideas.md:1:1", "notes/ideas.md", "An idea about ports"),
        "memory:memory/2026-04-02.md:3:3": _entry(
            "memory:memory/2026-04-02.md:3:3", "memory/2026-04-02.md", "Port plan", startLine="three"
        ),
        "memory:memory/2026-04-02.md:4:4": _entry(
            "memory:memory/2026-04-02.md:4:4",
            "memory/2026-04-02.md",
            "Shared by a stranger",
            provenance={"originClass": "untrusted", "sessionKind": "cron", "observedAt": 0},
        ),
        "memory:memory/2026-04-02.md:5:5": _entry(
            "memory:memory/2026-04-02.md:5:5", "memory/2026-04-02.md", "Asked twice", queryHashes=["a1", "b2"]
        ),
    }
    _write(workspace, entries)
    payload = _explain(workspace)
    assert [c["key"] for c in payload["candidates"]] == ["memory:memory/2026-04-02.md:1:1"]
    reasons = {row["key"]: (row["gate"], row["reason"]) for row in payload["skipped"]}
    assert reasons == {
        "memory:memory/2026-04-02.md:2:2": ("contaminated", "contaminated snippet"),
        "memory:notes/ideas.md:1:1": ("path", "not a daily note or session corpus"),
        "memory:memory/2026-04-02.md:3:3": ("invalid_lines", "not an integer line"),
        "memory:memory/2026-04-02.md:4:4": ("origin", "untrusted or system origin"),
        "memory:memory/2026-04-02.md:5:5": ("min_unique_queries", "fewer than 3 distinct user queries"),
    }
    assert len(payload["skipped"]) == len(reasons)  # each entry once


def test_scored_skips_carry_their_components_and_the_cap_is_explained(workspace: Workspace) -> None:
    (workspace.root / "dreaming.toml").write_text("[deep]\nlimit = 1\n")
    note(workspace, "memory/2026-04-02.md", [f"Fact {i} about ports" for i in range(1, 515)])
    entries = {}
    for i in range(1, 515):  # two over the cap: the two oldest go
        key = f"memory:memory/2026-04-02.md:{i}:{i}"
        day = "2026-04-04" if i > 2 else "2026-04-03"
        entries[key] = _entry(
            key, "memory/2026-04-02.md", f"Fact {i} about ports", lastRecalledAt=f"{day}T09:00:00.000Z"
        )
    entries["memory:memory/2026-04-02.md:9:9"]["totalScore"] = 0.4  # scored, below 0.75
    _write(workspace, entries)
    payload = _explain(workspace)
    rows = {row["key"]: row for row in payload["skipped"]}
    assert len(payload["candidates"]) == 1 and len(rows) == 513
    for i in (1, 2):
        assert rows[f"memory:memory/2026-04-02.md:{i}:{i}"]["reason"] == "over the 512 cap"
    low = rows["memory:memory/2026-04-02.md:9:9"]
    assert low["gate"] == "min_score" and low["score"] < 0.75 and round(low["components"]["relevance"], 3) == 0.1
    past = next(row for row in rows.values() if row["gate"] == "limit")
    assert past["reason"] == "past the limit of 1" and set(past["components"]) >= {"diversity", "phase_boost"}
