"""The workspace: where every file lives, what stays inside it, who holds it, and what a run decided before writing.

- :class:`Workspace`: every path under one injected root (spec/workspace.md); :func:`check_confined` and
  :func:`init_workspace`.
- :class:`ConsolidationLock`: one run per workspace. The file holds ``<pid>:<epoch ms>`` so people and OpenClaw's
  tooling can see the holder. Mutual exclusion itself comes from ``fcntl.flock`` on that file, which the kernel
  releases when the holder dies: a dead holder's lock is therefore stale by construction, and taking it over is logged
  rather than guessed at from timestamps.
- :func:`settled_decision`: the run plan ``memory/.dreams/deep-plan.json``, reused when the run is resumed. A step that
  writes several files and reports what it did (promoted, updated, created...) learns the answer from the files
  themselves; a run that failed after some of those writes and is resumed would find them already there and report
  "unchanged". So the step records each decision here *before* the write it describes, under the run's id, and a
  resumed run reports the recorded decision. The file belongs to the running night and is removed when the run ends.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from dreaming.errors import LockBusyError, NotAWorkspaceError
from dreaming.memory.files import atomic_write_json, atomic_write_text, before_write, check_write_path, read_state

__all__ = [
    "MEMORY_SKELETON",
    "ConsolidationLock",
    "Workspace",
    "check_confined",
    "init_workspace",
    "pid_alive",
    "settled_decision",
]

_log = logging.getLogger(__name__)

MEMORY_SKELETON = "# Long-Term Memory\n"
"""What ``dreaming init`` puts in a new MEMORY.md."""


@dataclass(frozen=True, slots=True)
class Workspace:
    """One agent's memory folder. Every path dreaming touches is derived from ``root``."""

    root: Path

    @classmethod
    def at(cls, root: str | Path) -> Workspace:
        """Return the workspace rooted at ``root`` (made absolute, not required to exist yet)."""
        return cls(Path(root).expanduser().resolve())

    # User-facing files.
    @property
    def memory_md(self) -> Path:
        """Long-term memory; dreaming writes only inside its marked blocks."""
        return self.root / "MEMORY.md"

    @property
    def dreams_md(self) -> Path:
        """The dream diary, one entry per run."""
        return self.root / "DREAMS.md"

    @property
    def config_file(self) -> Path:
        """Optional configuration."""
        return self.root / "dreaming.toml"

    @property
    def prices_dir(self) -> Path:
        """Market prices for the verdict path, one CSV per asset."""
        return self.root / "prices"

    @property
    def memory_dir(self) -> Path:
        """Daily notes live anywhere under here (except the folders dreaming owns)."""
        return self.root / "memory"

    @property
    def insights_dir(self) -> Path:
        """One markdown file per active insight."""
        return self.memory_dir / "insights"

    @property
    def archive_dir(self) -> Path:
        """Retired insights, kept forever."""
        return self.insights_dir / "archive"

    @property
    def reports_dir(self) -> Path:
        """Phase reports ``memory/dreaming/<phase>/YYYY-MM-DD.md`` (OpenClaw's separate storage mode)."""
        return self.memory_dir / "dreaming"

    # Machine state.
    @property
    def state_dir(self) -> Path:
        """``memory/.dreams``: machine state, every JSON file versioned."""
        return self.memory_dir / ".dreams"

    @property
    def recall_store(self) -> Path:
        """OpenClaw's recall store, version 1 format."""
        return self.state_dir / "short-term-recall.json"

    @property
    def phase_signals(self) -> Path:
        """OpenClaw's phase signals, version 1 format."""
        return self.state_dir / "phase-signals.json"

    @property
    def events(self) -> Path:
        """Append-only event log."""
        return self.state_dir / "events.jsonl"

    @property
    def verdicts(self) -> Path:
        """Committee verdicts (input)."""
        return self.state_dir / "verdicts.jsonl"

    @property
    def verdict_review(self) -> Path:
        """Each verdict with its forward outcomes."""
        return self.state_dir / "verdict_review.jsonl"

    @property
    def verdict_signals(self) -> Path:
        """Light-sleep output of the verdict path."""
        return self.state_dir / "verdict-signals.jsonl"

    @property
    def candidates(self) -> Path:
        """REM output of the verdict path: every scored bucket."""
        return self.state_dir / "candidates.json"

    @property
    def deep_plan(self) -> Path:
        """What the running night decided before writing (:func:`settled_decision`; removed when the run ends)."""
        return self.state_dir / "deep-plan.json"

    @property
    def knowledge_gaps(self) -> Path:
        """Knowledge gaps aggregated by normalized query."""
        return self.state_dir / "knowledge-gaps.json"

    @property
    def research_log(self) -> Path:
        """One line per research attempt."""
        return self.state_dir / "research.jsonl"

    @property
    def budget_ledger(self) -> Path:
        """The LLM spend ledger."""
        return self.state_dir / "dreaming-budget.json"

    @property
    def checkpoints(self) -> Path:
        """LangGraph checkpoints, so that a crashed run resumes."""
        return self.state_dir / "checkpoints.sqlite"

    @property
    def lock_file(self) -> Path:
        """The consolidation lock: ``<pid>:<epoch ms>``."""
        return self.state_dir / "dreaming.lock"

    @property
    def search_index(self) -> Path:
        """The embedded memory-search index (SQLite FTS5)."""
        return self.state_dir / "search-index.sqlite"

    @property
    def is_workspace(self) -> bool:
        """Whether the root holds MEMORY.md, memory/ or dreaming.toml (a folder without any is refused)."""
        return any(p.exists() for p in (self.memory_md, self.memory_dir, self.config_file))

    def require(self) -> None:
        """Refuse a folder that is not a workspace; reads nothing else and writes nothing.

        Raises:
            NotAWorkspaceError: none of MEMORY.md, memory/ and dreaming.toml exists (``dreaming init`` makes them).
        """
        if not self.is_workspace:
            raise NotAWorkspaceError(self.root)

    def contains(self, path: Path) -> bool:
        """Return whether the real path of ``path`` (symbolic links followed) is inside the root.

        Notes that fail this are neither read, indexed nor recorded: a link in ``memory/`` must not pull an outside
        file into the memory.
        """
        root = os.path.realpath(self.root)
        real = os.path.realpath(path)
        return real == root or real.startswith(root.rstrip(os.sep) + os.sep)

    def relative(self, path: Path) -> str:
        """Return ``path`` relative to the root in POSIX form (as stored in state files)."""
        try:
            return path.resolve().relative_to(self.root).as_posix()
        except ValueError:
            return path.as_posix()


