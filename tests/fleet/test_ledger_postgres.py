"""The fleet's global ledger on a real Postgres: the file ledger's rules, across threads, processes and kills."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest

import dreaming
from dreaming.config import BudgetConfig
from dreaming.fleet._schema import apply_migrations
from dreaming.llm.budget import Allowed, Skipped
from dreaming.llm.ledger import LedgerEntry
from dreaming.llm.ledger_postgres import PostgresBudgetLedger

T0 = datetime(2026, 4, 15, 3, 0, tzinfo=UTC)
UNREACHABLE = "postgresql://postgres@127.0.0.1:1/test"
"""Nothing listens on port 1: the connection is refused at once."""


def set_budget(url: str, cap: float = 1.0, window_minutes: float = 60.0) -> None:
    """Write the fleet's budget row (what ``dreaming fleet init`` does)."""
    with psycopg.connect(url) as conn:
        conn.execute(
            "INSERT INTO dreaming_budget (id, max_cost_usd, window_minutes) VALUES (1, %s, %s)"
            " ON CONFLICT (id) DO UPDATE SET max_cost_usd = excluded.max_cost_usd,"
            " window_minutes = excluded.window_minutes",
            (cap, window_minutes),
        )


@pytest.fixture
def url(pg_url: str) -> str:
    """A migrated schema with a budget of $1 per 60 minutes."""
    with psycopg.connect(pg_url) as conn:
        apply_migrations(conn)
    set_budget(pg_url)
    return pg_url


def stored(url: str) -> list[tuple[str, bool, float]]:
    """Return the table's ``(id, reserved, cost_usd)`` rows, in id order."""
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT id, reserved, cost_usd FROM dreaming_budget_entries ORDER BY id").fetchall()
    return [(str(r[0]), bool(r[1]), float(r[2])) for r in rows]


def ledger(url: str, now: datetime = T0) -> PostgresBudgetLedger:
    return PostgresBudgetLedger.load(url, BudgetConfig(), now=now)


def entry(cost: float, at: datetime = T0, **fields: object) -> LedgerEntry:
    return LedgerEntry(at=at, model="gpt-4.1-mini", node="verify", cost_usd=cost, **fields)  # type: ignore[arg-type]


def reservation(cost: float, at: datetime = T0) -> LedgerEntry:
    return entry(cost, at, estimated=True, reserved=True)


# The rules of the file ledger


def test_reserve_refuses_past_the_cap_counting_reservations_and_latches(url: str) -> None:
    led = ledger(url)
    led.record(entry(0.4), now=T0)
    held = reservation(0.4)
    assert led.reserve(held, now=T0) == Allowed()
    refused = led.reserve(reservation(0.3), now=T0)  # 0.4 spent + 0.4 in flight + 0.3 > 1.0
    assert isinstance(refused, Skipped) and refused.reason == "budget_exceeded"
    assert "$0.4000 of it reserved" in refused.detail and "would pass the cap" in refused.detail
    assert len(stored(url)) == 2  # the refused estimate was not written
    assert isinstance(led.reserve(reservation(0.01), now=T0), Skipped)  # latched for the run
    assert led.spend_in_window(T0) == pytest.approx(0.8) and led.reserved_in_window(T0) == pytest.approx(0.4)


def test_a_reservation_at_exactly_the_cap_fits_and_fills_the_window(url: str) -> None:
    set_budget(url, cap=0.5)
    led = ledger(url)
    assert led.reserve(reservation(0.5), now=T0) == Allowed()
    assert led.is_tripped(T0)


def test_settle_replaces_the_reservation_under_its_id_and_release_drops_it(url: str) -> None:
    led = ledger(url)
    held, dropped = reservation(0.3), reservation(0.2)
    assert led.reserve(held, now=T0) == Allowed() and led.reserve(dropped, now=T0) == Allowed()
    later = T0 + timedelta(seconds=5)
    settled = replace(held, at=later, reserved=False, estimated=False, cost_usd=0.1)
    led.settle(settled, now=later)
    led.release(dropped, now=later)
    assert stored(url) == [(held.id, False, 0.1)]
    assert led.spend_in_window(later) == pytest.approx(0.1) and led.reserved_in_window(later) == 0
    assert led.entries_in_window(later) == (settled,)  # the whole entry round-trips through jsonb
    with pytest.raises(ValueError, match="settle"):
        led.settle(reservation(0.1), now=later)
    with pytest.raises(ValueError, match="reserve"):
        led.reserve(entry(0.1), now=later)


