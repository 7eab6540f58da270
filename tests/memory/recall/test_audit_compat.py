"""Doctor (B1.2 audit/repair), config resolution (B1.1 a), OpenClaw store compatibility, #92050 and #67580."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from dreaming.config import DeepConfig, DreamingConfig
from dreaming.memory import Workspace
from dreaming.memory.recall import (
    RecallResult,
    audit_recall_artifacts,
    deep_sleep_recall,
    light_sleep_recall,
    rank_short_term_candidates,
    read_store,
    record_short_term_recalls,
    repair_recall_artifacts,
    write_store,
)

from .helpers import at, entries, note, rec

NOW = at("2026-04-04T10:00:00")


def _entry(key: str, snippet: str, **extra: Any) -> dict[str, Any]:
    path = key.split(":")[1]
    base = {
        "key": key, "path": path, "startLine": 1, "endLine": 1, "source": "memory", "snippet": snippet,
        "recallCount": 3, "dailyCount": 0, "groundedCount": 0, "totalScore": 2.7, "maxScore": 0.95,
        "firstRecalledAt": "2026-04-02T09:00:00.000Z", "lastRecalledAt": "2026-04-04T09:00:00.000Z",
        "queryHashes": ["aaaaaaaaaaaa", "bbbbbbbbbbbb", "cccccccccccc"],
        "recallDays": ["2026-04-02", "2026-04-03", "2026-04-04"], "conceptTags": ["router", "vlan"],
    }  # fmt: skip
    base.update(extra)
    return base


def _write(ws: Workspace, entries_: dict[str, Any], **top: Any) -> None:
    ws.state_dir.mkdir(parents=True, exist_ok=True)
    doc = {"version": 1, "updatedAt": "2026-04-04T09:00:00.000Z", "entries": entries_, **top}
    ws.recall_store.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")


def _stale_lock(ws: Workspace, now_s: float) -> Path:
    lock = ws.state_dir / "short-term-promotion.lock"
    lock.write_text("999999:0\n")
    os.utime(lock, (now_s - 120, now_s - 120))
    return lock


def test_audit_and_repair_invalid_entry_and_stale_lock(workspace: Workspace) -> None:
    good = _entry("memory:memory/2026-04-04.md:1:1", "Omada router VLAN notes", conceptTags=[], recallDays=[])
    _write(workspace, {good["key"]: good, "bad": {"path": ""}})
    note(workspace, "memory/2026-04-04.md", ["Omada router VLAN notes"])  # an entry whose note is gone is removed
    lock = _stale_lock(workspace, NOW.timestamp())
    audit = audit_recall_artifacts(workspace, now=NOW)
    assert audit.invalid_entry_count == 1
    assert [i.code for i in audit.issues] == ["recall-store-invalid", "recall-lock-stale"]
    repair = repair_recall_artifacts(workspace, now=NOW)
    assert repair.changed and repair.rewrote_store and repair.removed_stale_lock
    assert not lock.exists()
    again = audit_recall_artifacts(workspace, now=NOW)
    assert again.invalid_entry_count == 0 and again.issues == ()
    (fixed,) = entries(workspace)
    assert "router" in fixed["conceptTags"] and fixed["recallDays"] == ["2026-04-04"]


def test_over_limit_store_is_trimmed(workspace: Workspace) -> None:
    big = {
        f"memory:memory/2026-04-04.md:{i}:{i}": _entry(
            f"memory:memory/2026-04-04.md:{i}:{i}", f"Oversized recall {i} " + "y" * 900,
            startLine=i, endLine=i, lastRecalledAt=f"2026-04-04T09:{i // 60 % 60:02d}:{i % 60:02d}.000Z",
            firstRecalledAt="2026-04-01T00:00:00.000Z",
        )
        for i in range(1, 516)
    }  # fmt: skip
    big = {k.replace(":1:1", ":0:0") if k.endswith(":1:1") else k: v for k, v in big.items()}
    _write(workspace, big)
    note(workspace, "memory/2026-04-04.md", ["Oversized recalls"])
    assert "recall-store-over-limit" in [i.code for i in audit_recall_artifacts(workspace, now=NOW).issues]
    repair = repair_recall_artifacts(workspace, now=NOW)
    assert repair.removed_overflow_entries == 3
    kept = entries(workspace)
    assert len(kept) == 512 and all(len(e["snippet"]) <= 800 for e in kept)
    assert not any(e["snippet"].startswith("Oversized recall 1 ") for e in kept)


def test_invalid_timestamps_fall_back_to_score(workspace: Workspace) -> None:
    store = {
        f"k{i}": _entry(f"memory:memory/2026-04-04.md:{i + 1}:{i + 1}", f"entry-{i}", startLine=i + 1, endLine=i + 1,
                        lastRecalledAt="not-a-date", totalScore=i)
        for i in range(515)
    }  # fmt: skip
    _write(workspace, store)
    note(workspace, "memory/2026-04-04.md", ["Entries"])
    repair_recall_artifacts(workspace, now=NOW)
    snippets = {e["snippet"] for e in entries(workspace)}
    assert "entry-0" not in snippets and "entry-514" in snippets


def test_contaminated_legacy_entry_removed(workspace: Workspace) -> None:
    dirty = "Candidate: x. confidence: 0.9 evidence: memory/2026-04-01.md:1-1 recalls: 2 status: staged " + "z" * 900
    _write(workspace, {"k": _entry("memory:memory/2026-04-04.md:1:1", dirty)})
    assert repair_recall_artifacts(workspace, now=NOW).removed_invalid_entries == 1
    assert json.loads(workspace.recall_store.read_text())["entries"] == {}


def test_blank_store_file_is_rewritten(workspace: Workspace) -> None:
    workspace.state_dir.mkdir(parents=True)
    workspace.recall_store.write_text("   \n")
    assert [i.code for i in audit_recall_artifacts(workspace, now=NOW).issues] == ["recall-store-empty"]
    repair = repair_recall_artifacts(workspace, now=NOW)
    assert repair.changed and repair.rewrote_store
    doc = json.loads(workspace.recall_store.read_text())
    assert (doc["version"], doc["entries"]) == (1, {})


def test_healthy_store_is_byte_identical(workspace: Workspace) -> None:
    rec(workspace, "q", "memory/2026-04-04.md", 1, 1, 0.9, "Healthy fact.", NOW)
    note(workspace, "memory/2026-04-04.md", ["Healthy fact."])
    before = workspace.recall_store.read_bytes()
    repair = repair_recall_artifacts(workspace, now=at("2026-04-09T00:00:00"))
    assert (repair.changed, repair.rewrote_store) == (False, False)
    assert workspace.recall_store.read_bytes() == before


def test_openclaw_formatted_healthy_store_is_byte_identical(workspace: Workspace) -> None:
    _write(workspace, {"memory:memory/2026-04-04.md:1:1": _entry("memory:memory/2026-04-04.md:1:1", "Router VLAN 10")})
    note(workspace, "memory/2026-04-04.md", ["Router VLAN 10"])
    before = workspace.recall_store.read_bytes()
    assert not repair_recall_artifacts(workspace, now=NOW).changed
    assert workspace.recall_store.read_bytes() == before


@pytest.mark.parametrize("compat", [True, False])
def test_doctor_repair_removes_entries_whose_note_is_gone_as_openclaw_does(workspace: Workspace, compat: bool) -> None:
    """2026.9's repair (``memory status --fix``) drops an entry whose note is gone, and its phase signal."""
    kept, gone = (_entry(f"memory:memory/2026-04-0{d}.md:1:1", f"Router fact {d}") for d in (3, 4))
    _write(workspace, {kept["key"]: kept, gone["key"]: gone})
    note(workspace, "memory/2026-04-03.md", ["Router fact 3"])
    workspace.phase_signals.write_text(json.dumps({"version": 1, "entries": {
        gone["key"]: {"key": gone["key"], "lightHits": 1, "remHits": 0, "lastLightAt": "2026-04-04T09:00:00.000Z"},
    }}), encoding="utf-8")  # fmt: skip
    audit = audit_recall_artifacts(workspace, now=NOW, openclaw_compat=compat)
    assert ("recall-store-dangling" in [i.code for i in audit.issues]) is compat
    repair = repair_recall_artifacts(workspace, now=NOW, openclaw_compat=compat)
    assert repair.removed_dangling_entries == (1 if compat else 0)
    assert [e["key"] for e in entries(workspace)] == [kept["key"]] + ([] if compat else [gone["key"]])
    signals = json.loads(workspace.phase_signals.read_text(encoding="utf-8"))["entries"]
    assert list(signals) == ([] if compat else [gone["key"]])


