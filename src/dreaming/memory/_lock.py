"""The consolidation lock: one run per workspace.

The file holds ``<pid>:<epoch ms>`` so people and OpenClaw's tooling can see the holder. Mutual exclusion itself
comes from ``fcntl.flock`` on that file, which the kernel releases when the holder dies: a dead holder's lock is
therefore stale by construction, and taking it over is logged rather than guessed at from timestamps.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from dreaming.errors import LockBusyError
from dreaming.memory._io import before_write

__all__ = ["ConsolidationLock", "pid_alive"]

_log = logging.getLogger(__name__)


def pid_alive(pid: int) -> bool:
    """Return whether a process with ``pid`` exists (EPERM counts as alive, as OpenClaw does)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass
class ConsolidationLock:
    """Exclusive per-workspace lock, held for a whole run.

    Args:
        path: the lock file.
        timeout_s: how long a second run waits before giving up with :class:`LockBusyError`.
        poll_s: how often a waiting run retries.
        clock_ms: epoch milliseconds, injected so tests control the stamp.
    """

    path: Path
    timeout_s: float = 10.0
    poll_s: float = 0.05
    clock_ms: Callable[[], int] = lambda: int(time.time() * 1000)
    took_over: str | None = None
    _fd: int | None = None

    def holder(self) -> str:
        """Return the current content of the lock file (``<pid>:<ms>``), or ``""``."""
        try:
            return self.path.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            return ""

    def acquire(self) -> None:
        """Take the lock, waiting up to ``timeout_s``; raise :class:`LockBusyError` naming the holder."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + self.timeout_s
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                if time.monotonic() >= deadline:
                    raise LockBusyError(self.path, self.holder() or "unknown") from None
                time.sleep(self.poll_s)
                continue
            # The file may have been unlinked by the previous holder between our open and flock.
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if not same:
                os.close(fd)
                continue
            break
        previous = os.read(fd, 256).decode("utf-8", errors="replace").strip()
        if previous:
            pid_text = previous.split(":", 1)[0]
            state = "dead" if not (pid_text.isdigit() and pid_alive(int(pid_text))) else "unlocked"
            self.took_over = previous
            _log.warning("took over a stale dreaming lock %s (holder %s, %s)", self.path, previous, state)
        try:
            before_write(self.path)
        except OSError:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, f"{os.getpid()}:{self.clock_ms()}\n".encode())
        os.fsync(fd)
        self._fd = fd

    def release(self) -> None:
        """Remove the lock file and release the lock."""
        if self._fd is None:
            return
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> ConsolidationLock:
        self.acquire()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()
