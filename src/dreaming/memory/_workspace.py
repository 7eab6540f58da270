"""Where every file of a workspace lives (spec/workspace.md), under one injected root, and what stays inside it."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from dreaming.errors import NotAWorkspaceError
from dreaming.memory._io import atomic_write_text, check_write_path

__all__ = ["MEMORY_SKELETON", "Workspace", "check_confined", "init_workspace"]

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
        """What the running night decided before writing (``memory/_run_plan.py``; removed when the run ends)."""
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
    start, before anything is written, rather than midway.

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
