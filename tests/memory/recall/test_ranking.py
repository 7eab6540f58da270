"""Ranking gates and components (B1.2 ranking cases), with numbers computed by hand."""

from __future__ import annotations

import json
import math
from datetime import timedelta
from typing import Any

import pytest

from dreaming.config import DeepConfig, DreamingConfig
from dreaming.memory import Workspace
from dreaming.memory.recall import (
    GroundedItem,
    deep_sleep_recall,
    promote_short_term_recalls,
    rank_short_term_candidates,
    read_light_staged_keys,
    record_grounded_short_term_candidates,
    record_phase_signals,
    record_rem_considered,
    remove_grounded_short_term_candidates,
)
from dreaming.memory.recall._ranking import rank_entries
from dreaming.memory.recall._record import claim_entry_key, claim_hash

from .helpers import ZERO, at, entries, note, rec

PATH = "memory/2026-04-01.md"
GLACIER = "Move backups to S3 Glacier."


def test_one_recall_does_not_pass_default_gates(workspace: Workspace) -> None:
    rec(workspace, "q", PATH, 1, 1, 0.96, GLACIER, at("2026-04-01T10:00:00"))
    result = rank_short_term_candidates(workspace, DeepConfig(), now=at("2026-04-01T10:05:00"))
    assert result.candidates == () and result.skipped[0][1] == "min_recall_count"


def test_negative_overrides_fall_back_to_defaults(workspace: Workspace) -> None:
    rec(workspace, "q", PATH, 1, 1, 0.96, GLACIER, at("2026-04-01T10:00:00"))
    config = DreamingConfig.from_mapping(
        {"deep": {"min_score": -1, "min_recall_count": -1, "min_unique_queries": -1}}
    ).deep
    assert rank_short_term_candidates(workspace, config, now=at("2026-04-01T10:05:00")).candidates == ()


def test_max_age_gate(workspace: Workspace) -> None:
    rec(workspace, "q", PATH, 1, 1, 0.9, GLACIER, at("2026-04-01T10:00:00"))
    config = DeepConfig(min_score=0, min_recall_count=0, min_unique_queries=0, max_age_days=7)
    result = rank_short_term_candidates(workspace, config, now=at("2026-04-15T10:00:00"))
    assert result.candidates == () and result.skipped == ((f"memory:{PATH}:1:1", "max_age_days"),)


@pytest.mark.parametrize(("half_life", "expected"), [(14.0, 0.5), (7.0, 0.25), (28.0, 0.707)])
def test_recency_half_life(workspace: Workspace, half_life: float, expected: float) -> None:
    rec(workspace, "q", PATH, 1, 1, 0.9, GLACIER, at("2026-04-01T10:00:00"))
    config = DeepConfig(min_score=0, min_recall_count=0, min_unique_queries=0, recency_half_life_days=half_life)
    (c,) = rank_short_term_candidates(workspace, config, now=at("2026-04-15T10:00:00")).candidates
    assert round(c.components.recency, 3) == expected


def _daily_day(ws: Workspace, day: str) -> None:
    now = at(f"{day}T10:00:00")
    rec(ws, f"__dreaming_daily__:{day}", PATH, 1, 2, 0.62, GLACIER, now, signal_type="daily", day_bucket=day)
    key = claim_entry_key(claim_hash(GLACIER))  # 2026.9 files an unrecalled daily claim under its claim key
    record_phase_signals(ws, phase="light", keys=[key], now=now)
    record_phase_signals(ws, phase="rem", keys=[key], now=now)


