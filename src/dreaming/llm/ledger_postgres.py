"""The fleet's global budget ledger in Postgres: the file ledger's rules, made safe by transactions and a row lock.

Two tables (migration 1 of ``dreaming.fleet._schema``): ``dreaming_budget``, one row (``id = 1``) holding the fleet's
``max_cost_usd`` and ``window_minutes`` (``dreaming fleet init`` writes it from the fleet file's ``[budget]``), and
``dreaming_budget_entries``, one row per entry: its ``id``, ``reserved``, ``at`` and ``cost_usd``, and the whole
:class:`~dreaming.llm.ledger.LedgerEntry` as ``entry`` (jsonb, the file ledger's version 3 form).

One change (:meth:`~PostgresBudgetLedger.reserve`, ``settle``, ``release``, ``record``) is one transaction, on a
connection of its own, at READ COMMITTED (each statement sees what the lock's previous holder committed):

1. ``SELECT ... FOR UPDATE`` on the ``dreaming_budget`` row: every worker's changes queue there, one at a time;
2. the cap and window are read from that row (a changed fleet budget applies from the next change on);
3. the entries that aged out (``at <= now - window``) are deleted, as the file ledger drops them on write;
4. the window's spend and its reserved part are summed in the database (reservations at their estimate);
5. the rules of :class:`~dreaming.llm.ledger.SpendLedger` decide (the breaker, then spend + estimate against the
   cap), the change is written, and the commit frees the lock.

So a reservation is refused when its estimate would take the fleet's window spend, every worker's reservations
included, past the cap, and the recorded spend never passes it, whatever is killed when. A reservation is committed
before ``reserve`` returns: a worker SIGKILLed mid-call leaves it in the table, counted at its estimate until it ages
out of the window. A worker killed inside a transaction leaves nothing: Postgres rolls the transaction back and frees
the lock when the connection drops (``idle_in_transaction_session_timeout`` bounds the wait when a machine vanishes
without closing it).

Between changes the object holds what its last transaction (or :meth:`~PostgresBudgetLedger.load`) read: the window's
spend and reserved part, and the latch. ``spend_in_window`` and ``reserved_in_window`` answer from that read (entries
that aged out since still count until the next change: the safe side) and ``is_tripped`` applies the file ledger's
rule to it; ``entries_in_window`` reads the database.

Fail closed: a database that cannot be reached or queried, a missing ``dreaming_budget`` row or one whose numbers are
not usable fails the change and latches the breaker for the run; a reservation is then refused (``budget_exceeded``,
the detail saying why). Nothing raises: a settlement that cannot be written leaves its reservation counted at the
estimate, and a ledger loaded from an unreachable database starts tripped (the night's deterministic work goes on,
its model calls are refused).

Time: ``now`` is the worker's clock, as with the file ledger; keep the fleet's machines in sync (NTP). An entry
stamped ahead of a worker's clock counts for that worker until it ages out.

This module imports psycopg (the ``fleet`` extra); the gateway imports it only when ``DREAMING_DATABASE_URL`` is set.
"""

from __future__ import annotations

import contextlib
import logging
import math
import threading
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime
from typing import Any, ClassVar

import psycopg
from psycopg.types.json import Jsonb

from dreaming.config import BudgetConfig
from dreaming.llm.budget import Allowed, Decision, Skipped
from dreaming.llm.ledger import LedgerEntry, SpendLedger
from dreaming.memory.research import redact_secrets

__all__ = ["CONNECT_TIMEOUT_SECONDS", "IDLE_IN_TRANSACTION_TIMEOUT", "LOCK_TIMEOUT", "PostgresBudgetLedger"]

logger = logging.getLogger(__name__)

CONNECT_TIMEOUT_SECONDS = 10
"""How long a change waits for a connection before it fails closed."""
LOCK_TIMEOUT = "60s"
"""How long a change waits for the budget row's lock before it fails closed (longer than the idle timeout below, so
that a lock left by a vanished machine is freed before the waiters give up)."""
IDLE_IN_TRANSACTION_TIMEOUT = "15s"
"""A session idle this long inside a change is ended by the server, freeing the lock (a change takes milliseconds)."""
PROBLEM_CHARS = 300
"""A database error's description is cut here."""