@pytest.mark.parametrize("compat", [True, False])
def test_the_sweep_never_makes_a_candidate_of_another_source(workspace: Workspace, compat: bool) -> None:
    """Repair must not rewrite ``source`` to ``memory`` before ranking: OpenClaw drops any other source on read."""
    provenance = {"originClass": "owner", "sessionKind": "interactive", "observedAt": 1}
    web = _entry("memory:memory/2026-04-04.md:1:1", "Router VLAN 10 from the web", source="web", provenance=provenance)
    _write(workspace, {web["key"]: web})
    note(workspace, "memory/2026-04-04.md", ["Router VLAN 10 from the web"])
    config = DreamingConfig.from_mapping({"recall": {"openclaw_compat": compat}, "deep": {"min_score": 0}})
    summary = deep_sleep_recall(workspace, config, now=NOW)
    assert summary.ranking.candidates == () and summary.applied == () and not workspace.memory_md.exists()
    assert summary.removed_invalid_entries == 1


def test_repair_waits_for_an_active_lock(workspace: Workspace) -> None:
    _write(workspace, {"bad": {"path": ""}})
    lock = workspace.state_dir / "short-term-promotion.lock"
    lock.write_text(f"{os.getpid()}:{int(time.time() * 1000)}\n")
    out: list[int] = []
    worker = threading.Thread(
        target=lambda: out.append(repair_recall_artifacts(workspace, now=NOW).removed_invalid_entries)
    )
    worker.start()
    time.sleep(0.1)
    assert out == [] and worker.is_alive()
    lock.unlink()
    worker.join(timeout=5)
    assert out == [1]


