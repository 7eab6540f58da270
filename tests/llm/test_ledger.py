"""PR #65589's breaker (c1-c12) and persistence cases (reference B1.3), ported to the sliding-window ledger.

Differences on purpose are named in each test: c6/c7 (no default session cost), c9/c11 (sliding, not tumbling),
"not json" and version 99 (moved aside and fail closed instead of silently starting at zero).
"""

from __future__ import annotations

import json
import logging
import math
import os
import threading
import time
from dataclasses import FrozenInstanceError, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from dreaming.config import BudgetConfig
from dreaming.llm.budget import Allowed, Skipped
from dreaming.llm.ledger import LEDGER_VERSION, BudgetLedger, LedgerEntry
from dreaming.memory import Workspace

T0 = datetime(2026, 4, 15, 3, 0, tzinfo=UTC)


def entry(cost: float, at: datetime = T0, **fields: object) -> LedgerEntry:
    return LedgerEntry(at=at, model="gpt-4.1-mini", node="verify", cost_usd=cost, **fields)  # type: ignore[arg-type]


def ledger(ws: Workspace, *, max_cost: float = 1.0, window_minutes: float = 60.0, now: datetime = T0) -> BudgetLedger:
    return BudgetLedger.load(
        ws.budget_ledger, BudgetConfig(max_cost_usd=max_cost, window_minutes=window_minutes), now=now
    )


def record(led: BudgetLedger, *costs: float, at: datetime = T0) -> None:
    for cost in costs:
        led.record(entry(cost, at), now=at)


# Breaker


def test_c1_under_budget(workspace: Workspace) -> None:
    led = ledger(workspace, max_cost=1.0)
    record(led, 0.04)
    assert not led.is_tripped(T0)


def test_c2_over_budget_after_two_calls_logs(workspace: Workspace, caplog: pytest.LogCaptureFixture) -> None:
    led = ledger(workspace, max_cost=0.10)
    with caplog.at_level(logging.WARNING):
        record(led, 0.05, 0.06)
    assert led.is_tripped(T0)
    assert "dreaming budget exceeded" in caplog.text


def test_c3_latched(workspace: Workspace) -> None:
    led = ledger(workspace, max_cost=0.10)
    record(led, 0.11)
    assert led.is_tripped(T0) and led.is_tripped(T0)
    assert led.tripped_reason is not None


def test_c4_exactly_at_cap_trips(workspace: Workspace) -> None:
    led = ledger(workspace, max_cost=0.10)
    record(led, 0.10)
    assert led.is_tripped(T0)


def test_c5_just_under_cap(workspace: Workspace) -> None:
    led = ledger(workspace, max_cost=0.10)
    record(led, 0.099)
    assert not led.is_tripped(T0)


def test_c6_c7_invalid_costs_rejected_not_defaulted(workspace: Workspace) -> None:
    # DIFFERENT on purpose: upstream counted NaN/-1/Inf (and a missing cost) as a default 0.045 per session. Here the
    # gateway prices the API-reported usage, or its own estimate when none is reported (see test_gateway), so a
    # non-finite or negative cost is a bug: it is refused and the ledger is unchanged. NaN would otherwise make
    # every comparison false and silently unlock spending.
    led = ledger(workspace, max_cost=0.05)
    for bad in (math.nan, -1.0, math.inf):
        with pytest.raises(ValueError, match="cost_usd"):
            led.record(entry(bad), now=T0)
    assert led.entries == () and led.spend_in_window(T0) == 0.0
    assert not workspace.budget_ledger.exists()


def test_c8_each_call_is_an_entry(workspace: Workspace) -> None:
    led = ledger(workspace)
    record(led, 0.01, 0.02, 0.03)
    assert len(led.entries_in_window(T0)) == 3
    assert led.spend_in_window(T0) == pytest.approx(0.06)


def test_c9_new_run_after_entry_aged_out(workspace: Workspace) -> None:
    # Same outcome as upstream, for a different reason: the 0.11 entry itself leaves the sliding window.
    window = 1.0  # 60 s
    record(ledger(workspace, max_cost=0.10, window_minutes=window), 0.11)
    assert ledger(workspace, max_cost=0.10, window_minutes=window, now=T0 + timedelta(seconds=30)).is_tripped(
        T0 + timedelta(seconds=30)
    )
    later = T0 + timedelta(seconds=61)
    assert not ledger(workspace, max_cost=0.10, window_minutes=window, now=later).is_tripped(later)


def test_c9_next_run_starts_tripped_while_window_spend_is_at_cap(workspace: Workspace) -> None:
    record(ledger(workspace, max_cost=0.10), 0.10)
    restart = T0 + timedelta(minutes=59)
    assert ledger(workspace, max_cost=0.10, now=restart).is_tripped(restart)