def test_each_run_sees_what_the_others_reserved(url: str) -> None:
    a, b = ledger(url), ledger(url)
    first = reservation(0.6)
    assert a.reserve(first, now=T0) == Allowed()
    refused = b.reserve(reservation(0.6), now=T0)  # b loaded before a reserved: it reads under the row lock
    assert isinstance(refused, Skipped) and b.tripped_reason is not None and a.tripped_reason is None
    c = ledger(url)
    assert c.reserve(reservation(0.3), now=T0) == Allowed()
    a.settle(replace(first, reserved=False, estimated=False, cost_usd=0.5), now=T0)  # keeps c's entry
    assert sorted((cost, reserved) for _, reserved, cost in stored(url)) == [(0.3, True), (0.5, False)]


def test_the_window_slides_and_aged_entries_are_dropped(url: str, caplog: pytest.LogCaptureFixture) -> None:
    ledger(url).record(entry(0.9), now=T0)
    half = T0 + timedelta(minutes=30)
    assert isinstance(ledger(url, half).reserve(reservation(0.2, half), now=half), Skipped)
    later = T0 + timedelta(minutes=61)
    fresh = reservation(0.9, later)
    with caplog.at_level(logging.INFO):
        assert ledger(url, later).reserve(fresh, now=later) == Allowed()
    assert "1 ledger entries ($0.9000) aged out" in caplog.text
    assert stored(url) == [(fresh.id, True, 0.9)]


def test_a_run_starts_tripped_while_the_window_is_at_the_cap(url: str) -> None:
    ledger(url).record(entry(1.0), now=T0)
    restart = T0 + timedelta(minutes=59)
    assert ledger(url, restart).is_tripped(restart)
    after = T0 + timedelta(minutes=61)
    assert not ledger(url, after).is_tripped(after)


def test_a_leftover_reservation_counts_until_it_ages_out(url: str) -> None:
    ledger(url).reserve(reservation(0.7), now=T0)  # the run stops here, mid-call, and never settles
    restart = T0 + timedelta(minutes=30)
    led = ledger(url, restart)
    assert led.reserved_in_window(restart) == pytest.approx(0.7) and not led.is_tripped(restart)
    assert isinstance(led.reserve(reservation(0.4, restart), now=restart), Skipped)
    after = T0 + timedelta(minutes=61)
    led = ledger(url, after)
    assert led.spend_in_window(after) == 0 and led.reserve(reservation(0.4, after), now=after) == Allowed()


def test_cap_and_window_come_from_the_budget_row_at_every_change(url: str) -> None:
    set_budget(url, cap=0.5, window_minutes=30)
    led = PostgresBudgetLedger.load(url, BudgetConfig(max_cost_usd=100.0, window_minutes=600), now=T0)
    assert (led.config.max_cost_usd, led.config.window_minutes) == (0.5, 30.0)
    assert led.config.max_llm_calls_per_run == BudgetConfig().max_llm_calls_per_run  # the workspace's other limits
    set_budget(url, cap=0.2)
    refused = led.reserve(reservation(0.3), now=T0)
    assert isinstance(refused, Skipped) and "cap $0.2" in refused.detail


# Fail closed


def test_an_unreachable_database_starts_tripped(pg_url: str) -> None:
    led = PostgresBudgetLedger.load(UNREACHABLE, BudgetConfig(), now=T0)
    assert led.is_tripped(T0) and "cannot be used" in (led.problem or "")
    refused = led.reserve(reservation(0.01), now=T0)
    assert isinstance(refused, Skipped) and "failing closed" in refused.detail


def test_a_database_lost_mid_run_refuses_the_call_and_latches(url: str) -> None:
    led = ledger(url)
    held = reservation(0.2)
    assert led.reserve(held, now=T0) == Allowed()
    led.url = UNREACHABLE  # the database goes away between two calls
    led.settle(replace(held, reserved=False, estimated=False, cost_usd=0.1), now=T0)  # does not raise
    assert led.tripped_reason is not None and "OperationalError" in (led.problem or "")
    refused = led.reserve(reservation(0.01), now=T0)
    assert isinstance(refused, Skipped) and "cannot be used" in refused.detail
    assert stored(url) == [(held.id, True, 0.2)]  # the unsettled call stays counted at its estimate
    led.url = url  # back, but the breaker stays latched for the run
    assert isinstance(led.reserve(reservation(0.01), now=T0), Skipped)


def test_a_missing_budget_row_at_a_call_refuses_and_latches(url: str) -> None:
    led = ledger(url)
    with psycopg.connect(url) as conn:
        conn.execute("DELETE FROM dreaming_budget")
    refused = led.reserve(reservation(0.01), now=T0)
    assert isinstance(refused, Skipped) and "no dreaming_budget row" in refused.detail
    assert led.is_tripped(T0) and stored(url) == []
    assert PostgresBudgetLedger.load(url, BudgetConfig(), now=T0).is_tripped(T0)
    assert PostgresBudgetLedger.load_if_budgeted(url, BudgetConfig(), now=T0) is None