def test_daily_only_signals_never_clear_the_default_gate(workspace: Workspace) -> None:
    """2026.9: ingestion queries never enter userQueryHashes, so a daily-only entry has no distinct user query."""
    for day in ("2026-04-01", "2026-04-02", "2026-04-03"):
        _daily_day(workspace, day)
    result = rank_short_term_candidates(workspace, DeepConfig(), now=at("2026-04-03T10:01:00"))
    # A daily signal that no recall owns is filed under its claim key (2026.9, reference §6).
    claim_key = claim_entry_key(claim_hash(GLACIER))
    assert result.candidates == () and result.skipped == ((claim_key, "min_unique_queries"),)
    open_gate = DeepConfig(min_unique_queries=0, min_score=0)
    (c,) = rank_short_term_candidates(workspace, open_gate, now=at("2026-04-03T10:01:00")).candidates
    assert (c.recall_count, c.daily_count, c.unique_queries) == (0, 3, 0)
    assert c.recall_days == ("2026-04-01", "2026-04-02", "2026-04-03")
    # 0.24*ln4/ln11 + 0.3*0.62 + 0.15*0 + 0.15*~1 + 0.10*0.504 + 0.06*4/6 = 0.139+0.186+0.150+0.050+0.040 = 0.565,
    # plus the boost (0.06+0.09)*ln4/ln7 = 0.107
    parts = c.components
    assert (round(parts.relevance, 3), round(parts.frequency, 3), round(parts.diversity, 3)) == (0.62, 0.578, 0.0)
    assert (round(parts.recency, 3), round(parts.consolidation, 3), round(parts.conceptual, 3)) == (1.0, 0.504, 0.667)
    assert round(parts.phase_boost, 3) == 0.107
    assert round(c.score, 3) == 0.672 and c.score < 0.75


def test_daily_only_without_phase_boost_stays_below_gate(workspace: Workspace) -> None:
    for day in ("2026-04-01", "2026-04-02", "2026-04-03"):
        rec(workspace, f"__dreaming_daily__:{day}", PATH, 1, 2, 0.62, GLACIER, at(f"{day}T10:00:00"),
            signal_type="daily", day_bucket=day)  # fmt: skip
    result = rank_short_term_candidates(workspace, DeepConfig(min_unique_queries=0), now=at("2026-04-03T10:01:00"))
    assert result.skipped == ((claim_entry_key(claim_hash(GLACIER)), "min_score"),)


def test_spaced_recalls_consolidation(workspace: Workspace) -> None:
    rec(workspace, "a", PATH, 1, 1, 0.9, GLACIER, at("2026-04-01T10:00:00"))
    rec(workspace, "b", PATH, 1, 1, 0.9, GLACIER, at("2026-04-04T10:00:00"))
    (c,) = rank_short_term_candidates(workspace, ZERO, now=at("2026-04-04T10:00:00")).candidates
    assert c.recall_days == ("2026-04-01", "2026-04-04")
    # 0.55 * ln2/ln5 + 0.45 * 3/7 = 0.2369 + 0.1929
    assert round(c.components.consolidation, 3) == 0.430


def test_phase_boost_reorders_ties(workspace: Workspace) -> None:
    now = at("2026-04-03T10:00:00")
    for day in ("2026-04-01", "2026-04-02"):
        for q in ("alpha", "beta"):
            rec(workspace, q, f"memory/{day}.md", 1, 1, 0.75, "Same shaped fact.", now)
    before = rank_short_term_candidates(workspace, ZERO, now=now).candidates
    assert [c.path for c in before] == ["memory/2026-04-01.md", "memory/2026-04-02.md"]
    key = "memory:memory/2026-04-02.md:1:1"
    record_phase_signals(workspace, phase="light", keys=[key], now=now)
    record_phase_signals(workspace, phase="rem", keys=[key], now=now)
    after = rank_short_term_candidates(workspace, ZERO, now=now).candidates
    assert after[0].path == "memory/2026-04-02.md"
    # (0.06 + 0.09) * ln2/ln7
    assert round(after[0].components.phase_boost, 3) == 0.053
    signals = json.loads(workspace.phase_signals.read_text())["entries"][key]
    assert (signals["lightHits"], signals["remHits"]) == (1, 1)


def test_fresh_rem_signal_beats_stale(workspace: Workspace) -> None:
    now = at("2026-04-05T10:00:00")
    for day in ("2026-04-01", "2026-04-02"):
        rec(workspace, "q", f"memory/{day}.md", 1, 1, 0.8, "Same shaped fact.", now)
    record_phase_signals(
        workspace, phase="rem", keys=["memory:memory/2026-04-01.md:1:1"], now=at("2026-02-01T10:00:00")
    )
    record_phase_signals(workspace, phase="rem", keys=["memory:memory/2026-04-02.md:1:1"], now=now)
    ranked = rank_short_term_candidates(workspace, ZERO, now=now).candidates
    assert ranked[0].path == "memory/2026-04-02.md"
    # 63 days = 4.5 half-lives: 0.09 * 0.356 * 2**-4.5 = 0.001
    assert (round(ranked[0].components.phase_boost, 3), round(ranked[1].components.phase_boost, 3)) == (0.032, 0.001)