def test_c10_latch_survives_window_expiry_within_a_run(workspace: Workspace) -> None:
    led = ledger(workspace, max_cost=0.10, window_minutes=1.0)
    record(led, 0.11)
    assert led.is_tripped(T0)
    assert led.spend_in_window(T0 + timedelta(seconds=120)) == 0.0
    assert led.is_tripped(T0 + timedelta(seconds=120))


def test_c11_entries_age_out_individually(workspace: Workspace, caplog: pytest.LogCaptureFixture) -> None:
    # DIFFERENT on purpose: upstream's window was tumbling; at expiry the whole sum reset to 0. Here each entry ages
    # out on its own, 60 s after it was recorded.
    led = ledger(workspace, max_cost=0.10, window_minutes=1.0)
    record(led, 0.08)
    assert led.spend_in_window(T0 + timedelta(seconds=30)) == pytest.approx(0.08)
    record(led, 0.01, at=T0 + timedelta(seconds=50))
    assert led.spend_in_window(T0 + timedelta(seconds=61)) == pytest.approx(0.01)  # upstream: 0
    with caplog.at_level(logging.INFO):
        record(led, 0.001, at=T0 + timedelta(seconds=61))  # a write drops the aged entry and says so
    assert "aged out" in caplog.text
    assert [e.cost_usd for e in led.entries] == [0.01, 0.001]
    assert not led.is_tripped(T0 + timedelta(seconds=61))


def test_c11_tumbling_window_loophole_is_closed(workspace: Workspace) -> None:
    # The reviewers' finding: with a tumbling window, 0.08 just before the reset plus 0.08 just after spends 0.16 in
    # two seconds against a 0.10 cap. The sliding window trips.
    led = ledger(workspace, max_cost=0.10, window_minutes=1.0)
    record(led, 0.08, at=T0 + timedelta(seconds=59))
    record(led, 0.08, at=T0 + timedelta(seconds=61))
    assert led.is_tripped(T0 + timedelta(seconds=61))


def test_c12_entries_are_immutable_copies(workspace: Workspace) -> None:
    led = ledger(workspace)
    record(led, 0.01)
    entries = led.entries
    assert isinstance(entries, tuple)
    with pytest.raises(FrozenInstanceError):
        entries[0].cost_usd = 99.0  # type: ignore[misc]
    assert led.spend_in_window(T0) == pytest.approx(0.01)


def test_zero_cap_is_always_tripped(workspace: Workspace) -> None:
    assert ledger(workspace, max_cost=0.0).is_tripped(T0)


# Persistence


def test_round_trip(workspace: Workspace) -> None:
    record(ledger(workspace), 0.25, 0.30)
    again = ledger(workspace)
    assert again.spend_in_window(T0) == pytest.approx(0.55)
    assert len(again.entries) == 2
    data = json.loads(workspace.budget_ledger.read_text())
    assert data["version"] == LEDGER_VERSION == 3
    assert set(data["entries"][0]) == {
        "id", "reserved", "at", "model", "node", "gap", "input_tokens", "output_tokens", "cached_tokens", "cost_usd",
        "estimated", "cache_hit",
    }  # fmt: skip


def test_missing_file_starts_empty_and_closed(workspace: Workspace) -> None:
    led = ledger(workspace)
    assert led.entries == () and not led.is_tripped(T0) and led.problem is None
    assert not workspace.budget_ledger.exists()


@pytest.mark.parametrize(
    "content",
    ["not json", json.dumps({"version": 99, "entries": []}), "[1, 2]", json.dumps({"version": 2, "entries": "x"})],
    ids=["not-json", "version-99", "not-object", "bad-entries"],
)
def test_unusable_file_moved_aside_and_fails_closed(workspace: Workspace, content: str) -> None:
    # DIFFERENT on purpose: upstream ignored a corrupt or unknown-version file and started at zero, which unlocks
    # spending whenever the record is lost. Here it is moved aside, kept for inspection, and the run starts tripped.
    workspace.state_dir.mkdir(parents=True)
    workspace.budget_ledger.write_text(content)
    led = ledger(workspace)
    assert led.is_tripped(T0)
    assert led.problem and led.tripped_reason and "failing closed" in led.tripped_reason
    assert led.moved_aside is not None and led.moved_aside.read_text() == content
    assert not workspace.budget_ledger.exists()
    # The next run starts from an empty, usable ledger.
    assert not ledger(workspace).is_tripped(T0)