def test_script_coverage(workspace: Workspace) -> None:
    _write(workspace, {
        "a": _entry("memory:memory/2026-04-04.md:1:1", "Router backups"),
        "b": _entry("memory:memory/2026-04-04.md:2:2", "障害対応ルーター設定", startLine=2, endLine=2),
    })  # fmt: skip
    audit = audit_recall_artifacts(workspace, now=NOW)
    assert (audit.latin_entry_count, audit.cjk_entry_count, audit.mixed_entry_count, audit.other_entry_count) == (
        1, 1, 0, 0,
    )  # fmt: skip


def test_deep_normalizes_duplicated_hashes_and_days_with_the_project_rules(workspace: Workspace) -> None:
    snippet = "Move backups to S3 Glacier and sync router failover notes."
    seeded = _entry("memory:memory/2026-04-02.md:1:1", snippet, queryHashes=["abc", "abc", "def"],
                    recallDays=["2026-04-01", "2026-04-01", "2026-04-03"], conceptTags=[])  # fmt: skip
    _write(workspace, {seeded["key"]: seeded})
    note(workspace, "memory/2026-04-02.md", [snippet])
    deep_sleep_recall(workspace, DreamingConfig.from_mapping({"recall": {"openclaw_compat": False}}), now=NOW)
    (fixed,) = entries(workspace)
    assert fixed["queryHashes"] == ["abc", "def"] and fixed["recallDays"] == ["2026-04-01", "2026-04-03"]
    assert {"failover", "glacier", "router"} <= set(fixed["conceptTags"])


def test_sweep_repair_as_openclaw(workspace: Workspace) -> None:
    """§5.2: tags derived again (replacing stored ones), days made distinct plus lastRecalledAt's day, dangling gone."""
    snippet = "Move backups to S3 Glacier and sync router failover notes."
    seeded = _entry("memory:memory/2026-04-02.md:1:1", snippet, recallDays=["2026-04-01", "2026-04-01"],
                    conceptTags=["stale"])  # fmt: skip
    gone = _entry("memory:memory/2026-04-03.md:1:1", "A note that was deleted since.")
    _write(workspace, {seeded["key"]: seeded, gone["key"]: gone})
    note(workspace, "memory/2026-04-02.md", [snippet])
    workspace.phase_signals.write_text(json.dumps({"version": 1, "entries": {
        gone["key"]: {"key": gone["key"], "lightHits": 1, "remHits": 0, "lastLightAt": "2026-04-04T09:00:00.000Z"},
        seeded["key"]: {"key": seeded["key"], "lightHits": 1, "remHits": 0, "lastLightAt": "2026-04-04T09:00:00.000Z"},
    }}), encoding="utf-8")  # fmt: skip
    summary = deep_sleep_recall(workspace, DreamingConfig(), now=NOW)
    assert summary.removed_dangling_entries == 1
    (fixed,) = entries(workspace)
    assert fixed["recallDays"] == ["2026-04-01", "2026-04-04"]  # distinct, lastRecalledAt's day appended
    assert "stale" not in fixed["conceptTags"] and "glacier" in fixed["conceptTags"]
    signals = json.loads(workspace.phase_signals.read_text(encoding="utf-8"))["entries"]
    assert list(signals) == [seeded["key"]]


