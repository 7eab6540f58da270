"""Recording recalls (B1.2 recording cases) and retention."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from datetime import datetime, timedelta
from typing import Any

import pytest

from dreaming.memory import Workspace
from dreaming.memory.recall import (
    GroundedItem,
    RecallResult,
    RecordRules,
    rank_short_term_candidates,
    record_grounded_short_term_candidates,
    record_short_term_recalls,
)
from dreaming.memory.recall._record import claim_hash, query_hash

from .helpers import ZERO, at, entries, rec, store

T0 = at("2026-04-03T10:00:00")


def test_subfolder_spaced_and_unicode_paths_are_recorded(workspace: Workspace) -> None:
    for i, path in enumerate(["memory/daily notes/2026-04-04.md", "memory/日记/2026-04-04.md"]):
        rec(workspace, f"q{i}", path, 1, 1, 0.8, "Rotate the keys monthly.", T0)
    assert {e["path"] for e in entries(workspace)} == {"memory/daily notes/2026-04-04.md", "memory/日记/2026-04-04.md"}


def test_caps_entries_and_snippets(workspace: Workspace) -> None:
    results = [
        RecallResult(f"memory/2026-04-{1 + i % 28:02d}.md", i + 1, i + 1, 0.8, f"Recall entry {i} " + "x" * 900)
        for i in range(517)
    ]
    for i, result in enumerate(results):
        record_short_term_recalls(workspace, query="caps", results=[result], now=T0 + timedelta(seconds=i))
    kept = entries(workspace)
    assert len(kept) == 512
    assert all(len(e["snippet"]) <= 800 for e in kept)
    snippets = {e["snippet"].split(" x")[0] for e in kept}
    assert "Recall entry 0" not in snippets and "Recall entry 516" in snippets


def test_claim_hash_merges_grounded_and_recalled(workspace: Workspace) -> None:
    snippet = "Long claim " + "word " * 300
    record_grounded_short_term_candidates(
        workspace,
        [GroundedItem(path="memory/2026-04-03.md", start_line=1, end_line=1, snippet=snippet, score=0.9, query="g")],
        now=T0,
    )
    rec(workspace, "recall", "memory/2026-04-03.md", 1, 1, 0.7, snippet, T0)
    (entry,) = entries(workspace)
    assert entry["key"].endswith(":" + claim_hash(snippet))
    assert len(claim_hash(snippet)) == 12
    assert entry["recallCount"] == 1 and entry["groundedCount"] == 1
    assert len(entry["snippet"]) <= 800


@pytest.mark.parametrize(
    "path", ["memory/dreaming/deep/2026-04-03.md", "../../vault/memory/dreaming/deep/2026-04-03.md", "DREAMS.md"]
)
def test_dreaming_output_paths_never_create_the_store(workspace: Workspace, path: str) -> None:
    assert rec(workspace, "q", path, 1, 1, 0.9, "A real-looking sentence.", T0) == 0
    assert not workspace.recall_store.exists()


@pytest.mark.parametrize(
    "snippet",
    [
        "Candidate: Default to action. confidence: 0.76 evidence: memory/.dreams/session-corpus/2026-04-08.txt:1-1 "
        "recalls: 3 status: staged",
        "- Candidate: Default to action.\n  - confidence: 0.76\n  - evidence: memory/2026-04-08.md:1-1\n"
        "  - recalls: 3\n  - status: staged",
    ],
)
def test_contaminated_snippets_are_rejected(workspace: Workspace, snippet: str) -> None:
    rec(workspace, "q", "memory/2026-04-03.md", 1, 1, 0.9, "Ordinary fact about the NAS.", T0)
    rec(workspace, "q", "memory/2026-04-03.md", 2, 6, 0.9, snippet, T0)
    assert [e["snippet"] for e in entries(workspace)] == ["Ordinary fact about the NAS."]


def test_quoting_the_prompt_is_kept_verbatim(workspace: Workspace) -> None:
    text = "Debug note: quote Write a dream diary entry from these memory fragments for docs."
    rec(workspace, "q", "memory/2026-04-03.md", 1, 1, 0.9, text, T0)
    assert entries(workspace)[0]["snippet"] == text


def test_weighted_ranking_ignores_long_term_paths(workspace: Workspace) -> None:
    record_short_term_recalls(
        workspace,
        query="router",
        results=[
            RecallResult("memory/2026-04-02.md", 3, 5, 0.9, "Configured VLAN 10 on Omada router"),
            RecallResult("MEMORY.md", 1, 1, 0.99, "Long-term note"),
        ],
        now=T0,
    )
    rec(workspace, "iot vlan", "memory/2026-04-02.md", 3, 5, 0.8, "Configured VLAN 10 on Omada router", T0)
    (candidate,) = rank_short_term_candidates(workspace, ZERO, now=T0).candidates
    assert (candidate.recall_count, candidate.unique_queries) == (2, 2)
    assert candidate.score > 0 and "router" in candidate.concept_tags and candidate.components.conceptual > 0
    assert candidate.avg_score == pytest.approx(0.85, abs=1e-3)
    assert "Long-term note" not in workspace.recall_store.read_text(encoding="utf-8")


def test_same_query_same_day_counts_once_when_deduping(workspace: Workspace) -> None:
    for _ in range(3):
        rec(
            workspace, "Backup Policy", "memory/2026-04-03.md", 1, 1, 0.5, "Move backups to S3 Glacier.", T0,
            dedupe_by_query_per_day=True,
        )  # fmt: skip
    rec(
        workspace, "backup policy", "memory/2026-04-03.md", 1, 1, 0.9, "Move backups to S3 Glacier.",
        T0 + timedelta(days=1), dedupe_by_query_per_day=True,
    )  # fmt: skip
    (entry,) = entries(workspace)
    assert entry["recallCount"] == 2
    assert entry["totalScore"] == pytest.approx(1.4, abs=1e-3)
    assert entry["maxScore"] == pytest.approx(0.9, abs=1e-3)
    assert entry["queryHashes"] == [query_hash("backup policy")]
    assert entry["recallDays"] == ["2026-04-03", "2026-04-04"]
    assert entry["firstRecalledAt"] == "2026-04-03T10:00:00.000Z"
    # 2026.9: a deduping signal of a known query on an unchanged snippet counts on a new day but does not restamp
    assert entry["lastRecalledAt"] == "2026-04-03T10:00:00.000Z"


def test_eight_threads_lose_nothing(workspace: Workspace) -> None:
    def one(i: int) -> None:
        rec(
            workspace, f"backup-{i % 4}", "memory/2026-04-03.md", 1, 1, 0.9, "Move backups to S3 Glacier.", T0,
            dedupe_by_query_per_day=False,
        )  # fmt: skip

    threads = [threading.Thread(target=one, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    (entry,) = entries(workspace)
    assert entry["recallCount"] == 8 and len(entry["queryHashes"]) == 4


def test_eight_threads_same_query_dedupe_counts_once(workspace: Workspace) -> None:
    threads = [
        threading.Thread(
            target=rec,
            args=(workspace, "backup", "memory/2026-04-03.md", 1, 1, 0.9, "Move backups to S3 Glacier.", T0),
            kwargs={"dedupe_by_query_per_day": True},
        )
        for i in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert entries(workspace)[0]["recallCount"] == 1


SCRIPT = """
import sys
from datetime import datetime, timezone
from dreaming.memory import Workspace
from dreaming.memory.recall import RecallResult, record_short_term_recalls
ws = Workspace.at(sys.argv[1])
i = int(sys.argv[2])
record_short_term_recalls(ws, query=f"backup-{i % 4}", results=[RecallResult("memory/2026-04-03.md", 1, 1, 0.9,
    "Move backups to S3 Glacier.")], now=datetime(2026, 4, 3, 10, tzinfo=timezone.utc), dedupe_by_query_per_day=False)