_SESSION = "SELECT set_config('lock_timeout', %s, true), set_config('idle_in_transaction_session_timeout', %s, true)"
_READ_BUDGET = "SELECT max_cost_usd, window_minutes FROM dreaming_budget WHERE id = 1"
_LOCK_BUDGET = _READ_BUDGET + " FOR UPDATE"
_DROP_AGED = (
    "WITH aged AS (DELETE FROM dreaming_budget_entries WHERE at <= %s RETURNING cost_usd)"
    " SELECT count(*), coalesce(sum(cost_usd), 0) FROM aged"
)
_WINDOW_TOTALS = (
    "SELECT coalesce(sum(cost_usd), 0), coalesce(sum(cost_usd) FILTER (WHERE reserved), 0)"
    " FROM dreaming_budget_entries WHERE at > %s"
)
_WINDOW_ENTRIES = "SELECT entry FROM dreaming_budget_entries WHERE at > %s ORDER BY at, id"
_INSERT = "INSERT INTO dreaming_budget_entries (id, reserved, at, cost_usd, entry) VALUES (%s, %s, %s, %s, %s)"
_UPSERT = _INSERT + (
    " ON CONFLICT (id) DO UPDATE"
    " SET reserved = excluded.reserved, at = excluded.at, cost_usd = excluded.cost_usd, entry = excluded.entry"
)
_RELEASE = "DELETE FROM dreaming_budget_entries WHERE id = %s AND reserved"


class _BudgetUnusable(Exception):
    """The database answered, but its ``dreaming_budget`` row cannot be used."""


class _NoBudget(_BudgetUnusable):
    """The database answered and holds no ``dreaming_budget`` row (or no such table)."""


