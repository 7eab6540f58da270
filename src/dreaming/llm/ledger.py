"""The spend ledger and the cost breaker (spec/budget.md), written ahead of every model call.

``memory/.dreams/dreaming-budget.json`` holds the entries of the current window, version 3::

    {"version": 3, "entries": [{"id", "reserved", "at": ISO, "model", "node", "gap", "input_tokens",
                                "output_tokens", "cached_tokens", "cost_usd", "estimated", "cache_hit",
                                "over_output_cap"}, ...]}

``over_output_cap`` (written only when true, read as false when absent) flags a reply whose reported completion tokens
passed the output cap the request carried: it is recorded at that real usage, not at the estimate.

Write-ahead: before a request leaves, :meth:`BudgetLedger.reserve` writes its estimated cost as an entry with
``reserved: true`` (atomic, fsynced); the reply settles it (:meth:`~BudgetLedger.settle`), replacing that entry
(same ``id``) with the usage the API reported. A reservation that a crash left unsettled counts in the window at its
estimate until it ages out like any entry, so killing a run mid-call can never hide the spend of the request it sent.

The window is truly sliding: the spend is the sum of the entries (reservations included) newer than ``now - window``,
and each entry ages out on its own (PR #65589's window was tumbling: it reset the whole sum at expiry). The breaker
trips when the spend reaches the cap (``>=``) and stays tripped for the life of the ledger object, that is, the run
(latched). A new run starts tripped while the window's spend is still at or over the cap.

The bound: :meth:`~BudgetLedger.reserve` checks and writes under one lock (calls run concurrently in a run), and
refuses a call whose estimate would take the window's spend plus every reservation past the cap. So the recorded
spend (settled costs plus outstanding estimates) never passes the cap, whatever is killed when. The money billed can
pass it only by what calls cost beyond their estimates (a provider counting more prompt tokens than tiktoken, or
ignoring the output cap): the "cap + one call's estimate" margin of the spec is that slack, not room for one more call.

Shared across processes (a fleet's global ledger, ``shared=True``): every read-modify-write (:meth:`load`,
:meth:`~BudgetLedger.reserve`, :meth:`~BudgetLedger.settle`, :meth:`~BudgetLedger.release`,
:meth:`~BudgetLedger.record`) holds ``fcntl.flock`` on the sidecar ``<ledger>.lock`` and re-reads the file under it
before deciding, so the check against the cap sees every process's reservations and no write loses another's entry.
The same rules hold: write-ahead reservations, the sliding window, the breaker latched for each run once the shared
window's spend reaches the cap. A shared file found unusable under the lock is moved aside and latches the breaker
of the run that found it. Not shared (a workspace's own ledger, the default), nothing of this happens.

The fleet's global ledger in Postgres (:mod:`dreaming.llm.ledger_postgres`, distributed mode) follows the same
rules, with a row lock and a transaction in place of the file lock: both are a :class:`SpendLedger`, where the window,
the check of a reservation against the cap and the latched breaker are written once.

Fail closed: a ledger that is unreadable or of an unexpected shape is moved aside and the run starts tripped, because
losing the spend record must not unlock spending. Versions are compared by exact type (``true`` and ``1.0`` are not
version 1); a version-1 file carrying ``entries``, unknown keys, entries that do not parse, negative or non-finite
numbers, duplicate ids: all unusable. A missing ledger starts empty.

Migrations (the file is rewritten as version 3 at its first write; reading never writes):

- 1 -> 3: PR #65589's version 1 file ``{version: 1, windowStartMs, accumulatedCostUsd, sessionsSpawned}`` only knows a
  total, not when each call happened. It becomes one settled, estimated entry (id ``v1-0``) of
  ``accumulatedCostUsd`` stamped with the file's modification time (the moment of its last recorded call), which is
  the latest the spend can have happened, so the migrated spend stays in the window as long as it possibly could.
- 2 -> 3: version 2 entries had no ``id`` nor ``reserved`` (version 2 recorded a call only once answered): each
  becomes a settled entry with id ``v2-<index>``.
"""

from __future__ import annotations

import abc
import contextlib
import fcntl
import json
import logging
import math
import os
import secrets
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, ClassVar