"""


@pytest.mark.slow
def test_eight_processes_lose_nothing(workspace: Workspace) -> None:
    procs = [subprocess.Popen([sys.executable, "-c", SCRIPT, str(workspace.root), str(i)]) for i in range(8)]
    assert [p.wait(timeout=60) for p in procs] == [0] * 8
    (entry,) = entries(workspace)
    assert entry["recallCount"] == 8 and len(entry["queryHashes"]) == 4
    assert not (workspace.state_dir / "short-term-promotion.lock").exists()


@pytest.mark.parametrize(("compat", "real_kept"), [(True, 0), (False, 5)])
def test_retention_evicts_ingestion_only_entries_first_without_compat(
    workspace: Workspace, compat: bool, real_kept: int
) -> None:
    """OpenClaw's 512 cap keeps the newest entries, so 600 fresh zero-recall ingestion entries evict the 5 older
    entries that were genuinely recalled (#150635); with ``openclaw_compat = false`` ingestion-only entries go first."""
    for i in range(5):
        rec(workspace, f"real-{i}", "memory/2026-04-01.md", i + 1, i + 1, 0.9, f"Genuine fact {i}.", T0)
    daily = [RecallResult("memory/2026-04-02.md", i + 1, i + 1, 0.62, f"Ingested chunk {i}.") for i in range(600)]
    record_short_term_recalls(
        workspace, query="__dreaming_daily__:2026-04-04", results=daily, now=T0 + timedelta(days=1),
        signal_type="daily", rules=RecordRules(compat=compat),
    )  # fmt: skip
    kept = entries(workspace)
    assert len(kept) == 512
    assert sum(1 for e in kept if e["recallCount"] > 0) == real_kept
    assert sum(1 for e in kept if e["dailyCount"] > 0) == 512 - real_kept


def test_timezone_day_bucket(workspace: Workspace) -> None:
    rec(
        workspace, "q", "memory/2026-04-01.md", 1, 1, 0.9, "Late night fact.", at("2026-04-01T23:30:00"),
        timezone="America/Los_Angeles",
    )  # fmt: skip
    assert entries(workspace)[0]["recallDays"] == ["2026-04-01"]


def test_store_file_shape_is_openclaw_v1(workspace: Workspace) -> None:
    rec(workspace, "q", "memory/2026-04-03.md", 2, 4, 1.7, "Clamped score fact.", T0)
    doc = store(workspace)
    assert doc["version"] == 1 and doc["updatedAt"] == "2026-04-03T10:00:00.000Z"
    (entry,) = doc["entries"].values()
    assert entry["key"] == "memory:memory/2026-04-03.md:2:4"
    assert set(entry) >= {
        "key", "path", "startLine", "endLine", "source", "snippet", "recallCount", "dailyCount", "groundedCount",
        "totalScore", "maxScore", "firstRecalledAt", "lastRecalledAt", "queryHashes", "recallDays", "conceptTags",
    }  # fmt: skip
    assert entry["totalScore"] == 1.0
    assert workspace.recall_store.read_text(encoding="utf-8").endswith("}\n")
    assert json.loads((workspace.state_dir / "events.jsonl").read_text().splitlines()[-1])["type"] == (
        "memory.recall.recorded"
    )


# The verified example of reference §6, run against OpenClaw 2026.9.6.
PORT_NOTE = "memory/2026-04-10.md"
PORT = "Gateway listens on port 18789."


def _port(ws: Workspace, query: str, score: float, now: datetime, **kwargs: Any) -> None:
    rec(ws, query, PORT_NOTE, 3, 3, score, PORT, now, **kwargs)


def test_openclaw_verified_example(workspace: Workspace) -> None:
    t = at("2026-04-11T09:00:00")
    _port(workspace, "Which Port?", 0.9, t)
    _port(workspace, "which port?", 0.7, t)
    (entry,) = entries(workspace)
    assert entry["recallCount"] == 2 and entry["queryHashes"] == ["13a3c8e39ac6"] == entry["userQueryHashes"]
    before = dict(entry)
    _port(workspace, "which port?", 0.7, t, dedupe_by_query_per_day=True)
    assert entries(workspace) == [before]
    record_short_term_recalls(
        workspace, query="__dreaming_daily__:2026-04-11", results=[RecallResult(PORT_NOTE, 3, 3, 0.62, PORT)],
        now=t, signal_type="daily", day_bucket="2026-04-11",
    )  # fmt: skip
    (entry,) = entries(workspace)
    assert entry["key"] == "memory:memory/2026-04-10.md:3:3"
    assert (entry["recallCount"], entry["dailyCount"]) == (2, 1)
    assert entry["totalScore"] == pytest.approx(2.22, abs=1e-12)
    assert entry["queryHashes"] == ["13a3c8e39ac6", "2213b71c3c98"]
    assert entry["userQueryHashes"] == ["13a3c8e39ac6"]
    assert entry["claimHash"] == claim_hash(PORT)
    assert entry["provenance"] == {"originClass": "agent", "sessionKind": "unknown", "observedAt": 1775898000000}


def test_daily_signal_for_an_unrecalled_claim_goes_to_the_claim_key(workspace: Workspace) -> None:
    t = at("2026-04-11T09:00:00")
    for day, path, line in (("2026-04-11", "memory/2026-04-10.md", 3), ("2026-04-12", "memory/2026-04-12.md", 7)):
        record_short_term_recalls(
            workspace, query=f"__dreaming_daily__:{day}", results=[RecallResult(path, line, line, 0.62, PORT)],
            now=t, signal_type="daily", day_bucket=day,
        )  # fmt: skip
    (entry,) = entries(workspace)
    assert entry["key"] == f"memory:claim:{claim_hash(PORT)}"
    # the first path and lines stay: a claim is cited where it was first seen
    assert (entry["path"], entry["startLine"], entry["dailyCount"]) == ("memory/2026-04-10.md", 3, 2)
    assert "userQueryHashes" not in entry and entry["recallDays"] == ["2026-04-11", "2026-04-12"]
    # a later recall of the same claim folds into the claim entry and keeps its citation
    _port(workspace, "which port", 0.9, t)
    (entry,) = entries(workspace)
    assert (entry["recallCount"], entry["path"], entry["startLine"]) == (1, "memory/2026-04-10.md", 3)
    assert entry["userQueryHashes"] == [query_hash("which port")]


def test_grounded_and_claim_keys(workspace: Workspace) -> None:
    record_grounded_short_term_candidates(
        workspace,
        [GroundedItem(path=PORT_NOTE, start_line=3, end_line=3, snippet=PORT, score=0.9, query="g", signal_count=2)],
        now=T0,
    )
    (entry,) = entries(workspace)
    assert entry["key"] == f"memory:{PORT_NOTE}:3:3:{claim_hash(PORT)}"
    assert (entry["groundedCount"], entry["totalScore"]) == (2, pytest.approx(1.8))
    assert "userQueryHashes" not in entry  # grounded backfill is never a user's question


def test_duplicate_keeps_max_score_and_last_recalled(workspace: Workspace) -> None:
    _port(workspace, "q", 0.5, T0, dedupe_by_query_per_day=True)
    _port(workspace, "q", 0.99, T0 + timedelta(hours=1), dedupe_by_query_per_day=True)
    (entry,) = entries(workspace)
    assert (entry["recallCount"], entry["maxScore"]) == (1, 0.5)  # a duplicate counts 0 towards maxScore
    assert entry["lastRecalledAt"] == "2026-04-03T10:00:00.000Z"  # deduping, same query, same snippet: kept
    _port(workspace, "q", 0.6, T0 + timedelta(hours=2))  # memory_search: no dedupe, counts, restamps
    (entry,) = entries(workspace)
    assert (entry["recallCount"], entry["lastRecalledAt"]) == (2, "2026-04-03T12:00:00.000Z")


def test_provenance_merges_towards_the_least_trusted(workspace: Workspace) -> None:
    from dreaming.memory.recall._record import merge_provenance

    owner = {"originClass": "owner", "sessionKind": "interactive", "observedAt": 5}
    agent = {"originClass": "agent", "sessionKind": "interactive", "observedAt": 3}
    assert merge_provenance(owner, agent) == {"originClass": "agent", "sessionKind": "interactive", "observedAt": 5}
    system = {"originClass": "system", "sessionKind": "cron", "observedAt": 9}
    assert merge_provenance(agent, system) == {"originClass": "system", "sessionKind": "unknown", "observedAt": 9}
    assert merge_provenance(None, agent) == agent


def test_existing_fields_are_kept_and_tags_fall_back(workspace: Workspace) -> None:
    _port(workspace, "q", 0.5, T0)
    doc = store(workspace)
    (entry,) = doc["entries"].values()
    entry["promotedAt"] = "2026-04-03T11:00:00.000Z"
    entry["futureField"] = {"x": 1}
    entry["conceptTags"] = ["kept"]
    entry["firstRecalledAt"] = "2026-04-01T00:00:00.000Z"
    workspace.recall_store.write_text(json.dumps(doc), encoding="utf-8")
    rec(workspace, "q2", PORT_NOTE, 4, 4, 0.5, "1234 5678", T0)  # other lines: its own entry
    rec(workspace, "q2", PORT_NOTE, 3, 3, 0.5, PORT, T0 + timedelta(hours=1))
    (entry,) = [e for e in entries(workspace) if e["snippet"] == PORT]
    assert entry["promotedAt"] == "2026-04-03T11:00:00.000Z" and entry["futureField"] == {"x": 1}
    assert entry["firstRecalledAt"] == "2026-04-01T00:00:00.000Z"
    assert entry["conceptTags"] != ["kept"]  # derived again: this snippet yields tags
    (digits,) = [e for e in entries(workspace) if e["snippet"] == "1234 5678"]
    assert digits["conceptTags"] == []  # nothing derivable, nothing stored before


def test_legacy_entry_without_user_hashes_keeps_its_earned_diversity(workspace: Workspace) -> None:
    _port(workspace, "first", 0.5, T0)
    doc = store(workspace)
    (entry,) = doc["entries"].values()
    del entry["userQueryHashes"]  # as a JSON store written before 2026.9 holds it
    workspace.recall_store.write_text(json.dumps(doc), encoding="utf-8")
    _port(workspace, "second", 0.5, T0)
    (entry,) = entries(workspace)
    assert entry["userQueryHashes"] == [query_hash("first"), query_hash("second")]


def test_snippet_is_cut_at_800_utf16_units(workspace: Workspace) -> None:
    long = "\U0001f600" * 399 + " " + "\U0001f600" * 300
    rec(workspace, "q", PORT_NOTE, 1, 1, 0.5, long, T0)
    (entry,) = entries(workspace)
    # 798 units and a space fit; the next emoji (2 units) would pass 800, so the cut is there, then the end is trimmed
    assert entry["snippet"] == "\U0001f600" * 399
    assert entry["claimHash"] == claim_hash(long)  # identity is the full snippet


def test_recall_days_order_openclaw_and_sorted_fix(workspace: Workspace) -> None:
    from dreaming.memory.recall import RecordRules

    for day in ("2026-04-05", "2026-04-02"):
        _port(workspace, "q", 0.5, T0, day_bucket=day)
    assert entries(workspace)[0]["recallDays"] == ["2026-04-05", "2026-04-02"]
    _port(workspace, "q", 0.5, T0, day_bucket="2026-04-03", rules=RecordRules(compat=False))
    assert entries(workspace)[0]["recallDays"] == ["2026-04-02", "2026-04-03", "2026-04-05"]
