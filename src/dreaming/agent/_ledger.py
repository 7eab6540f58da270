"""The spend ledger and the cost breaker (spec/budget.md).

``memory/.dreams/dreaming-budget.json`` holds the entries of the current window, version 2::

    {"version": 2, "entries": [{"at": ISO, "model", "node", "gap", "input_tokens", "output_tokens",
                                "cached_tokens", "cost_usd", "estimated", "cache_hit", "over_output_cap"}, ...]}

``over_output_cap`` (written only when true, read as false when absent) flags a reply whose reported completion tokens
passed the output cap the request carried: it is recorded at that real usage, not at the estimate.

The window is truly sliding: the spend is the sum of the entries newer than ``now - window``, and each entry ages out on
its own (PR #65589's window was tumbling: it reset the whole sum at expiry). The breaker trips when the spend reaches
the cap (``>=``) and stays tripped for the life of the ledger object, that is, the run (latched). A new run starts
tripped while the window's spend is still at or over the cap.

Fail closed: an unreadable or unknown-version ledger is moved aside and the run starts tripped, because losing the
spend record must not unlock spending. A missing ledger starts empty.

Migration 1 -> 2: PR #65589's version 1 file ``{version: 1, windowStartMs, accumulatedCostUsd, sessionsSpawned}``
only knows a total, not when each call happened. It becomes one estimated entry of ``accumulatedCostUsd`` stamped with
the file's modification time (the moment of its last recorded call), which is the latest the spend can have happened,
so the migrated spend stays in the window as long as it possibly could.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from dreaming.config import BudgetConfig
from dreaming.memory import atomic_write_json, move_aside, read_state

__all__ = ["LEDGER_VERSION", "BudgetLedger", "LedgerEntry"]

logger = logging.getLogger(__name__)

LEDGER_VERSION = 2
"""Version 1 was PR #65589's tumbling-window total; see the module docstring for its migration."""
_READABLE_VERSIONS = (1, LEDGER_VERSION)