def test_light_staged_keys_until_rem_considers_them(workspace: Workspace) -> None:
    now = at("2026-04-05T10:00:00")
    for key, line in (("a", 1), ("b", 2)):
        rec(workspace, "q", PATH, line, line, 0.9, f"Fact {key}.", now)
    a, b = f"memory:{PATH}:1:1", f"memory:{PATH}:2:2"
    record_phase_signals(workspace, phase="light", keys=[a, b, "not-recalled"], now=now)
    record_phase_signals(workspace, phase="rem", keys=[b], now=now + timedelta(minutes=1))
    # Only keys the recall store holds get phase signals (2026.9's updatePhaseSignals).
    assert read_light_staged_keys(workspace) == {a}
    record_rem_considered(workspace, keys=[a], now=now + timedelta(minutes=2))
    assert read_light_staged_keys(workspace) == set()


def test_grounded_evidence_is_ranked_and_applied(workspace: Workspace) -> None:
    text = 'Always use "Happy Together" calendar for flights and reservations.'
    note(workspace, PATH, [text])
    now = at("2026-04-01T10:00:00")
    record_grounded_short_term_candidates(
        workspace,
        [
            GroundedItem(path=PATH, start_line=1, end_line=1, snippet=text, score=0.92, query="x:lasting-update", signal_count=2),
            GroundedItem(path=PATH, start_line=1, end_line=1, snippet=text, score=0.82, query="x:candidate"),
        ],
        now=now,
    )  # fmt: skip
    # Grounded signals add no user query: the default gate of 3 distinct user queries stops the entry.
    skipped = rank_short_term_candidates(workspace, DeepConfig(), now=now)
    assert skipped.candidates == () and skipped.skipped[0][1] == "min_unique_queries"
    config = DreamingConfig(deep=DeepConfig(min_unique_queries=0, min_score=0))
    (c,) = rank_short_term_candidates(workspace, config.deep, now=now).candidates
    assert (c.grounded_count, c.unique_queries) == (3, 0)
    assert round(c.avg_score, 3) == 0.887  # (2*0.92 + 0.82) / 3
    summary = deep_sleep_recall(workspace, config, now=now)
    assert len(summary.applied) == 1 and text in workspace.memory_md.read_text()
    assert summary.real_recalls == 3 and summary.ingestion_signals == 0


def test_remove_grounded_only_entries(workspace: Workspace) -> None:
    now = at("2026-04-01T10:00:00")
    items = [
        GroundedItem(path=PATH, start_line=1, end_line=1, snippet="Grounded only.", score=0.9, query="g", signal_count=2),
        GroundedItem(path=PATH, start_line=2, end_line=2, snippet="Grounded and recalled.", score=0.9, query="g",
                     signal_count=2),
    ]  # fmt: skip
    record_grounded_short_term_candidates(workspace, items, now=now)
    rec(workspace, "live", PATH, 2, 2, 0.8, "Grounded and recalled.", now)
    keys = [e["key"] for e in entries(workspace)]
    record_phase_signals(workspace, phase="light", keys=keys, now=now)
    assert remove_grounded_short_term_candidates(workspace, now=now) == 1
    (left,) = entries(workspace)
    assert (left["groundedCount"], left["recallCount"]) == (2, 1)
    # As OpenClaw's removeGroundedShortTermCandidates: the signals of keys the store no longer holds are pruned.
    assert list(json.loads(workspace.phase_signals.read_text())["entries"]) == [left["key"]]


def test_contaminated_entry_already_in_store_is_not_ranked(workspace: Workspace) -> None:
    rec(workspace, "q", PATH, 1, 1, 0.9, GLACIER, at("2026-04-01T10:00:00"))
    doc = json.loads(workspace.recall_store.read_text())
    (entry,) = doc["entries"].values()
    entry["snippet"] = (
        "Reflections: Theme: assistant. confidence: 1.00 evidence: memory/2026-04-01.md:1-1 recalls: 4 status: staged"
    )
    workspace.recall_store.write_text(json.dumps(doc))
    result = rank_short_term_candidates(workspace, ZERO, now=at("2026-04-01T10:00:00"))
    assert result.candidates == () and result.skipped[0][1] == "contaminated"