class PostgresBudgetLedger(SpendLedger):
    """The fleet's window, breaker and latch for one run, kept in Postgres (see the module docstring).

    Create with :meth:`load` (or :meth:`load_if_budgeted`, the gateway's choice). ``config`` is the workspace's
    ``[budget]``: its cap and window are replaced by the ``dreaming_budget`` row's at every read.
    """

    in_database: ClassVar[bool] = True

    def __init__(
        self,
        url: str,
        config: BudgetConfig,
        *,
        fail_closed: str | None = None,
        connect_timeout: int = CONNECT_TIMEOUT_SECONDS,
    ) -> None:
        super().__init__(config, fail_closed=fail_closed)
        self.url = url
        """The fleet database's address (libpq URL or key=value string)."""
        self._connect_timeout = connect_timeout
        self._lock = threading.RLock()
        self._spend = 0.0
        self._reserved = 0.0

    @classmethod
    def load(
        cls, url: str, config: BudgetConfig, *, now: datetime, connect_timeout: int = CONNECT_TIMEOUT_SECONDS
    ) -> PostgresBudgetLedger:
        """Read the fleet's budget and window spend (nothing is written).

        A database that cannot be used, or that holds no ``dreaming_budget`` row, gives a ledger tripped from the
        start whose ``problem`` says why; one whose window spend is at or over the cap starts tripped too.
        """
        ledger = cls(url, config, connect_timeout=connect_timeout)
        try:
            ledger._read(now)
        except (psycopg.Error, _BudgetUnusable) as exc:
            ledger._fail(exc)
        return ledger

    @classmethod
    def peek(cls, url: str, config: BudgetConfig, *, now: datetime) -> PostgresBudgetLedger:
        """Read the ledger without changing anything (for status displays): the same read as :meth:`load`."""
        return cls.load(url, config, now=now)

    @classmethod
    def load_if_budgeted(
        cls, url: str, config: BudgetConfig, *, now: datetime, connect_timeout: int = CONNECT_TIMEOUT_SECONDS
    ) -> PostgresBudgetLedger | None:
        """Return :meth:`load`'s ledger, or None when the database answers and holds no fleet budget.

        No budget (no ``dreaming_budget`` table or row): the fleet has no global cap, and the caller keeps its own
        ledger. A database that cannot be reached or read gives a ledger tripped from the start (fail closed).
        """
        ledger = cls(url, config, connect_timeout=connect_timeout)
        try:
            ledger._read(now)
        except (_NoBudget, psycopg.errors.UndefinedTable):
            return None
        except (psycopg.Error, _BudgetUnusable) as exc:
            ledger._fail(exc)
        return ledger

    def entries_in_window(self, now: datetime) -> tuple[LedgerEntry, ...]:
        """Read the window's entries from the database, oldest first (nothing is written).

        Raises:
            psycopg.Error: the database could not be read.
            ValueError: a stored entry is not a ledger entry.
        """
        with self._transaction() as conn:
            rows = conn.execute(_WINDOW_ENTRIES, (self.window_start(now),)).fetchall()
        return tuple(LedgerEntry.from_json(row[0]) for row in rows)

    def spend_in_window(self, now: datetime) -> float:
        """Return the window's spend, reservations included, as the last transaction read it (``now`` unused)."""
        return self._spend

    def reserved_in_window(self, now: datetime) -> float:
        """Return the part of :meth:`spend_in_window` held by reservations, as the last transaction read it."""
        return self._reserved

    def _reserve(self, reservation: LedgerEntry, now: datetime) -> Decision:
        with self._lock:
            if self.is_tripped(now):
                return Skipped(reason="budget_exceeded", detail=self._tripped or "")
            try:
                with self._transaction() as conn:
                    self._read_totals(conn, self._lock_window(conn, now))
                    refusal = self._refusal(reservation, now)
                    if refusal is not None:
                        return refusal
                    conn.execute(_INSERT, _row(reservation))
            except (psycopg.Error, _BudgetUnusable) as exc:
                return self._fail(exc)
            self._spend += reservation.cost_usd
            self._reserved += reservation.cost_usd
            self.is_tripped(now)
            return Allowed()

    def _settle(self, entry: LedgerEntry, now: datetime) -> None:
        self._change(now, _UPSERT, _row(entry))

    def release(self, reservation: LedgerEntry, *, now: datetime) -> None:
        """Drop a reservation whose request provably never left (the connection was refused)."""
        self._change(now, _RELEASE, (reservation.id,))

    def record(self, entry: LedgerEntry, *, now: datetime) -> None:
        """Add ``entry`` (a settled call or a cache hit), drop aged entries, re-check the breaker."""
        self._change(now, _INSERT, _row(entry))

    def _change(self, now: datetime, statement: str, params: tuple[Any, ...]) -> None:
        """Write one change in its transaction, then re-check the breaker; a failure latches it (nothing raises)."""
        with self._lock:
            try:
                with self._transaction() as conn:
                    start = self._lock_window(conn, now)
                    conn.execute(statement, params)
                    self._read_totals(conn, start)
            except (psycopg.Error, _BudgetUnusable) as exc:
                self._fail(exc)
                return
            self.is_tripped(now)

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[psycopg.Connection[Any]]:
        """Connect, and hold one READ COMMITTED transaction (committed on exit, rolled back on an error)."""
        with psycopg.connect(self.url, autocommit=True, connect_timeout=self._connect_timeout) as conn:
            conn.isolation_level = psycopg.IsolationLevel.READ_COMMITTED
            with conn.transaction():
                conn.execute(_SESSION, (LOCK_TIMEOUT, IDLE_IN_TRANSACTION_TIMEOUT))
                yield conn

    def _read(self, now: datetime) -> None:
        """Read the budget row and the window's totals, without the lock; then check the breaker."""
        with self._transaction() as conn:
            self._apply_budget(conn.execute(_READ_BUDGET).fetchone())
            self._read_totals(conn, self.window_start(now))
        self.is_tripped(now)

    def _lock_window(self, conn: psycopg.Connection[Any], now: datetime) -> datetime:
        """Lock the budget row, take its cap and window, drop the aged entries; return the window's start."""
        self._apply_budget(conn.execute(_LOCK_BUDGET).fetchone())
        start = self.window_start(now)
        aged = conn.execute(_DROP_AGED, (start,)).fetchone()
        if aged is not None:
            self._note_aged(int(aged[0]), float(aged[1]))
        return start

    def _read_totals(self, conn: psycopg.Connection[Any], start: datetime) -> None:
        totals = conn.execute(_WINDOW_TOTALS, (start,)).fetchone()
        assert totals is not None  # an aggregate always returns one row
        self._spend, self._reserved = float(totals[0]), float(totals[1])

    def _apply_budget(self, row: tuple[Any, ...] | None) -> None:
        """Take the cap and window of the ``dreaming_budget`` row (the workspace's other limits stay)."""
        if row is None:
            raise _NoBudget("the database holds no dreaming_budget row (`dreaming fleet init` writes it)")
        cap, window = float(row[0]), float(row[1])
        if not (math.isfinite(cap) and cap >= 0 and math.isfinite(window) and window > 0):
            raise _BudgetUnusable(f"dreaming_budget holds cap {cap!r} and window {window!r}, not usable numbers")
        if (cap, window) != (self._config.max_cost_usd, self._config.window_minutes):
            self._config = replace(self._config, max_cost_usd=cap, window_minutes=window)

    def _fail(self, error: BaseException) -> Skipped:
        """Latch the breaker on a database or budget failure; return the refusal it makes of a reservation."""
        detail = redact_secrets(" ".join(f"{type(error).__name__}: {error}".split()))  # libpq may echo the URL
        if len(detail) > PROBLEM_CHARS:
            detail = detail[: PROBLEM_CHARS - 1] + "…"
        self.problem = f"the fleet's ledger in Postgres cannot be used: {detail}"
        logger.error("%s", self.problem)
        self.latch(f"ledger unusable, failing closed: {self.problem}")
        return Skipped(reason="budget_exceeded", detail=self._tripped or self.problem)


def _row(entry: LedgerEntry) -> tuple[Any, ...]:
    return entry.id, entry.reserved, entry.at, float(entry.cost_usd), Jsonb(entry.to_json())