def test_load_if_budgeted_tells_no_budget_from_no_database(pg_url: str) -> None:
    assert PostgresBudgetLedger.load_if_budgeted(pg_url, BudgetConfig(), now=T0) is None  # no tables at all
    down = PostgresBudgetLedger.load_if_budgeted(UNREACHABLE, BudgetConfig(), now=T0)
    assert down is not None and down.is_tripped(T0)


# Concurrency and kills

_HAMMER = """
import sys
from datetime import UTC, datetime
from dreaming.config import BudgetConfig
from dreaming.llm.ledger import LedgerEntry
from dreaming.llm.ledger_postgres import PostgresBudgetLedger

now = datetime(2026, 4, 15, 3, 0, tzinfo=UTC)
allowed = 0
for _ in range(40):
    led = PostgresBudgetLedger.load(sys.argv[1], BudgetConfig(), now=now)  # a new run each time: no latch carried
    held = LedgerEntry(at=now, model="m", node="n", cost_usd=0.125, estimated=True, reserved=True)
    allowed += led.reserve(held, now=now).__class__.__name__ == "Allowed"
print(allowed)
"""


def _python(code: str, *args: str) -> subprocess.Popen[str]:
    env = os.environ | {"PYTHONPATH": str(Path(dreaming.__file__).resolve().parents[1])}
    return subprocess.Popen(
        [sys.executable, "-c", code, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


@pytest.mark.slow
def test_processes_hammering_reserve_never_pass_the_cap(url: str) -> None:
    set_budget(url, cap=3.0)
    procs = [_python(_HAMMER, url) for _ in range(4)]
    outputs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0], [err for _, err in outputs]
    rows = stored(url)
    assert sum(int(out) for out, _ in outputs) == len(rows) == 24  # 160 attempts, exactly the 24 that fit
    assert len({row[0] for row in rows}) == 24 and sum(row[2] for row in rows) == 3.0


def test_threads_reserving_and_settling_lose_no_entry(url: str) -> None:
    set_budget(url, cap=2.0)
    allowed: list[LedgerEntry] = []
    errors: list[BaseException] = []
    start = threading.Barrier(6)

    def worker() -> None:
        try:
            start.wait()
            for i in range(15):
                led = ledger(url)
                held = reservation(0.1)
                if led.reserve(held, now=T0) == Allowed():
                    allowed.append(held)
                    if i % 2:  # half the calls cost less than their estimate: room for more
                        led.settle(replace(held, reserved=False, estimated=False, cost_usd=0.05), now=T0)
        except BaseException as exc:  # reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    rows = stored(url)
    assert sorted(row[0] for row in rows) == sorted(held.id for held in allowed)  # no lost or extra entry
    assert sum(row[2] for row in rows) <= 2.0 + 1e-9
    assert 20 <= len(rows) < 90  # at least the cap's worth of estimates fit, and the cap refused the rest


_RESERVE_AND_HANG = """
import sys, time
from datetime import UTC, datetime
from dreaming.config import BudgetConfig
from dreaming.llm.ledger import LedgerEntry
from dreaming.llm.ledger_postgres import PostgresBudgetLedger

now = datetime(2026, 4, 15, 3, 0, tzinfo=UTC)
led = PostgresBudgetLedger.load(sys.argv[1], BudgetConfig(), now=now)
held = LedgerEntry(at=now, model="m", node="n", cost_usd=0.7, estimated=True, reserved=True)
print(led.reserve(held, now=now).__class__.__name__, held.id, flush=True)
time.sleep(600)  # the model call in flight
"""

_LOCK_AND_HANG = """
import sys, time
import psycopg

with psycopg.connect(sys.argv[1]) as conn:
    conn.execute("SELECT 1 FROM dreaming_budget WHERE id = 1 FOR UPDATE")
    print("locked", flush=True)
    time.sleep(600)  # killed inside a change, holding the budget row's lock
"""


@pytest.mark.slow
def test_a_worker_killed_mid_call_leaves_its_reservation_counted(url: str) -> None:
    proc = _python(_RESERVE_AND_HANG, url)
    assert proc.stdout is not None
    decision, held_id = proc.stdout.readline().split()
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)  # reaps it and closes its pipes
    assert decision == "Allowed" and stored(url) == [(held_id, True, 0.7)]
    later = T0 + timedelta(minutes=10)
    led = ledger(url, later)
    assert led.reserved_in_window(later) == pytest.approx(0.7)
    assert isinstance(led.reserve(reservation(0.4, later), now=later), Skipped)


@pytest.mark.slow
def test_a_worker_killed_holding_the_lock_blocks_nobody(url: str) -> None:
    proc = _python(_LOCK_AND_HANG, url)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)  # reaps it and closes its pipes
    # Postgres ends the dead session's transaction: the next change gets the lock (not a lock timeout, failing closed).
    led = ledger(url)
    assert led.reserve(reservation(0.1), now=T0) == Allowed() and led.problem is None