# --- OpenClaw compatibility -------------------------------------------------------------------------------------


def test_openclaw_store_is_read_ranked_and_promoted_and_unknown_fields_survive(workspace: Workspace) -> None:
    key = "memory:memory/2026-04-03.md:2:2"
    provenance = {"originClass": "owner", "sessionKind": "interactive", "observedAt": 1}
    entry = _entry(key, "Configured VLAN 10 on Omada router", startLine=2, endLine=2, provenance=provenance,
                   futureField={"nested": [1, 2]}, totalScore=3.0,
                   conceptTags=["configured", "vlan", "omada", "router"])  # fmt: skip
    _write(workspace, {key: entry}, pluginNote="kept")
    note(workspace, "memory/2026-04-03.md", ["# Network", "Configured VLAN 10 on Omada router"])
    (c,) = rank_short_term_candidates(workspace, DeepConfig(), now=NOW).candidates
    # 0.3*1.0 + 0.24*ln4/ln11 + 0.15*0.6 + 0.15*2^(-1/336) + 0.1*(0.55*ln3/ln5 + 0.45*2/7) + 0.06*4/6
    # = 0.300 + 0.139 + 0.090 + 0.150 + 0.050 + 0.040
    assert round(c.score, 3) == 0.769
    summary = deep_sleep_recall(workspace, DreamingConfig(), now=NOW)
    assert [a.key for a in summary.applied] == [key]
    doc = json.loads(workspace.recall_store.read_text())
    assert doc["pluginNote"] == "kept"
    kept = doc["entries"][key]
    assert kept["provenance"] == provenance and kept["futureField"] == {"nested": [1, 2]}
    assert kept["promotedAt"] == "2026-04-04T10:00:00.000Z"


def test_store_written_here_reads_as_plain_json(workspace: Workspace) -> None:
    rec(workspace, "q", "memory/2026-04-03.md", 1, 1, 0.9, "Fact with “quotes” and ünïcode.", NOW)
    doc = json.loads(workspace.recall_store.read_bytes())
    assert doc["version"] == 1 and isinstance(doc["entries"], dict)
    store = read_store(workspace, now=NOW)
    assert write_store(workspace, store, now=at("2026-04-04T10:00:00")) is False  # same bytes: nothing rewritten


@pytest.mark.slow
def test_twenty_thousand_entry_store_has_no_size_cap(workspace: Workspace) -> None:
    big = {}
    for i in range(20_000):
        key = f"memory:memory/2026-04-{1 + i % 28:02d}.md:{i + 1}:{i + 1}"
        big[key] = _entry(key, f"Entry {i} " + "s" * 830, startLine=i + 1, endLine=i + 1)
    _write(workspace, big)
    assert workspace.recall_store.stat().st_size > 17_000_000
    # How fast it ranks is measured in `make bench` (bench/bench_recall.py, as a ratio to loading the file).
    result = rank_short_term_candidates(workspace, DeepConfig(limit=20_000, min_score=0), now=NOW)
    # Every entry is read; ranking then sees the 512 that OpenClaw's read cap keeps, and reports the rest.
    assert len(result.candidates) + len(result.skipped) == 20_000 and len(result.candidates) == 512
    assert {gate for _, gate in result.skipped} == {"over_cap"}
    store = read_store(workspace, now=NOW)
    write_store(workspace, store, now=NOW)
    assert len(read_store(workspace, now=NOW).entries) == 20_000