from dreaming.config import BudgetConfig
from dreaming.llm.budget import Allowed, Decision, Skipped
from dreaming.memory import atomic_write_json, check_write_path, move_aside, read_state

__all__ = [
    "FLEET_DATABASE_ENV",
    "LEDGER_VERSION",
    "SHARED_CAP_ENV",
    "SHARED_LEDGER_ENV",
    "SHARED_WINDOW_ENV",
    "BudgetLedger",
    "LedgerEntry",
    "SpendLedger",
    "new_entry_id",
]

logger = logging.getLogger(__name__)

FLEET_DATABASE_ENV = "DREAMING_DATABASE_URL"
"""Names the distributed fleet's Postgres: with a ``dreaming_budget`` row there, a night spends against the fleet's
global ledger (:mod:`dreaming.llm.ledger_postgres`) instead of a file."""
SHARED_LEDGER_ENV = "DREAMING_BUDGET_LEDGER"
"""Names a ledger shared by a fleet of workspaces (set by ``dreaming fleet run``); unset: the workspace's own."""
SHARED_CAP_ENV = "DREAMING_BUDGET_MAX_COST_USD"
"""The shared ledger's cap, replacing ``[budget] max_cost_usd``."""
SHARED_WINDOW_ENV = "DREAMING_BUDGET_WINDOW_MINUTES"
"""The shared ledger's window, replacing ``[budget] window_minutes``."""

LEDGER_VERSION = 3
"""Version 1 was PR #65589's tumbling-window total, version 2 had no reservations; see the module docstring."""
_READABLE_VERSIONS = (1, 2, LEDGER_VERSION)
_V1_KEYS = frozenset({"version", "windowStartMs", "accumulatedCostUsd", "sessionsSpawned"})
_V2_ENTRY_KEYS = frozenset(
    {"at", "model", "node", "gap", "input_tokens", "output_tokens", "cached_tokens", "cost_usd", "estimated",
     "cache_hit"}
)  # fmt: skip
_V3_ENTRY_KEYS = _V2_ENTRY_KEYS | {"id", "reserved"}


def new_entry_id() -> str:
    """Return a fresh entry id (16 random hex digits)."""
    return secrets.token_hex(8)


