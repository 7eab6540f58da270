"""``memory/.dreams/knowledge-gaps.json``: record, list, select and settle knowledge gaps.

The file is ``{"version": 1, "gaps": {<normalized query>: {...}}}``. Every change is a read-modify-write under an
in-process lock and an ``fcntl`` lock on ``knowledge-gaps.lock``, so concurrent recorders (threads or processes)
lose nothing. An unreadable or wrong-version file is moved aside and the store starts empty.

Lifecycle (spec/research.md): a gap is ``open`` until research keeps a finding (``kept``). A fruitless attempt
(discarded, abstained, failed) leaves it ``open`` but waiting ``2 ** (attempts - 1)`` days (1, 2, 4 nights); after
:data:`MAX_FRUITLESS_ATTEMPTS` it goes to the ``backlog`` for the user. A ``kept`` gap that is recorded again a
day or more after it was kept re-opens: the finding evidently did not answer it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import threading
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any, Literal

from dreaming.memory._secrets import redact_secrets
from dreaming.memory.files import atomic_write_json, before_write, read_state, record_event
from dreaming.memory.gaps._model import GapStatus, GapType, KnowledgeGap, normalize_query
from dreaming.memory.workspace import Workspace

__all__ = [
    "BACKOFF_SLACK",
    "MAX_FRUITLESS_ATTEMPTS",
    "MAX_GAPS",
    "STORE_VERSION",
    "list_gaps",
    "record_attempt",
    "record_gap",
    "select_gaps_for_night",
]

STORE_VERSION = 1
MAX_GAPS = 2000
"""The store keeps at most this many gaps, evicting closed ones first, then backlog, then open, oldest first."""
MAX_FRUITLESS_ATTEMPTS = 4
"""After this many fruitless attempts a gap goes to the backlog."""
BACKOFF_SLACK = timedelta(hours=6)
"""A gap whose wait ends within this much after ``now`` is selected: nightly runs drift by minutes or hours, and a
one-night backoff must not turn into two because tonight's run started a little earlier than last night's."""
REOPEN_AFTER = timedelta(days=1)
"""A kept gap recorded again at least this long after it was kept re-opens."""

AttemptOutcome = Literal["kept", "discarded", "abstained", "failed"]

_log = logging.getLogger(__name__)
_thread_locks: dict[str, threading.Lock] = {}
_thread_locks_guard = threading.Lock()
_EVICTION_ORDER = {"kept": 0, "discarded": 0, "unresolved": 0, "backlog": 1, "open": 2}


@contextlib.contextmanager
def _locked(ws: Workspace) -> Iterator[None]:
    lock_path = ws.state_dir / "knowledge-gaps.lock"
    with _thread_locks_guard:
        thread_lock = _thread_locks.setdefault(str(lock_path), threading.Lock())
    with thread_lock:
        before_write(lock_path)
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        with lock_path.open("a") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _load(ws: Workspace, now: datetime) -> dict[str, KnowledgeGap]:
    loaded = read_state(ws.knowledge_gaps, versions=(STORE_VERSION,), now=now)
    if loaded.moved_aside is not None:
        _log.warning("%s was unreadable (%s); moved aside to %s", ws.knowledge_gaps, loaded.problem, loaded.moved_aside)
        record_event(ws.events, "gap.store_moved_aside", now, problem=loaded.problem, moved_to=str(loaded.moved_aside))
    return _parse(ws, loaded.data)


def _peek(ws: Workspace) -> dict[str, KnowledgeGap]:
    """Read the store without the lock and without changing anything.

    The store is replaced atomically, so a reader sees a whole file; an unreadable one reads as empty and is left
    for the next writer to move aside.
    """
    try:
        data = json.loads(ws.knowledge_gaps.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        return {}
    except (UnicodeDecodeError, ValueError) as exc:
        _log.warning("%s is unreadable (%s); listing no gaps", ws.knowledge_gaps, exc)
        return {}
    if not isinstance(data, dict) or type(data.get("version")) is not int or data["version"] != STORE_VERSION:
        _log.warning("%s is not a version %d store; listing no gaps", ws.knowledge_gaps, STORE_VERSION)
        return {}
    return _parse(ws, data)


def _parse(ws: Workspace, data: dict[str, Any] | None) -> dict[str, KnowledgeGap]:
    raw = (data or {}).get("gaps") or {}
    gaps: dict[str, KnowledgeGap] = {}
    if not isinstance(raw, dict):
        _log.warning("%s: 'gaps' is not an object; ignoring it", ws.knowledge_gaps)
        return gaps
    for key, value in raw.items():
        try:
            gaps[key] = KnowledgeGap.from_json(key, value)
        except ValueError as exc:
            _log.warning("%s: skipping gap %r: %s", ws.knowledge_gaps, key, exc)
    return gaps


def _save(ws: Workspace, gaps: dict[str, KnowledgeGap]) -> None:
    if len(gaps) > MAX_GAPS:
        ranked = sorted(gaps.values(), key=lambda g: (_EVICTION_ORDER[g.status], g.last_seen, g.count, g.key))
        for gap in ranked[: len(gaps) - MAX_GAPS]:
            del gaps[gap.key]
    payload = {"version": STORE_VERSION, "gaps": {key: gaps[key].to_json() for key in sorted(gaps)}}
    atomic_write_json(ws.knowledge_gaps, payload)


def record_gap(ws: Workspace, query: str, gap_type: GapType, *, best_score: float, now: datetime) -> KnowledgeGap:
    """Record one occurrence of a gap, aggregated with earlier ones by normalized query; return the updated gap.

    Key-like strings in the query (API keys, tokens, private keys) are redacted before anything is stored or logged:
    a search someone pasted a key into must not leave the key in ``knowledge-gaps.json`` or the event log.

    Raises:
        ValueError: the query is blank once normalized.
    """
    query = redact_secrets(query)
    key = normalize_query(query)
    if not key:
        raise ValueError("a knowledge gap needs a query with some text")
    score = min(1.0, max(0.0, float(best_score)))
    with _locked(ws):
        gaps = _load(ws, now)
        old = gaps.get(key)
        if old is None:
            gap = KnowledgeGap(
                key=key, query=query.strip(), first_seen=now, last_seen=now, count=1, best_score=score,
                type=gap_type, status="open",
            )  # fmt: skip
        else:
            status: GapStatus = old.status
            if status == "kept" and old.last_attempt is not None and now - old.last_attempt >= REOPEN_AFTER:
                status = "open"
            gap = replace(
                old, first_seen=min(old.first_seen, now), last_seen=max(old.last_seen, now), count=old.count + 1,
                best_score=max(old.best_score, score), type=gap_type, status=status,
            )  # fmt: skip
        gaps[key] = gap
        _save(ws, gaps)
    record_event(
        ws.events, "gap.recorded", now, key=key, query=gap.query, gap_type=gap_type, best_score=score,
        count=gap.count, status=gap.status,
    )  # fmt: skip
    return gap


def list_gaps(ws: Workspace, *, status: GapStatus | None = None, now: datetime | None = None) -> list[KnowledgeGap]:
    """Return the stored gaps (only those with ``status`` when given), by count desc, last seen desc, then query.

    Reading writes nothing (no lock file, nothing moved aside): ``dreaming status`` and ``gap list`` use it. An
    unreadable store lists no gaps. ``now`` is kept for callers' symmetry; it changes nothing.
    """
    del now
    gaps = _peek(ws)
    chosen = [gap for gap in gaps.values() if status is None or gap.status == status]
    return sorted(chosen, key=lambda g: (-g.count, -g.last_seen.timestamp(), g.key))


def select_gaps_for_night(ws: Workspace, *, now: datetime, max_gaps: int) -> list[KnowledgeGap]:
    """Return at most ``max_gaps`` open gaps to research tonight: most frequent first, then most recent.

    A gap still waiting in backoff is skipped, unless its wait ends within :data:`BACKOFF_SLACK` of ``now``. A gap
    this very night already attempted (``last_attempt == now``: the night failed after recording it and runs again)
    is selected as it was the first time, whatever its status now, so that its finding is not lost with the failed
    run's state.
    """
    if max_gaps <= 0:
        return []
    ready = [
        gap
        for gap in list_gaps(ws, now=now)
        if gap.last_attempt == now
        or (gap.status == "open" and (gap.next_attempt_after is None or gap.next_attempt_after <= now + BACKOFF_SLACK))
    ]
    return ready[:max_gaps]


def record_attempt(ws: Workspace, key: str, *, outcome: AttemptOutcome, now: datetime) -> KnowledgeGap:
    """Record a research attempt on the gap ``key`` (a normalized query) and return the updated gap.

    ``kept`` closes the gap. Any other outcome is fruitless: ``attempts`` rises by one and the gap waits
    ``2 ** (attempts - 1)`` days, or goes to the backlog once it reaches :data:`MAX_FRUITLESS_ATTEMPTS`.

    Raises:
        KeyError: no gap has that key.
    """
    with _locked(ws):
        gaps = _load(ws, now)
        old = gaps[normalize_query(key)]
        if outcome == "kept":
            gap = replace(old, status="kept", last_attempt=now, last_outcome=outcome, next_attempt_after=None)
        else:
            attempts = old.attempts + 1
            backlog = attempts >= MAX_FRUITLESS_ATTEMPTS
            gap = replace(
                old, attempts=attempts, last_attempt=now, last_outcome=outcome,
                status="backlog" if backlog else "open",
                next_attempt_after=None if backlog else now + timedelta(days=2 ** (attempts - 1)),
            )  # fmt: skip
        gaps[gap.key] = gap
        _save(ws, gaps)
    record_event(
        ws.events, "gap.attempted", now, key=gap.key, outcome=outcome, attempts=gap.attempts, status=gap.status
    )
    return gap