def test_dreaming_output_never_enters_the_store(workspace: Workspace) -> None:
    """#67580: DREAMS.md lines, light reports and staged candidate lines pasted into a note are never recorded."""
    note(workspace, "memory/2026-04-04.md", ["Real note about the NAS."])
    light_sleep_recall(workspace, DreamingConfig(), now=NOW)
    note(workspace, "DREAMS.md", ["# Dream Diary", "I drifted through the router's halls."])
    staged = ["- Candidate: Default to action.", "  - confidence: 0.76", "  - evidence: memory/2026-04-01.md:1-1",
              "  - recalls: 3", "  - status: staged"]  # fmt: skip
    note(workspace, "memory/2026-04-05.md", ["Kept user line.", "", *staged])
    report = (workspace.reports_dir / "light" / "2026-04-04.md").read_text().splitlines()
    results = [RecallResult("DREAMS.md", 2, 2, 0.9, "I drifted through the router's halls."),
               RecallResult("memory/dreaming/light/2026-04-04.md", 1, len(report), 0.9, " ".join(report)),
               RecallResult("memory/2026-04-05.md", 3, 7, 0.9, " ".join(staged))]  # fmt: skip
    record_short_term_recalls(workspace, query="nas", results=results, now=NOW)
    light_sleep_recall(workspace, DreamingConfig(), now=at("2026-04-05T10:00:00"))
    snippets = " ".join(e["snippet"] for e in entries(workspace))
    assert "Real note about the NAS." in snippets and "Kept user line." in snippets
    assert "drifted" not in snippets and "Candidate" not in snippets and "staged" not in snippets
    assert all(not e["path"].startswith("memory/dreaming") for e in entries(workspace))


# --- B1.1 (a) config resolution against dreaming.toml's [deep] table ---------------------------------------------


def test_config_defaults() -> None:
    deep = DreamingConfig.from_mapping({}).deep
    assert (deep.enabled, deep.limit, deep.min_score, deep.min_recall_count) == (True, 10, 0.75, 3)
    # 2026.9: three distinct user queries (short-term-promotion-types), no longer two.
    assert (deep.min_unique_queries, deep.recency_half_life_days, deep.max_age_days) == (3, 14.0, 30.0)


def test_config_explicit_values() -> None:
    deep = DreamingConfig.from_mapping({"deep": {"limit": 7, "min_score": 0.4, "min_recall_count": 2,
        "min_unique_queries": 3, "recency_half_life_days": 21, "max_age_days": 30}}).deep  # fmt: skip
    assert (deep.limit, deep.min_score, deep.min_recall_count, deep.min_unique_queries) == (7, 0.4, 2, 3)
    assert (deep.recency_half_life_days, deep.max_age_days) == (21, 30)


def test_config_strings_are_parsed() -> None:
    deep = DreamingConfig.from_mapping({"deep": {"limit": "4", "min_score": "0.6", "min_recall_count": "2",
        "min_unique_queries": "3", "recency_half_life_days": "9", "max_age_days": "45"}}).deep  # fmt: skip
    assert (deep.limit, deep.min_score, deep.min_recall_count, deep.min_unique_queries) == (4, 0.6, 2, 3)
    assert (deep.recency_half_life_days, deep.max_age_days) == (9, 45)


@pytest.mark.parametrize("blank", [" ", ""])
def test_config_blank_strings_mean_defaults(blank: str) -> None:
    keys = ("limit", "min_score", "min_recall_count", "min_unique_queries", "recency_half_life_days", "max_age_days")
    config = DreamingConfig.from_mapping({"deep": dict.fromkeys(keys, blank)})
    assert config.deep == DeepConfig() and config.deep.max_age_days == 30


def test_config_limit_zero_is_accepted() -> None:
    assert DreamingConfig.from_mapping({"deep": {"limit": 0}}).deep.limit == 0


@pytest.mark.parametrize(
    ("key", "value", "default"),
    [("min_score", -0.2, 0.75), ("min_recall_count", -2, 3), ("min_unique_queries", -4, 3),
     ("recency_half_life_days", -10, 14.0), ("max_age_days", -5, 30.0)],
)  # fmt: skip
def test_config_negatives_fall_back(key: str, value: float, default: float) -> None:
    config = DreamingConfig.from_mapping({"deep": {"enabled": True, key: value}})
    assert getattr(config.deep, key) == default and config.deep.enabled is True
    assert any(key in w for w in config.warnings)


@pytest.mark.parametrize(("raw", "expected"), [(False, False), ("false", False), (True, True), ("true", True)])
def test_config_enabled_flag(raw: object, expected: bool) -> None:
    assert DreamingConfig.from_mapping({"deep": {"enabled": raw}}).deep.enabled is expected