@dataclass(frozen=True, kw_only=True, slots=True)
class LedgerEntry:
    """One model call (a reservation or its settlement) or cache hit, as recorded in the ledger."""

    at: datetime
    """When the call was reserved (a reservation) or finished (timezone-aware)."""
    model: str
    """Model name, as priced."""
    node: str
    """Graph node (or caller) that made the call."""
    gap: str | None = None
    """Knowledge gap the call worked on, if any."""
    input_tokens: int = 0
    """Prompt tokens, as reported by the API (or estimated)."""
    output_tokens: int = 0
    """Completion tokens, as reported by the API (or estimated)."""
    cached_tokens: int = 0
    """Part of ``input_tokens`` the provider served from its prompt cache."""
    cost_usd: float = 0.0
    """Priced cost; 0 for a cache hit."""
    estimated: bool = False
    """True when the cost is the pre-call estimate (a reservation, no usage reported, or a failed call)."""
    cache_hit: bool = False
    """True when the answer came from dreaming's own cache of identical requests (no call was made)."""
    reserved: bool = False
    """True while the call is in flight (or was when a crash stopped the run): the estimate, written before the
    request left. Its settlement replaces it under the same ``id``."""
    id: str = field(default_factory=new_entry_id)
    """Names the call; a settlement keeps its reservation's id."""
    over_output_cap: bool = False
    """True when the reply reported more completion tokens than the output cap sent (the server ignored it)."""

    def __post_init__(self) -> None:
        if self.at.tzinfo is None:
            raise ValueError("ledger times must be timezone-aware")
        if isinstance(self.cost_usd, bool) or not isinstance(self.cost_usd, (int, float)):
            raise ValueError(f"cost_usd must be a number, got {self.cost_usd!r}")
        if not math.isfinite(self.cost_usd) or self.cost_usd < 0:
            raise ValueError(f"cost_usd must be a finite non-negative number, got {self.cost_usd!r}")
        for name in ("input_tokens", "output_tokens", "cached_tokens"):
            value = getattr(self, name)
            if type(value) is not int or value < 0:
                raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
        for name in ("estimated", "cache_hit", "reserved", "over_output_cap"):
            if type(getattr(self, name)) is not bool:
                raise ValueError(f"{name} must be true or false, got {getattr(self, name)!r}")
        for name in ("model", "node", "id"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                raise ValueError(f"{name} must be a non-empty string, got {getattr(self, name)!r}")
        if self.gap is not None and not isinstance(self.gap, str):
            raise ValueError(f"gap must be a string or null, got {self.gap!r}")
        if self.reserved and (self.cache_hit or not self.estimated):
            raise ValueError("a reservation is an estimate of a real call")

    def to_json(self) -> dict[str, Any]:
        """Return the stored form (version 3)."""
        row = asdict(self)
        row["at"] = self.at.isoformat()
        if not self.over_output_cap:
            del row["over_output_cap"]  # written only when set: most entries never carry it
        return row

    @classmethod
    def from_json(cls, row: Mapping[str, Any], *, version: int = LEDGER_VERSION, index: int = 0) -> LedgerEntry:
        """Parse the stored form of ``version`` (2 or 3); a version 2 row gets the id ``v2-<index>``.

        Raises:
            ValueError: a key is missing or unexpected, or a value has the wrong type or is out of range.
        """
        expected = _V3_ENTRY_KEYS if version == LEDGER_VERSION else _V2_ENTRY_KEYS
        if set(row) - {"over_output_cap"} != expected:  # the flag is written only when set
            raise ValueError(f"ledger entry keys {sorted(row)} are not those of version {version}")
        at = row["at"]
        if not isinstance(at, str):
            raise ValueError(f"ledger entry time is not a string: {at!r}")
        extra: dict[str, Any] = {"id": f"v2-{index}"}
        if version == LEDGER_VERSION:
            extra = {"id": row["id"], "reserved": row["reserved"]}
        if "over_output_cap" in row:
            extra["over_output_cap"] = row["over_output_cap"]
        try:
            return cls(
                at=datetime.fromisoformat(at),
                model=row["model"],
                node=row["node"],
                gap=row["gap"],
                input_tokens=row["input_tokens"],
                output_tokens=row["output_tokens"],
                cached_tokens=row["cached_tokens"],
                cost_usd=row["cost_usd"],
                estimated=row["estimated"],
                cache_hit=row["cache_hit"],
                **extra,
            )
        except TypeError as exc:
            raise ValueError(f"invalid ledger entry {row!r}: {exc}") from exc


def parse_ledger(data: Any, *, modified_at: datetime) -> list[LedgerEntry]:
    """Return the entries of a decoded ledger file of any readable version (migrated to version 3).

    Raises:
        ValueError: the document is not a ledger of a readable version and shape (see the module docstring).
    """
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    version = data.get("version")
    if type(version) is not int or version not in _READABLE_VERSIONS:  # True == 1 == 1.0: compare the type first
        raise ValueError(f"unknown version {version!r}")
    if version == 1:
        return _migrate_v1(data, modified_at=modified_at)
    if set(data) != {"version", "entries"}:
        raise ValueError(f"unexpected keys for version {version}: {sorted(data)}")
    rows = data["entries"]
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        raise ValueError("'entries' is not a list of objects")
    entries = [LedgerEntry.from_json(row, version=version, index=i) for i, row in enumerate(rows)]
    if len({entry.id for entry in entries}) != len(entries):
        raise ValueError("two ledger entries share an id")
    return entries


def _migrate_v1(data: Mapping[str, Any], *, modified_at: datetime) -> list[LedgerEntry]:
    if not set(data) <= _V1_KEYS or "accumulatedCostUsd" not in data:
        raise ValueError(f"not a version 1 ledger: keys {sorted(data)}")
    total = data["accumulatedCostUsd"]
    if isinstance(total, bool) or not isinstance(total, (int, float)) or not math.isfinite(total) or total < 0:
        raise ValueError(f"version 1 accumulatedCostUsd is not a non-negative number: {total!r}")
    if total == 0:
        return []
    return [
        LedgerEntry(
            at=modified_at, model="unknown", node="migrated-v1", cost_usd=float(total), estimated=True, id="v1-0"
        )
    ]


class SpendLedger(abc.ABC):
    """The rules every budget ledger follows, written once: the window, the cap check, the latched breaker.

    :class:`BudgetLedger` keeps the entries in a file, :class:`~dreaming.llm.ledger_postgres.PostgresBudgetLedger`
    in the fleet's Postgres; they differ only in where the entries live and how a change is made one atomic step.
    A subclass makes each change (:meth:`reserve`, :meth:`settle`, :meth:`release`, :meth:`record`) under its lock
    with the window just read, and answers :meth:`spend_in_window` and :meth:`reserved_in_window` from what it read.
    """

    in_database: ClassVar[bool] = False
    """True for the fleet's global ledger in Postgres (reported as such); False for a file."""

    def __init__(self, config: BudgetConfig, *, fail_closed: str | None = None) -> None:
        self._config = config
        self._tripped: str | None = f"ledger unusable, failing closed: {fail_closed}" if fail_closed else None
        self.problem = fail_closed
        """Why the stored ledger could not be used, if it could not."""
        self.moved_aside: Path | None = None
        """Where an unusable ledger file was moved (a file ledger's)."""

    @property
    def config(self) -> BudgetConfig:
        """The limits this ledger enforces."""
        return self._config

    def window_start(self, now: datetime) -> datetime:
        """Return the instant before which entries no longer count: an entry counts while ``at > window_start``."""
        return now - timedelta(minutes=self._config.window_minutes)

    @abc.abstractmethod
    def entries_in_window(self, now: datetime) -> tuple[LedgerEntry, ...]:
        """Entries newer than ``now - window`` (entries stamped in the future count too: clocks drift)."""

    @abc.abstractmethod
    def spend_in_window(self, now: datetime) -> float:
        """Sum of the costs of the entries in the window, reservations (at their estimate) included."""

    @abc.abstractmethod
    def reserved_in_window(self, now: datetime) -> float:
        """Return the part of :meth:`spend_in_window` held by reservations: calls in flight, or lost to a crash."""

    @property
    def tripped_reason(self) -> str | None:
        """Why the breaker is latched, or None while it has not tripped."""
        return self._tripped

    def is_tripped(self, now: datetime) -> bool:
        """Return True when LLM work must stop; once True it stays True for this ledger object (the run)."""
        if self._tripped is None:
            spend = self.spend_in_window(now)
            if spend >= self._config.max_cost_usd:
                self._tripped = f"spend ${spend:.4f} in the last {self._config.window_minutes:g} min reached the cap"
                self._tripped += f" ${self._config.max_cost_usd:g}"
                logger.warning("dreaming budget exceeded: %s", self._tripped)
        return self._tripped is not None

    def latch(self, reason: str) -> None:
        """Trip the breaker for the rest of the run (no-op when already tripped)."""
        if self._tripped is None:
            self._tripped = reason
            logger.warning("dreaming budget exceeded: %s", reason)

    def reserve(self, reservation: LedgerEntry, *, now: datetime) -> Decision:
        """Write ``reservation`` ahead of its request if its estimate fits under the cap, as one atomic step.

        Refused (``budget_exceeded``, and the breaker latched for the run) when the breaker is tripped or when the
        window's spend, reservations included, plus this estimate would pass the cap. Only an :class:`Allowed`
        reservation is stored when this returns; then the request may leave.

        Raises:
            ValueError: ``reservation`` is not marked ``reserved``.
            OSError: a file ledger could not be written (then nothing is reserved and the call must not be made).
        """
        if not reservation.reserved:
            raise ValueError("reserve() takes a reservation")
        return self._reserve(reservation, now)

    def settle(self, entry: LedgerEntry, *, now: datetime) -> None:
        """Replace the reservation with ``entry``'s id by ``entry`` (what the call cost), and store it.

        A reservation no longer held (it aged out during a very long call) is settled by adding ``entry``.
        """
        if entry.reserved:
            raise ValueError("settle() takes a settled entry")
        self._settle(entry, now)

    @abc.abstractmethod
    def release(self, reservation: LedgerEntry, *, now: datetime) -> None:
        """Drop a reservation whose request provably never left (the connection was refused), and store that."""

    @abc.abstractmethod
    def record(self, entry: LedgerEntry, *, now: datetime) -> None:
        """Add ``entry`` (a settled call or a cache hit), drop aged entries, store, re-check the breaker."""

    @abc.abstractmethod
    def _reserve(self, reservation: LedgerEntry, now: datetime) -> Decision:
        """Under the ledger's lock with the window just read: :meth:`_refusal`, or store ``reservation``."""

    @abc.abstractmethod
    def _settle(self, entry: LedgerEntry, now: datetime) -> None:
        """Under the ledger's lock: replace (or add) the entry of ``entry.id``."""

    def _refusal(self, reservation: LedgerEntry, now: datetime) -> Skipped | None:
        """Return why ``reservation`` must not be written (the breaker, then the cap), or None when it fits.

        Called under the ledger's lock, with :meth:`spend_in_window` as just read: the check and the write that
        follows are one step, so the spend recorded never passes the cap.
        """
        if self.is_tripped(now):
            return Skipped(reason="budget_exceeded", detail=self._tripped or "")
        spend = self.spend_in_window(now)
        cap = self._config.max_cost_usd
        if spend + reservation.cost_usd > cap:
            detail = (
                f"window spend ${spend:.4f} (${self.reserved_in_window(now):.4f} of it reserved by calls in flight"
                f" or lost) + this call's estimate ${reservation.cost_usd:.4f} would pass the cap ${cap:g}"
            )
            self.latch(detail)
            return Skipped(reason="budget_exceeded", detail=detail)
        return None

    def _note_aged(self, count: int, cost: float) -> None:
        """Log the entries a write dropped because they aged out of the window."""
        if count:
            # Upstream reset the sum silently at window expiry; say what aged out.
            logger.info(
                "%d ledger entries ($%.4f) aged out of the %g-minute window", count, cost, self._config.window_minutes
            )


class BudgetLedger(SpendLedger):
    """The window's entries, the breaker and its latch, for one run, kept in a file.

    Create with :meth:`load`. Every change (:meth:`reserve`, :meth:`settle`, :meth:`release`, :meth:`record`)
    writes the file atomically before it returns, under a lock shared by the run's concurrent calls.
    """

    def __init__(
        self,
        path: Path,
        config: BudgetConfig,
        *,
        entries: Iterable[LedgerEntry] = (),
        fail_closed: str | None = None,
        shared: bool = False,
    ) -> None:
        super().__init__(config, fail_closed=fail_closed)
        self.path = path
        self.shared = shared
        """True when other processes write this file too (a fleet's ledger): each change re-reads it under a lock."""
        self._entries = list(entries)
        self._lock = threading.RLock()

    @classmethod
    def load(cls, path: Path, config: BudgetConfig, *, now: datetime, shared: bool = False) -> BudgetLedger:
        """Read the ledger; a missing one starts empty, an unusable one is moved aside and starts tripped.

        ``shared``: other processes write it too (see the module docstring); it is read under its file lock.
        """
        if shared:
            ledger = cls(path, config, shared=True)
            with ledger._exclusive(now):
                pass
            return ledger
        state = read_state(path, versions=_READABLE_VERSIONS, now=now)
        if state.data is None:
            ledger = cls(path, config, fail_closed=state.problem)
            ledger.moved_aside = state.moved_aside
            return ledger
        try:
            modified_at = min(datetime.fromtimestamp(path.stat().st_mtime, UTC), now)
            entries = parse_ledger(state.data, modified_at=modified_at)
        except (ValueError, OSError) as exc:
            ledger = cls(path, config, fail_closed=str(exc))
            ledger.moved_aside = move_aside(path, now)
            return ledger
        return cls(path, config, entries=entries)

    @classmethod
    def peek(cls, path: Path, config: BudgetConfig, *, now: datetime) -> BudgetLedger:
        """Read the ledger without changing anything on disk (for ``dreaming status``).

        An unusable file gives a tripped ledger whose ``problem`` says why; it is left where it is.
        """
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return cls(path, config)
        try:
            data = json.loads(raw.decode("utf-8"))
            modified_at = min(datetime.fromtimestamp(path.stat().st_mtime, UTC), now)
            return cls(path, config, entries=parse_ledger(data, modified_at=modified_at))
        except (ValueError, UnicodeDecodeError, OSError) as exc:
            return cls(path, config, fail_closed=str(exc))

    @contextlib.contextmanager
    def _exclusive(self, now: datetime) -> Iterator[None]:
        """Hold the run's lock and, for a shared ledger, the file lock with the entries just re-read from disk."""
        with self._lock:
            if not self.shared:
                yield
                return
            lock_path = self.path.with_name(self.path.name + ".lock")
            check_write_path(lock_path)
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)  # released when fd is closed, or by the kernel if this process dies
                self._reread(now)
                yield
            finally:
                os.close(fd)

    def _reread(self, now: datetime) -> None:
        """Replace the held entries by the file's (under the file lock); an unusable file latches the breaker."""
        state = read_state(self.path, versions=_READABLE_VERSIONS, now=now)
        problem = state.problem
        entries: list[LedgerEntry] = []
        if state.data is not None:
            try:
                modified_at = min(datetime.fromtimestamp(self.path.stat().st_mtime, UTC), now)
                entries = parse_ledger(state.data, modified_at=modified_at)
            except (ValueError, OSError) as exc:
                problem = str(exc)
                self.moved_aside = move_aside(self.path, now)
        if problem is not None:
            self.problem = problem
            self.moved_aside = self.moved_aside or state.moved_aside
            self.latch(f"ledger unusable, failing closed: {problem}")
            return  # keep what this run knew: losing the record must not unlock spending
        self._entries = entries

    @property
    def entries(self) -> tuple[LedgerEntry, ...]:
        """Every entry held (a copy: entries are immutable)."""
        return tuple(self._entries)

    def entries_in_window(self, now: datetime) -> tuple[LedgerEntry, ...]:
        """Entries newer than ``now - window`` (entries stamped in the future count too: clocks drift)."""
        start = self.window_start(now)
        return tuple(entry for entry in self._entries if entry.at > start)

    def spend_in_window(self, now: datetime) -> float:
        """Sum of the costs of the entries in the window, reservations (at their estimate) included."""
        return math.fsum(entry.cost_usd for entry in self.entries_in_window(now))

    def reserved_in_window(self, now: datetime) -> float:
        """Return the part of :meth:`spend_in_window` held by reservations: calls in flight, or lost to a crash."""
        return math.fsum(entry.cost_usd for entry in self.entries_in_window(now) if entry.reserved)

    def _reserve(self, reservation: LedgerEntry, now: datetime) -> Decision:
        with self._exclusive(now):
            refusal = self._refusal(reservation, now)
            if refusal is not None:
                return refusal
            self._commit([*self._entries, reservation], now=now)  # on disk (fsynced) before the request leaves
            return Allowed()

    def _settle(self, entry: LedgerEntry, now: datetime) -> None:
        with self._exclusive(now):
            kept = [e for e in self._entries if e.id != entry.id]
            self._commit([*kept, entry], now=now)

    def release(self, reservation: LedgerEntry, *, now: datetime) -> None:
        """Drop a reservation whose request provably never left (the connection was refused), and write the file."""
        with self._exclusive(now):
            self._commit([e for e in self._entries if not (e.reserved and e.id == reservation.id)], now=now)

    def record(self, entry: LedgerEntry, *, now: datetime) -> None:
        """Add ``entry`` (a settled call or a cache hit), drop aged entries, write the file, re-check the breaker."""
        with self._exclusive(now):
            self._commit([*self._entries, entry], now=now)

    def _commit(self, entries: list[LedgerEntry], *, now: datetime) -> None:
        start = self.window_start(now)
        aged = [e for e in entries if e.at <= start]
        if aged:
            self._note_aged(len(aged), math.fsum(e.cost_usd for e in aged))
            entries = [e for e in entries if e.at > start]
        self._write(entries)
        self._entries = entries  # only once on disk: a failed write changes nothing
        self.is_tripped(now)

    def save(self) -> None:
        """Write the held entries (version 3), atomically and fsynced; identical bytes are not rewritten."""
        with self._lock:
            self._write(self._entries)

    def _write(self, entries: list[LedgerEntry]) -> None:
        atomic_write_json(self.path, {"version": LEDGER_VERSION, "entries": [entry.to_json() for entry in entries]})