def test_sort_and_limit(workspace: Workspace) -> None:
    now = at("2026-04-03T10:00:00")
    for i, score in enumerate([0.5, 0.9, 0.7]):
        rec(workspace, "q", f"memory/2026-04-0{i + 1}.md", 1, 1, score, f"Fact number {i}.", now)
    config = DeepConfig(min_score=0, min_recall_count=0, min_unique_queries=0, limit=2)
    result = rank_short_term_candidates(workspace, config, now=now)
    assert [c.path for c in result.candidates] == ["memory/2026-04-02.md", "memory/2026-04-03.md"]
    assert ("memory:memory/2026-04-01.md:1:1", "limit") in result.skipped


def test_perfect_entry_scores_one(workspace: Workspace) -> None:
    snippet = "Glacier router vlan backup failover omada"
    for i in range(10):
        day = f"2026-04-{1 + i:02d}"
        rec(workspace, f"q{i}", PATH, 1, 1, 1.0, snippet, at(f"{day}T10:00:00"))
    (c,) = rank_short_term_candidates(workspace, ZERO, now=at("2026-04-10T10:00:00")).candidates
    assert round(c.score, 3) == 1.0 and c.components.phase_boost == 0


def test_first_failing_gate_in_openclaw_order_is_reported() -> None:
    """Each entry fails every gate from its own onwards: the earliest one is the one reported."""
    base = {"path": PATH, "startLine": 1, "endLine": 1, "source": "memory", "snippet": GLACIER, "recallCount": 5,
            "queryHashes": ["a", "b"], "userQueryHashes": ["a", "b"], "totalScore": 4.5,
            "lastRecalledAt": "2026-04-14T00:00:00.000Z"}  # fmt: skip
    late = {"recallCount": 0, "userQueryHashes": [], "recallDays": [], "lastRecalledAt": "2025-01-01T00:00:00.000Z"}
    promoted = {"promotedAt": "2026-04-02T00:00:00.000Z"}
    untrusted = {"provenance": {"originClass": "untrusted", "sessionKind": "cron", "observedAt": 0}}
    by_gate: dict[str, dict[str, Any]] = {
        "path": {**base, **late, **promoted, **untrusted, "path": "MEMORY.md"},
        "origin": {**base, **late, **promoted, **untrusted},
        "promoted": {**base, **late, **promoted},
        "no_signals": {**base, **late},
        "min_recall_count": {**base, **late, "dailyCount": 1},
        "min_unique_queries": {**base, "userQueryHashes": ["a"], "lastRecalledAt": late["lastRecalledAt"]},
        "max_age_days": {**base, "totalScore": 0.0, "lastRecalledAt": late["lastRecalledAt"]},
        "min_score": {**base, "totalScore": 0.0},
        "passes": base,
    }
    config = DeepConfig(min_recall_count=2, min_unique_queries=2, max_age_days=30, min_score=0.5)
    result = rank_entries(by_gate, {}, config, now=at("2026-04-15T00:00:00"))
    assert [c.key for c in result.candidates] == ["passes"]
    assert list(result.skipped) == [(gate, gate) for gate in list(by_gate)[:-1]]


# --- 2026.9 facts (openclaw-2026.9.md §5) ---------------------------------------------------------------------------


def _stored(path: str = PATH, line: int = 1, **fields: Any) -> dict[str, Any]:
    base = {"path": path, "startLine": line, "endLine": line, "source": "memory", "snippet": GLACIER,
            "recallCount": 3, "totalScore": 2.4, "maxScore": 0.8, "queryHashes": ["q1", "q2", "q3"],
            "recallDays": ["2026-04-01"], "conceptTags": ["glacier"], "lastRecalledAt": "2026-04-01T10:00:00.000Z"}  # fmt: skip
    return {**base, **fields}


NOW_RANK = at("2026-04-02T10:00:00")


