"""A long-lived handle on the memory index, for callers that search many times (a research night, an agent).

``search_memory`` re-checks every file's size and mtime before each query, which is right for a one-off search
but costs as much as the search itself on a large workspace. ``MemoryIndex`` keeps the index open and re-checks
the files at most once every ``max_staleness_s`` seconds, so a burst of searches pays for one check.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from types import TracebackType

from dreaming.memory.search._index import IndexRefresh, open_index, refresh_index
from dreaming.memory.search._search import SearchHit, search_index
from dreaming.memory.workspace import Workspace

__all__ = ["DEFAULT_MAX_STALENESS_S", "MemoryIndex"]

DEFAULT_MAX_STALENESS_S = 2.0
"""How old the last check of the files may be before a search checks them again."""


class MemoryIndex:
    """An open memory index that refreshes itself lazily; safe to share between threads."""

    def __init__(
        self,
        ws: Workspace,
        *,
        max_staleness_s: float = DEFAULT_MAX_STALENESS_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._ws = ws
        self._max_staleness_s = max_staleness_s
        self._clock = clock
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._checked_at: float | None = None

    def refresh(self) -> IndexRefresh:
        """Re-check the files now and re-index what changed."""
        with self._lock:
            return self._refresh_locked()

    def _refresh_locked(self) -> IndexRefresh:
        if self._conn is None:
            self._conn = open_index(self._ws)
        result = refresh_index(self._ws, self._conn)
        self._checked_at = self._clock()
        return result

    def search(self, query: str, *, limit: int = 8) -> list[SearchHit]:
        """Search, re-checking the files first when the last check is older than the staleness bound."""
        with self._lock:
            if (
                self._conn is None
                or self._checked_at is None
                or self._clock() - self._checked_at > self._max_staleness_s
            ):
                self._refresh_locked()
            assert self._conn is not None
            return search_index(self._conn, query, limit=limit)

    def close(self) -> None:
        """Close the index."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> MemoryIndex:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
