from __future__ import annotations

import json
import multiprocessing
import threading
from datetime import datetime, timedelta

import pytest

from dreaming.memory import Workspace, iter_jsonl
from dreaming.memory.files import InputReport
from dreaming.memory.gaps import _store as store
from dreaming.memory.gaps import (
    classify_gap,
    list_gaps,
    normalize_query,
    record_attempt,
    record_gap,
    select_gaps_for_night,
)
from dreaming.memory.search import SearchHit


def hit(score: float, snippet: str) -> SearchHit:
    return SearchHit(path="memory/2026-04-01.md", start_line=1, end_line=1, score=score, snippet=snippet)


@pytest.mark.parametrize(
    ("raw", "key"),
    [
        ("  How   does Kafka RETENTION work?? ", "how does kafka retention work"),
        ("«kafka»", "kafka"),
        ("C++ tips", "c++ tips"),
        ("...", ""),
    ],
)
def test_normalize_query(raw: str, key: str) -> None:
    assert normalize_query(raw) == key


def test_classification_of_each_type() -> None:
    query = "kafka retention partitions"
    assert classify_gap(query, []) == "no_results"
    assert classify_gap(query, [hit(0.2, "kafka retention partitions")]) == "low_confidence"
    assert classify_gap(query, [hit(0.4, "kafka only")]) == "partial_match"
    assert classify_gap(query, [hit(0.9, "kafka retention")]) is None
    assert classify_gap("what is the kafka retention", [hit(0.9, "kafka retention")]) is None
    assert classify_gap("   ", []) is None


def test_terms_held_only_by_morphology_count_as_held() -> None:
    assert classify_gap("limits", [hit(0.6, "The rate limit is 100 requests per minute")]) is None
    assert classify_gap("rate limits quotas", [hit(0.6, "The rate limit is 100 requests per minute")]) is None
    assert classify_gap("备份", [hit(0.6, "明天检查备份任务。")]) is None
    assert classify_gap("証明書の更新", [hit(0.6, "本番サーバーの証明書を更新した。")]) is None
    assert classify_gap("kafka retention partitions", [hit(0.6, "kafkas only")]) == "partial_match"


def test_low_confidence_boundary_is_inclusive() -> None:
    assert classify_gap("kafka", [hit(0.35, "kafka")]) is None
    assert classify_gap("kafka", [hit(0.3499, "kafka")]) == "low_confidence"


def test_record_aggregates_by_normalized_query(workspace: Workspace, now: datetime) -> None:
    first = record_gap(workspace, "Kafka retention?", "no_results", best_score=0.0, now=now)
    later = now + timedelta(hours=3)
    second = record_gap(workspace, "  kafka   RETENTION ", "partial_match", best_score=0.42, now=later)
    assert first.count == 1
    assert second.key == "kafka retention"
    assert second.query == "Kafka retention?"
    assert (second.count, second.first_seen, second.last_seen) == (2, now, later)
    assert (second.best_score, second.type, second.status) == (0.42, "partial_match", "open")
    data = json.loads(workspace.knowledge_gaps.read_text())
    assert data["version"] == 1
    assert data["gaps"]["kafka retention"]["count"] == 2
    events = [row for _, row in iter_jsonl(workspace.events, InputReport()) if row["type"] == "gap.recorded"]
    assert [e["count"] for e in events] == [1, 2]


def test_a_key_in_a_query_is_never_stored(workspace: Workspace, now: datetime) -> None:
    key = "sk-proj-PLANTEDgapKEY0123456789abcdef"
    gap = record_gap(workspace, f"why does {key} fail", "no_results", best_score=0.0, now=now)
    again = record_gap(
        workspace, "why does sk-proj-OTHERgapKEY9876543210zyxwvu fail", "no_results", best_score=0, now=now
    )
    assert gap.query == "why does [REDACTED] fail"
    assert gap.key == again.key == "why does [redacted] fail"
    assert again.count == 2
    for path in workspace.state_dir.rglob("*"):
        if path.is_file():
            assert b"PLANTED" not in path.read_bytes(), path
            assert b"OTHERgap" not in path.read_bytes(), path