@pytest.mark.parametrize(
    ("fields", "unique", "diversity"),
    [
        ({}, 3, 0.6),  # no userQueryHashes, recalls only: the query hashes were user queries
        ({"dailyCount": 1}, 0, 0.0),  # ingestion mixed in: no user query is known
        ({"userQueryHashes": []}, 0, 0.0),  # a stored [] is kept
        ({"userQueryHashes": ["u1"], "recallDays": [f"2026-03-{d:02d}" for d in range(20, 30)]}, 1, 0.2),  # no days
    ],
)
def test_unique_queries_are_distinct_user_queries(fields: dict[str, Any], unique: int, diversity: float) -> None:
    result = rank_entries({"k": _stored(**fields)}, {}, ZERO, now=NOW_RANK)
    (c,) = result.candidates
    assert c.unique_queries == unique and c.components.diversity == pytest.approx(diversity)


@pytest.mark.parametrize(("origin", "gate"), [("untrusted", "origin"), ("system", "origin"), ("bogus", "origin")])
def test_untrusted_and_system_origins_are_skipped_before_the_gates(origin: str, gate: str) -> None:
    stored = {"k": _stored(recallCount=0, provenance={"originClass": origin})}  # would fail no_signals next
    assert rank_entries(stored, {}, ZERO, now=NOW_RANK).skipped == (("k", gate),)


@pytest.mark.parametrize("origin", ["owner", "agent", None])
def test_owner_agent_and_unrecorded_origins_rank(origin: str | None) -> None:
    fields: dict[str, Any] = {"provenance": {"originClass": origin, "sessionKind": "interactive"}} if origin else {}
    assert len(rank_entries({"k": _stored(**fields)}, {}, ZERO, now=NOW_RANK).candidates) == 1


def test_duplicate_recall_days_count_in_n_but_not_in_span() -> None:
    days: dict[str, Any] = {"recallDays": ["2026-04-01", "2026-04-01", "2026-04-02"]}
    (compat,) = rank_entries({"k": _stored(**days)}, {}, ZERO, now=NOW_RANK).candidates
    # n = 3 with the duplicate: 0.55 * ln3/ln5 + 0.45 * 1/7
    assert compat.components.consolidation == pytest.approx(0.55 * math.log(3) / math.log(5) + 0.45 / 7)
    assert compat.recall_days == ("2026-04-01", "2026-04-01", "2026-04-02")
    (fixed,) = rank_entries({"k": _stored(**days)}, {}, ZERO, now=NOW_RANK, openclaw_compat=False).candidates
    assert fixed.components.consolidation == pytest.approx(0.55 * math.log(2) / math.log(5) + 0.45 / 7)


def test_ties_sort_by_recalls_then_path_by_locale_compare_then_store_order() -> None:
    stored = {
        "upper": _stored("memory/2026-04-01-B.md"),
        "lower": _stored("memory/2026-04-01-a.md"),
        "more-recalls": _stored("memory/2026-04-01-z.md", recallCount=4, totalScore=3.2),
        "same-path-1": _stored("memory/2026-04-01-c.md", line=7),
        "same-path-2": _stored("memory/2026-04-01-c.md", line=3),
    }
    same = rank_entries(stored, {}, ZERO, now=NOW_RANK)
    scores = {c.key: c.score for c in same.candidates}
    assert scores["upper"] == scores["lower"] == scores["same-path-1"] == scores["same-path-2"]
    tied = [c.key for c in same.candidates if c.score == scores["upper"]]
    # localeCompare puts "a" before "B" (code points would not); equal paths keep store order.
    assert tied == ["lower", "upper", "same-path-1", "same-path-2"]


def test_recall_count_breaks_a_score_tie() -> None:
    users: dict[str, Any] = {"userQueryHashes": ["q1", "q2", "q3"]}
    stored = {"fewer": _stored(line=2, recallCount=2, dailyCount=1, **users), "more": _stored(**users)}
    ranked = rank_entries(stored, {}, ZERO, now=NOW_RANK).candidates
    assert ranked[0].score == ranked[1].score and [c.key for c in ranked] == ["more", "fewer"]