def test_entry_with_bad_cost_fails_closed(workspace: Workspace) -> None:
    workspace.state_dir.mkdir(parents=True)
    row = entry(0.01).to_json() | {"cost_usd": "NaN"}
    workspace.budget_ledger.write_text(json.dumps({"version": 2, "entries": [row]}))
    assert ledger(workspace).is_tripped(T0)


def test_restart_accumulates_and_trips(workspace: Workspace) -> None:
    record(ledger(workspace, max_cost=1.0), 0.40, 0.35)
    led = ledger(workspace, max_cost=1.0)
    assert led.spend_in_window(T0) == pytest.approx(0.75)
    record(led, 0.30)
    assert led.is_tripped(T0)


def test_save_creates_state_dir(workspace: Workspace) -> None:
    assert not workspace.state_dir.exists()
    record(ledger(workspace), 0.01)
    assert workspace.budget_ledger.is_file()


def test_write_is_atomic(workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    record(ledger(workspace), 0.01)
    before = workspace.budget_ledger.read_bytes()

    def broken_replace(src: object, dst: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        record(ledger(workspace), 0.02)
    assert workspace.budget_ledger.read_bytes() == before
    assert [p.name for p in workspace.state_dir.iterdir()] == [workspace.budget_ledger.name]


def test_old_entries_dropped_on_write(workspace: Workspace) -> None:
    led = ledger(workspace, window_minutes=60)
    record(led, 0.5, at=T0 - timedelta(hours=2))
    record(led, 0.1)
    stored = json.loads(workspace.budget_ledger.read_text())["entries"]
    assert [row["cost_usd"] for row in stored] == [0.1]


# Migration from PR #65589's version 1


def write_v1(path: Path, total: float, mtime: datetime) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"version": 1, "windowStartMs": 1_000_000, "accumulatedCostUsd": total, "sessionsSpawned": 9}
    path.write_text(json.dumps(payload))
    os.utime(path, (mtime.timestamp(), mtime.timestamp()))


def test_v1_migrated_as_one_entry_at_file_time(workspace: Workspace) -> None:
    write_v1(workspace.budget_ledger, 0.75, T0 - timedelta(minutes=10))
    led = ledger(workspace, max_cost=1.0)
    (migrated,) = led.entries
    assert migrated.node == "migrated-v1" and migrated.estimated and migrated.cost_usd == 0.75
    assert migrated.at == T0 - timedelta(minutes=10)
    assert led.spend_in_window(T0) == pytest.approx(0.75)
    assert not led.is_tripped(T0)
    assert led.spend_in_window(T0 + timedelta(minutes=51)) == 0.0  # ages out like any entry
    record(led, 0.01)
    assert json.loads(workspace.budget_ledger.read_text())["version"] == 3


def test_v1_over_cap_starts_tripped(workspace: Workspace) -> None:
    write_v1(workspace.budget_ledger, 4.35, T0 - timedelta(minutes=5))
    assert ledger(workspace, max_cost=1.0).is_tripped(T0)


def test_v1_with_invalid_total_fails_closed(workspace: Workspace) -> None:
    write_v1(workspace.budget_ledger, -1.0, T0)
    led = ledger(workspace)
    assert led.is_tripped(T0) and led.moved_aside is not None


def test_peek_changes_nothing(workspace: Workspace) -> None:
    workspace.state_dir.mkdir(parents=True)
    workspace.budget_ledger.write_text("not json")
    led = BudgetLedger.peek(workspace.budget_ledger, BudgetConfig(), now=T0)
    assert led.is_tripped(T0) and led.problem
    assert workspace.budget_ledger.read_text() == "not json"


# Write-ahead reservations (issue 9)


def reservation(cost: float, at: datetime = T0, **fields: object) -> LedgerEntry:
    return entry(cost, at, estimated=True, reserved=True, **fields)


def stored(ws: Workspace) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = json.loads(ws.budget_ledger.read_text())["entries"]
    return rows


def test_reserve_writes_the_estimate_before_returning(workspace: Workspace) -> None:
    led = ledger(workspace, max_cost=1.0)
    held = reservation(0.3)
    assert led.reserve(held, now=T0) == Allowed()
    (row,) = stored(workspace)
    assert row["reserved"] is True and row["id"] == held.id and row["cost_usd"] == 0.3
    assert led.spend_in_window(T0) == led.reserved_in_window(T0) == pytest.approx(0.3)


def test_settle_replaces_the_reservation_under_its_id(workspace: Workspace) -> None:
    led = ledger(workspace, max_cost=1.0)
    held = reservation(0.3)
    led.reserve(held, now=T0)
    later = T0 + timedelta(seconds=5)
    led.settle(replace(held, at=later, reserved=False, estimated=False, cost_usd=0.1), now=later)
    (row,) = stored(workspace)
    assert (row["id"], row["reserved"], row["cost_usd"]) == (held.id, False, 0.1)
    assert led.spend_in_window(later) == pytest.approx(0.1) and led.reserved_in_window(later) == 0


def test_release_drops_a_reservation_that_never_left(workspace: Workspace) -> None:
    led = ledger(workspace, max_cost=1.0)
    held = reservation(0.3)
    led.reserve(held, now=T0)
    led.release(held, now=T0)
    assert stored(workspace) == [] and led.spend_in_window(T0) == 0


def test_reserve_refuses_past_the_cap_counting_reservations_and_latches(workspace: Workspace) -> None:
    led = ledger(workspace, max_cost=1.0)
    record(led, 0.4)
    assert led.reserve(reservation(0.4), now=T0) == Allowed()
    refused = led.reserve(reservation(0.3), now=T0)  # 0.4 spent + 0.4 in flight + 0.3 > 1.0
    assert isinstance(refused, Skipped) and refused.reason == "budget_exceeded"
    assert "$0.4000 of it reserved" in refused.detail and "would pass the cap" in refused.detail
    assert len(stored(workspace)) == 2  # the refused estimate was not written
    assert isinstance(led.reserve(reservation(0.01), now=T0), Skipped)  # latched for the run


def test_reservation_at_exactly_the_cap_fits(workspace: Workspace) -> None:
    led = ledger(workspace, max_cost=0.5)
    assert led.reserve(reservation(0.5), now=T0) == Allowed()
    assert led.is_tripped(T0)  # and the window is now full


def test_a_crash_leftover_counts_until_it_ages_out(workspace: Workspace) -> None:
    ledger(workspace, max_cost=1.0).reserve(reservation(0.7), now=T0)  # the run is killed here, mid-call
    restart = T0 + timedelta(minutes=30)
    led = ledger(workspace, max_cost=1.0, now=restart)
    assert led.spend_in_window(restart) == pytest.approx(0.7) and not led.is_tripped(restart)
    assert isinstance(led.reserve(reservation(0.4, restart), now=restart), Skipped)
    after = T0 + timedelta(minutes=61)
    led = ledger(workspace, max_cost=1.0, now=after)
    assert led.spend_in_window(after) == 0 and led.reserve(reservation(0.4, after), now=after) == Allowed()
    assert [row["at"] for row in stored(workspace)] == [after.isoformat()]  # the leftover was dropped on write


def test_a_leftover_past_the_cap_starts_the_next_run_tripped(workspace: Workspace) -> None:
    led = ledger(workspace, max_cost=1.0)
    led.reserve(reservation(0.6), now=T0)
    led.reserve(reservation(0.4), now=T0)
    assert ledger(workspace, max_cost=1.0, now=T0 + timedelta(minutes=1)).is_tripped(T0 + timedelta(minutes=1))


def test_concurrent_reservations_never_pass_the_cap(workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    from dreaming.memory import atomic_write_json

    def slow_write(path: Path, payload: dict[str, object]) -> bool:
        time.sleep(0.005)  # widen the gap between check and write; the lock must make them one step
        return atomic_write_json(path, payload)

    monkeypatch.setattr("dreaming.llm.ledger.atomic_write_json", slow_write)
    led = ledger(workspace, max_cost=0.35)
    start = threading.Barrier(10)
    results: list[object] = []

    def call() -> None:
        start.wait()
        results.append(led.reserve(reservation(0.1), now=T0))

    threads = [threading.Thread(target=call) for _ in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results.count(Allowed()) == 3
    assert len(stored(workspace)) == 3 and led.spend_in_window(T0) == pytest.approx(0.3)


def test_failed_write_reserves_nothing(workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    led = ledger(workspace, max_cost=1.0)

    def broken_replace(src: object, dst: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        led.reserve(reservation(0.3), now=T0)
    assert led.entries == () and led.spend_in_window(T0) == 0


# Versions by exact type, and every unexpected shape fails closed (issue 9)


def v3_row(**changes: object) -> dict[str, object]:
    return entry(0.01).to_json() | changes


AT_CAP = [entry(1.0).to_json()]


@pytest.mark.parametrize(
    "document",
    [
        {"version": True, "entries": AT_CAP},
        {"version": 1.0, "entries": AT_CAP},
        {"version": 1, "entries": AT_CAP},
        {"version": 2.0, "entries": AT_CAP},
        {"version": 3.0, "entries": AT_CAP},
        {"version": "3", "entries": AT_CAP},
        {"version": 1, "accumulatedCostUsd": 0, "entries": AT_CAP},
        {"version": 1, "windowStartMs": 1},
        {"version": 1, "accumulatedCostUsd": True},
        {"version": 3, "entries": AT_CAP, "extra": 1},
        {"version": 3, "entries": [v3_row(cost_usd=-0.5)]},
        {"version": 3, "entries": [v3_row(cost_usd="0.5")]},
        {"version": 3, "entries": [v3_row(cost_usd=True)]},
        {"version": 3, "entries": [v3_row(input_tokens=-1)]},
        {"version": 3, "entries": [v3_row(output_tokens=1.5)]},
        {"version": 3, "entries": [v3_row(estimated="false")]},
        {"version": 3, "entries": [v3_row(reserved=1)]},
        {"version": 3, "entries": [v3_row(reserved=True, estimated=False)]},
        {"version": 3, "entries": [v3_row(id="")]},
        {"version": 3, "entries": [v3_row(model=None)]},
        {"version": 3, "entries": [v3_row(gap=7)]},
        {"version": 3, "entries": [v3_row(at="2026-04-15T03:00:00")]},
        {"version": 3, "entries": [v3_row(at=1776222000)]},
        {"version": 3, "entries": [v3_row(surprise=1)]},
        {"version": 3, "entries": [{k: v for k, v in v3_row().items() if k != "id"}]},
        {"version": 3, "entries": [v3_row(id="same"), v3_row(id="same")]},
        {"version": 2, "entries": [v3_row()]},
        {"version": 3, "entries": [{k: v for k, v in v3_row().items() if k not in ("id", "reserved")}]},
        {"version": 3, "entries": [v3_row()], "note": None},
    ],
    ids=[
        "version-true", "version-1.0", "version-1-with-entries", "version-2.0", "version-3.0", "version-string",
        "v1-with-entries-key", "v1-without-total", "v1-bool-total", "v3-unknown-key", "negative-cost", "string-cost",
        "bool-cost", "negative-tokens", "float-tokens", "string-flag", "int-reserved", "reservation-not-estimated",
        "empty-id", "null-model", "number-gap", "naive-time", "number-time", "unknown-entry-key", "missing-id",
        "duplicate-ids", "v2-with-v3-keys", "v3-with-v2-keys", "v3-extra-top-key",
    ],
)  # fmt: skip
def test_unexpected_shape_fails_closed(workspace: Workspace, document: dict[str, object]) -> None:
    # The case first: a version 1, 1.0 or true holding newer entries at the cap read as $0 spent, and the
    # next write erased the record. Every shape this reader did not write is now moved aside and fails closed.
    workspace.state_dir.mkdir(parents=True)
    content = json.dumps(document)
    workspace.budget_ledger.write_text(content)
    peeked = BudgetLedger.peek(workspace.budget_ledger, BudgetConfig(), now=T0)
    assert peeked.is_tripped(T0) and peeked.problem
    led = ledger(workspace)
    assert led.is_tripped(T0) and led.problem and "failing closed" in (led.tripped_reason or "")
    assert led.moved_aside is not None and led.moved_aside.read_text() == content
    assert not workspace.budget_ledger.exists()


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_numbers_fail_closed(workspace: Workspace, literal: str) -> None:
    workspace.state_dir.mkdir(parents=True)
    row = json.dumps(v3_row()).replace('"cost_usd": 0.01', f'"cost_usd": {literal}')
    workspace.budget_ledger.write_text(f'{{"version": 3, "entries": [{row}]}}')
    led = ledger(workspace)
    assert led.is_tripped(T0) and led.moved_aside is not None


def test_v2_migrates_to_v3_with_settled_entries(workspace: Workspace) -> None:
    workspace.state_dir.mkdir(parents=True)
    v2 = [{k: v for k, v in entry(cost).to_json().items() if k not in ("id", "reserved")} for cost in (0.2, 0.3)]
    workspace.budget_ledger.write_text(json.dumps({"version": 2, "entries": v2}))
    led = ledger(workspace)
    assert [(e.id, e.reserved, e.cost_usd) for e in led.entries] == [("v2-0", False, 0.2), ("v2-1", False, 0.3)]
    assert led.problem is None and led.spend_in_window(T0) == pytest.approx(0.5)
    record(led, 0.1)
    data = json.loads(workspace.budget_ledger.read_text())
    assert data["version"] == 3 and [row["id"] for row in data["entries"]][:2] == ["v2-0", "v2-1"]
    assert ledger(workspace).spend_in_window(T0) == pytest.approx(0.6)