@dataclass(frozen=True, kw_only=True, slots=True)
class LedgerEntry:
    """One model call (or cache hit) as recorded in the ledger."""

    at: datetime
    """When the call finished (timezone-aware)."""
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
    """True when the API reported no usage and the pre-call estimate was recorded instead."""
    cache_hit: bool = False
    """True when the answer came from dreaming's own cache of identical requests (no call was made)."""
    over_output_cap: bool = False
    """True when the reply reported more completion tokens than the output cap sent (the server ignored it)."""

    def __post_init__(self) -> None:
        if self.at.tzinfo is None:
            raise ValueError("ledger times must be timezone-aware")
        if isinstance(self.cost_usd, bool) or not math.isfinite(self.cost_usd) or self.cost_usd < 0:
            raise ValueError(f"cost_usd must be a finite non-negative number, got {self.cost_usd!r}")
        for name in ("input_tokens", "output_tokens", "cached_tokens"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be a non-negative integer, got {value!r}")

    def to_json(self) -> dict[str, Any]:
        """Return the stored form."""
        row = asdict(self)
        row["at"] = self.at.isoformat()
        if not self.over_output_cap:
            del row["over_output_cap"]  # written only when set: most entries never carry it
        return row

    @classmethod
    def from_json(cls, row: Mapping[str, Any]) -> LedgerEntry:
        """Parse the stored form.

        Raises:
            ValueError: a field is missing or invalid.
        """
        try:
            return cls(
                at=datetime.fromisoformat(str(row["at"])),
                model=str(row["model"]),
                node=str(row["node"]),
                gap=None if row.get("gap") is None else str(row["gap"]),
                input_tokens=row.get("input_tokens", 0),
                output_tokens=row.get("output_tokens", 0),
                cached_tokens=row.get("cached_tokens", 0),
                cost_usd=float(row["cost_usd"]),
                estimated=bool(row.get("estimated", False)),
                cache_hit=bool(row.get("cache_hit", False)),
                over_output_cap=bool(row.get("over_output_cap", False)),
            )
        except (KeyError, TypeError) as exc:
            raise ValueError(f"invalid ledger entry {row!r}: {exc}") from exc


def _parse_entries(data: Mapping[str, Any], *, modified_at: datetime) -> list[LedgerEntry]:
    if data.get("version") == 1:
        total = data.get("accumulatedCostUsd", 0)
        if isinstance(total, bool) or not isinstance(total, (int, float)) or not math.isfinite(total) or total < 0:
            raise ValueError(f"version 1 accumulatedCostUsd is not a non-negative number: {total!r}")
        if total == 0:
            return []
        return [LedgerEntry(at=modified_at, model="unknown", node="migrated-v1", cost_usd=float(total), estimated=True)]
    rows = data.get("entries")
    if not isinstance(rows, list) or not all(isinstance(row, Mapping) for row in rows):
        raise ValueError("'entries' is not a list of objects")
    return [LedgerEntry.from_json(row) for row in rows]


class BudgetLedger:
    """The window's entries, the breaker and its latch, for one run.

    Create with :meth:`load`; every :meth:`record` writes the file atomically.
    """

    def __init__(
        self,
        path: Path,
        config: BudgetConfig,
        *,
        entries: Iterable[LedgerEntry] = (),
        fail_closed: str | None = None,
    ) -> None:
        self.path = path
        self._config = config
        self._entries = list(entries)
        self._tripped: str | None = f"ledger unusable, failing closed: {fail_closed}" if fail_closed else None
        self.problem = fail_closed
        """Why the stored ledger could not be used, if it could not."""
        self.moved_aside: Path | None = None
        """Where an unusable ledger file was moved."""

    @classmethod
    def load(cls, path: Path, config: BudgetConfig, *, now: datetime) -> BudgetLedger:
        """Read the ledger; a missing one starts empty, an unusable one is moved aside and starts tripped."""
        state = read_state(path, versions=_READABLE_VERSIONS, now=now)
        if state.data is None:
            ledger = cls(path, config, fail_closed=state.problem)
            ledger.moved_aside = state.moved_aside
            return ledger
        try:
            modified_at = min(datetime.fromtimestamp(path.stat().st_mtime, UTC), now)
            entries = _parse_entries(state.data, modified_at=modified_at)
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
            if not isinstance(data, dict) or data.get("version") not in _READABLE_VERSIONS:
                raise ValueError(f"unknown version {data.get('version') if isinstance(data, dict) else None!r}")
            modified_at = min(datetime.fromtimestamp(path.stat().st_mtime, UTC), now)
            return cls(path, config, entries=_parse_entries(data, modified_at=modified_at))
        except (ValueError, UnicodeDecodeError, OSError) as exc:
            return cls(path, config, fail_closed=str(exc))

    @property
    def config(self) -> BudgetConfig:
        """The limits this ledger enforces."""
        return self._config

    @property
    def entries(self) -> tuple[LedgerEntry, ...]:
        """Every entry held (a copy: entries are immutable)."""
        return tuple(self._entries)

    def window_start(self, now: datetime) -> datetime:
        """Return the instant before which entries no longer count."""
        return now - timedelta(minutes=self._config.window_minutes)

    def entries_in_window(self, now: datetime) -> tuple[LedgerEntry, ...]:
        """Entries newer than ``now - window`` (entries stamped in the future count too: clocks drift)."""
        start = self.window_start(now)
        return tuple(entry for entry in self._entries if entry.at > start)

    def spend_in_window(self, now: datetime) -> float:
        """Sum of the costs of the entries in the window."""
        return math.fsum(entry.cost_usd for entry in self.entries_in_window(now))

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

    def record(self, entry: LedgerEntry, *, now: datetime) -> None:
        """Add ``entry``, drop entries older than the window, write the file atomically, and re-check the breaker."""
        self._entries.append(entry)
        start = self.window_start(now)
        aged = [e for e in self._entries if e.at <= start]
        if aged:
            # Upstream reset the sum silently at window expiry; say what aged out.
            logger.info(
                "%d ledger entries ($%.4f) aged out of the %g-minute window",
                len(aged),
                math.fsum(e.cost_usd for e in aged),
                self._config.window_minutes,
            )
            self._entries = [e for e in self._entries if e.at > start]
        self.save()
        self.is_tripped(now)

    def save(self) -> None:
        """Write the held entries (version 2), atomically; identical bytes are not rewritten."""
        payload = {"version": LEDGER_VERSION, "entries": [entry.to_json() for entry in self._entries]}
        atomic_write_json(self.path, payload)