def check_confined(ws: Workspace) -> None:
    """Check, before a run takes its lock, that no folder or file dreaming owns leads out of the workspace.

    Each write checks its own path again (:func:`check_write_path`); this makes a planted link fail the run at its
    start, before anything is written, rather than midway. The recall store checks its own files the same way
    (``recall.check_recall_store_confined``): among them the one file outside the workspace dreaming may write,
    OpenClaw 2026.9's recall database.

    Raises:
        OutsideWorkspaceError: naming the first linked path.
    """
    owned = (
        ws.memory_md, ws.dreams_md, ws.insights_dir, ws.archive_dir, ws.reports_dir, ws.state_dir, ws.lock_file,
        ws.events, ws.checkpoints, ws.recall_store, ws.knowledge_gaps, ws.research_log, ws.budget_ledger,
    )  # fmt: skip
    for path in owned:
        check_write_path(path)


def init_workspace(ws: Workspace) -> list[str]:
    """Make ``ws.root`` a workspace: create the root, ``memory/``, ``memory/.dreams/`` and MEMORY.md when missing.

    Nothing that exists is changed. Returns what was created, workspace-relative.

    Raises:
        OutsideWorkspaceError: one of these paths is a symbolic link.
    """
    created: list[str] = []
    for folder in (ws.root, ws.memory_dir, ws.state_dir):
        if folder != ws.root:
            check_write_path(folder)
        if not folder.is_dir():
            folder.mkdir(parents=True, exist_ok=True)
            created.append(f"{ws.relative(folder)}/" if folder != ws.root else ".")
    if not ws.memory_md.exists():
        atomic_write_text(ws.memory_md, MEMORY_SKELETON)
        created.append(ws.relative(ws.memory_md))
    return created


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


_PLAN_VERSION = 1


def settled_decision(ws: Workspace, key: str, decision: Any, *, run_id: str | None, now: datetime) -> Any:
    """Record ``decision`` (JSON-able) under ``key`` for ``run_id`` and return it, or return the one already recorded.

    Without a ``run_id`` (a caller outside a night) nothing is recorded and ``decision`` is returned.
    """
    if run_id is None:
        return decision
    loaded = read_state(ws.deep_plan, versions=(_PLAN_VERSION,), now=now)
    data = loaded.data if loaded.data is not None and loaded.data.get("run_id") == run_id else None
    decisions = dict((data or {}).get("decisions") or {})
    if key in decisions:
        return decisions[key]
    decisions[key] = decision
    atomic_write_json(ws.deep_plan, {"version": _PLAN_VERSION, "run_id": run_id, "decisions": decisions})
    return decision