@pytest.mark.parametrize(
    ("config", "passes"),
    [
        (DeepConfig(min_score=1.5, min_recall_count=0, min_unique_queries=0), False),  # min_score out of [0,1]: 0.75
        (DeepConfig(min_score=0, min_recall_count=-1, min_unique_queries=0), True),  # -1 signals: back to 3
        (DeepConfig(min_score=0, min_recall_count=4, min_unique_queries=0), False),
        (DeepConfig(min_score=0, min_recall_count=0, min_unique_queries=-2), True),  # back to 3 user queries
        (DeepConfig(min_score=0, min_recall_count=0, min_unique_queries=4), False),
    ],
)
def test_invalid_thresholds_fall_back_to_openclaws_defaults(config: DeepConfig, passes: bool) -> None:
    assert bool(rank_entries({"k": _stored()}, {}, config, now=NOW_RANK).candidates) is passes


def test_max_age_is_floored_and_a_negative_one_is_off() -> None:
    stored = {"k": _stored(lastRecalledAt="2026-03-25T09:00:00.000Z")}  # 8.04 days before NOW_RANK
    assert rank_entries(stored, {}, DeepConfig(min_score=0, max_age_days=8.9), now=NOW_RANK).candidates == ()
    assert rank_entries(stored, {}, DeepConfig(min_score=0, max_age_days=-1), now=NOW_RANK).candidates != ()


def test_an_unparsable_last_recall_is_age_zero() -> None:
    (c,) = rank_entries({"k": _stored(lastRecalledAt="not-a-date")}, {}, ZERO, now=NOW_RANK).candidates
    assert (c.age_days, c.components.recency) == (0.0, 1.0)


def test_a_half_life_that_is_not_positive_falls_back_to_14_days() -> None:
    stored = {"k": _stored(lastRecalledAt="2026-03-19T10:00:00.000Z")}  # 14 days before NOW_RANK
    (c,) = rank_entries(stored, {}, DeepConfig(min_score=0, recency_half_life_days=0), now=NOW_RANK).candidates
    assert c.components.recency == pytest.approx(0.5)


def test_ranking_sees_the_512_entries_a_read_keeps() -> None:
    stored = {
        f"k{i:03d}": _stored(line=i + 1, lastRecalledAt=f"2026-04-01T{i % 24:02d}:00:00.000Z") for i in range(515)
    }
    stored["k000"]["lastRecalledAt"] = "2026-03-01T00:00:00.000Z"  # the oldest three go
    stored["k001"]["lastRecalledAt"] = "2026-03-01T00:00:00.000Z"
    stored["k002"]["lastRecalledAt"] = "2026-03-01T00:00:00.000Z"
    result = rank_entries(stored, {}, DeepConfig(min_score=0, limit=1000), now=NOW_RANK)
    assert len(result.candidates) == 512
    assert result.skipped == (("k000", "over_cap"), ("k001", "over_cap"), ("k002", "over_cap"))


def test_promote_ranks_a_duplicate_recall_day_once_without_compat(workspace: Workspace) -> None:
    """``dreaming promote`` ranks with [recall] openclaw_compat: OpenClaw counts a stored duplicate day in n."""
    note(workspace, PATH, [GLACIER])
    for query in ("a", "b"):
        rec(workspace, query, PATH, 1, 1, 0.9, GLACIER, at("2026-04-01T10:00:00"))
    doc = json.loads(workspace.recall_store.read_text())
    (entry,) = doc["entries"].values()
    entry["recallDays"] = ["2026-04-01", "2026-04-01", "2026-04-03"]  # a hand merge: one day twice
    workspace.recall_store.write_text(json.dumps(doc))
    consolidation = {}
    for compat in (True, False):
        config = DreamingConfig.from_mapping({"recall": {"openclaw_compat": compat}})
        summary = promote_short_term_recalls(workspace, config, now=at("2026-04-03T10:00:00"))
        (c,) = summary.ranking.candidates
        assert summary.applied == ()  # two recalls: held at apply, so the next run ranks it again
        consolidation[compat] = round(c.components.consolidation, 3)
    # n = 3 (ln 3 / ln 5) against n = 2 (ln 2 / ln 5), both over a 2-day span.
    assert consolidation == {True: round(0.55 * math.log(3) / math.log(5) + 0.45 * 2 / 7, 3),
                             False: round(0.55 * math.log(2) / math.log(5) + 0.45 * 2 / 7, 3)}  # fmt: skip