def test_blank_query_is_refused(workspace: Workspace, now: datetime) -> None:
    with pytest.raises(ValueError):
        record_gap(workspace, " ?! ", "no_results", best_score=0.0, now=now)


def test_list_orders_and_filters(workspace: Workspace, now: datetime) -> None:
    record_gap(workspace, "b", "no_results", best_score=0, now=now)
    record_gap(workspace, "a", "no_results", best_score=0, now=now)
    record_gap(workspace, "c", "no_results", best_score=0, now=now + timedelta(minutes=1))
    record_gap(workspace, "a", "no_results", best_score=0, now=now)
    assert [g.key for g in list_gaps(workspace)] == ["a", "c", "b"]
    record_attempt(workspace, "c", outcome="kept", now=now)
    assert [g.key for g in list_gaps(workspace, status="kept")] == ["c"]
    assert [g.key for g in list_gaps(workspace, status="open")] == ["a", "b"]


def test_selection_by_count_then_recency_capped(workspace: Workspace, now: datetime) -> None:
    for _ in range(3):
        record_gap(workspace, "popular", "no_results", best_score=0, now=now - timedelta(days=2))
    record_gap(workspace, "old", "no_results", best_score=0, now=now - timedelta(days=5))
    record_gap(workspace, "recent", "no_results", best_score=0, now=now - timedelta(days=1))
    record_gap(workspace, "done", "no_results", best_score=0, now=now - timedelta(hours=2))
    record_attempt(workspace, "done", outcome="kept", now=now - timedelta(hours=1))
    assert [g.key for g in select_gaps_for_night(workspace, now=now, max_gaps=5)] == ["popular", "recent", "old"]
    assert [g.key for g in select_gaps_for_night(workspace, now=now, max_gaps=2)] == ["popular", "recent"]
    assert select_gaps_for_night(workspace, now=now, max_gaps=0) == []


def test_backoff_one_two_four_nights_then_backlog(workspace: Workspace, now: datetime) -> None:
    record_gap(workspace, "kafka", "no_results", best_score=0, now=now)
    night = now
    for attempt, wait_days in enumerate([1, 2, 4], start=1):
        gap = record_attempt(workspace, "kafka", outcome="discarded" if attempt == 1 else "abstained", now=night)
        assert (gap.attempts, gap.status) == (attempt, "open")
        assert gap.next_attempt_after == night + timedelta(days=wait_days)
        # Waiting the night before its wait is over (a run 30 minutes early is still on time).
        early = night + timedelta(days=wait_days - 1, hours=1)  # (the night itself would select it again: a rerun)
        assert select_gaps_for_night(workspace, now=early, max_gaps=5) == []
        night = night + timedelta(days=wait_days, minutes=-30)
        assert [g.key for g in select_gaps_for_night(workspace, now=night, max_gaps=5)] == ["kafka"]
    gap = record_attempt(workspace, "kafka", outcome="failed", now=night)
    assert (gap.attempts, gap.status, gap.next_attempt_after) == (4, "backlog", None)
    assert select_gaps_for_night(workspace, now=night + timedelta(days=30), max_gaps=5) == []
    assert [g.key for g in list_gaps(workspace, status="backlog")] == ["kafka"]


def test_kept_closes_and_reopens_only_when_asked_again_later(workspace: Workspace, now: datetime) -> None:
    record_gap(workspace, "kafka", "no_results", best_score=0, now=now)
    kept = record_attempt(workspace, "kafka", outcome="kept", now=now)
    assert (kept.status, kept.attempts, kept.last_outcome) == ("kept", 0, "kept")
    same_night = record_gap(workspace, "kafka", "no_results", best_score=0, now=now + timedelta(hours=2))
    assert (same_night.status, same_night.count) == ("kept", 2)
    next_day = record_gap(workspace, "kafka", "no_results", best_score=0, now=now + timedelta(days=1))
    assert (next_day.status, next_day.count) == ("open", 3)


def test_attempt_on_unknown_gap_raises(workspace: Workspace, now: datetime) -> None:
    with pytest.raises(KeyError):
        record_attempt(workspace, "nothing", outcome="kept", now=now)


