"""Read and rank parity with the real OpenClaw 2026.9.6: its goldens, reproduced here without Node.

Each promotion case's store is handed to the normalizer in the order OpenClaw's reader got its rows (all rows share
one ``created_at``, so ascending sha256 of the logical key; see the goldens' README). The normalized store must equal
``store-read.json`` entry for entry (fields this code keeps beyond OpenClaw's are none in these cases), and ranking with
the CLI's deep config must give ``rank-promote.json``: the same candidates in the same order, every component and the
score within 1e-3 (they agree to about 1e-15: exp and log come from different math libraries).
"""

from __future__ import annotations

import hashlib
import math
from datetime import datetime
from typing import Any

import pytest

from dreaming.config import DeepConfig
from dreaming.memory.recall._normalize import normalize_phase_signals, normalize_recall_store
from dreaming.memory.recall._ranking import rank_entries

from .openclaw_golden import GoldenCase, case_names, expected, load_case

pytest.importorskip("icu", reason="CJK concept tags and localeCompare need ICU (the icu extra)")

PROMOTION = case_names("promotion")
RECORD = case_names("record")
TOLERANCE = 1e-3
_RANK_DEFAULTS = {"limit": 10, "minScore": 0.75, "minRecallCount": 3, "minUniqueQueries": 3,
                  "recencyHalfLifeDays": 14, "maxAgeDays": 30}  # fmt: skip


def _row_order(entries: dict[str, Any]) -> dict[str, Any]:
    # ``ORDER BY created_at, entry_key`` with one created_at and one key prefix: sha256 of the logical key.
    return {key: entries[key] for key in sorted(entries, key=lambda k: hashlib.sha256(k.encode()).hexdigest())}


def _stored(case: GoldenCase) -> tuple[dict[str, Any], dict[str, Any]]:
    assert case.store is not None
    phase = (case.phase_signals or {}).get("entries", {})
    return _row_order(case.store["entries"]), _row_order(phase)


def _config(case: GoldenCase) -> DeepConfig:
    rank = {**_RANK_DEFAULTS, **case.options.get("rank", {})}
    return DeepConfig(limit=rank["limit"], min_score=rank["minScore"], min_recall_count=rank["minRecallCount"],
                      min_unique_queries=rank["minUniqueQueries"], recency_half_life_days=rank["recencyHalfLifeDays"],
                      max_age_days=rank["maxAgeDays"])  # fmt: skip


def _same_numbers(ours: Any, theirs: Any) -> bool:
    # JSON equality where numbers compare by value (OpenClaw's 3 is our 3 or 3.0).
    if isinstance(theirs, dict):
        return (
            isinstance(ours, dict)
            and list(ours) == list(theirs)
            and all(_same_numbers(ours[k], v) for k, v in theirs.items())
        )
    if isinstance(theirs, list):
        return isinstance(ours, list) and len(ours) == len(theirs) and all(map(_same_numbers, ours, theirs))
    if isinstance(theirs, (int, float)) and not isinstance(theirs, bool):
        return isinstance(ours, (int, float)) and not isinstance(ours, bool) and ours == theirs
    return bool(ours == theirs) and type(ours) is type(theirs)


@pytest.mark.parametrize("name", PROMOTION)
def test_the_store_reads_as_openclaw_reads_it(name: str) -> None:
    case = load_case(name)
    entries, phase = _stored(case)
    read = normalize_recall_store(entries, now=case.now)
    golden = expected(case, "store-read.json")
    theirs = golden["recall"]["entries"]
    assert [e["key"] for e in read.entries.values()] == [e["key"] for e in theirs]
    for ours, their in zip(read.entries.values(), theirs, strict=True):
        assert _same_numbers(ours, their), their["key"]
    assert len(read.entries) + len(read.dropped) == len(entries)
    assert _same_numbers(list(normalize_phase_signals(phase).values()), golden["phase"]["entries"])


@pytest.mark.parametrize("name", RECORD)
def test_recorded_rows_read_as_openclaw_reads_them(name: str) -> None:
    """The rows OpenClaw's own recorder wrote (in its row order) read back as its reader sees them."""
    case = load_case(name)
    assert case.steps
    rows = expected(case, "record/store.json")["recall"]["entries"]
    last_now = datetime.fromisoformat(case.steps[-1]["now"].replace("Z", "+00:00"))
    read = normalize_recall_store({row["key"]: row for row in rows}, now=last_now)
    assert _same_numbers(list(read.entries.values()), expected(case, "record/read.json")["recall"]["entries"])


@pytest.mark.parametrize("name", PROMOTION)
def test_ranking_matches_openclaws(name: str) -> None:
    case = load_case(name)
    entries, phase = _stored(case)
    ours = rank_entries(entries, phase, _config(case), now=case.now).candidates
    theirs = expected(case, "rank-promote.json")["candidates"]
    assert [c.key for c in ours] == [c["key"] for c in theirs]
    for c, their in zip(ours, theirs, strict=True):
        parts = {"frequency": c.components.frequency, "relevance": c.components.relevance,
                 "diversity": c.components.diversity, "recency": c.components.recency,
                 "consolidation": c.components.consolidation, "conceptual": c.components.conceptual}  # fmt: skip
        for component, value in their["components"].items():
            assert math.isclose(parts[component], value, abs_tol=TOLERANCE), (c.key, component)
        assert math.isclose(c.score, their["score"], abs_tol=TOLERANCE), c.key
        assert math.isclose(c.age_days, their["ageDays"], abs_tol=1e-9), c.key
        assert (c.unique_queries, c.recall_count, c.daily_count, c.grounded_count) == (
            their["uniqueQueries"], their["recallCount"], their["dailyCount"], their["groundedCount"],
        )  # fmt: skip
        assert (list(c.recall_days), list(c.concept_tags)) == (their["recallDays"], their["conceptTags"]), c.key
        assert (c.path, c.start_line, c.end_line, c.snippet) == (
            their["path"], their["startLine"], their["endLine"], their["snippet"],
        )  # fmt: skip
        assert c.promoted_at == their.get("promotedAt") and c.project_key == their.get("projectKey")
        assert c.provenance == their.get("provenance")