def test_concurrent_recorders_lose_nothing(workspace: Workspace, now: datetime) -> None:
    barrier = threading.Barrier(8)
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            barrier.wait()
            record_gap(workspace, "Kafka retention", "no_results", best_score=0.0, now=now)
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert [g.count for g in list_gaps(workspace)] == [8]


def test_corrupt_file_is_moved_aside(workspace: Workspace, now: datetime) -> None:
    workspace.state_dir.mkdir(parents=True)
    workspace.knowledge_gaps.write_text("{not json")
    gap = record_gap(workspace, "kafka", "no_results", best_score=0, now=now)
    assert gap.count == 1
    aside = list(workspace.state_dir.glob("knowledge-gaps.json.corrupt-*"))
    assert len(aside) == 1
    assert aside[0].read_text() == "{not json"


def test_invalid_entries_are_skipped_and_valid_ones_kept(workspace: Workspace, now: datetime) -> None:
    record_gap(workspace, "kafka", "no_results", best_score=0, now=now)
    data = json.loads(workspace.knowledge_gaps.read_text())
    data["gaps"]["broken"] = {"query": "broken", "count": "many"}
    workspace.knowledge_gaps.write_text(json.dumps(data))
    assert [g.key for g in list_gaps(workspace)] == ["kafka"]


def test_store_is_bounded_evicting_closed_then_oldest(
    workspace: Workspace, now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store, "MAX_GAPS", 3)
    record_gap(workspace, "oldest open", "no_results", best_score=0, now=now - timedelta(days=9))
    record_gap(workspace, "kept newest", "no_results", best_score=0, now=now)
    record_attempt(workspace, "kept newest", outcome="kept", now=now)
    record_gap(workspace, "open b", "no_results", best_score=0, now=now - timedelta(days=1))
    record_gap(workspace, "open c", "no_results", best_score=0, now=now)
    assert sorted(g.key for g in list_gaps(workspace)) == ["oldest open", "open b", "open c"]
    record_gap(workspace, "open d", "no_results", best_score=0, now=now)
    assert sorted(g.key for g in list_gaps(workspace)) == ["open b", "open c", "open d"]


def test_written_file_round_trips(workspace: Workspace, now: datetime) -> None:
    record_gap(workspace, "kafka", "low_confidence", best_score=0.2, now=now)
    record_attempt(workspace, "kafka", outcome="failed", now=now)
    before = workspace.knowledge_gaps.read_bytes()
    (gap,) = list_gaps(workspace)
    assert gap.to_json() == json.loads(before)["gaps"]["kafka"]
    assert gap.next_attempt_after == now + timedelta(days=1)


def _record_twice(root: str, now_iso: str) -> None:
    ws = Workspace.at(root)
    for _ in range(2):
        record_gap(ws, "kafka retention", "no_results", best_score=0.0, now=datetime.fromisoformat(now_iso))


@pytest.mark.slow
def test_concurrent_processes_lose_nothing(workspace: Workspace, now: datetime) -> None:
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_record_twice, args=(str(workspace.root), now.isoformat())) for _ in range(4)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(60)
    assert [proc.exitcode for proc in procs] == [0, 0, 0, 0]
    assert [g.count for g in list_gaps(workspace)] == [8]


def test_a_night_that_runs_again_selects_the_gaps_it_already_attempted(workspace: Workspace, now: datetime) -> None:
    for query in ("alpha", "bravo", "charlie"):
        record_gap(workspace, query, "no_results", best_score=0, now=now - timedelta(days=1))
    first = [g.key for g in select_gaps_for_night(workspace, now=now, max_gaps=2)]
    record_attempt(workspace, first[0], outcome="kept", now=now)  # then the night failed before writing its finding
    record_attempt(workspace, first[1], outcome="discarded", now=now)
    assert [g.key for g in select_gaps_for_night(workspace, now=now, max_gaps=2)] == first
    assert first[0] not in [g.key for g in select_gaps_for_night(workspace, now=now + timedelta(days=1), max_gaps=2)]
