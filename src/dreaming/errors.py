"""Every exception dreaming raises on purpose.

The hierarchy::

    DreamingError                  base of everything below
    ├── ConfigError                dreaming.toml cannot be used at all (not valid TOML or UTF-8)
    ├── WorkspaceError             the workspace cannot be used (missing root, not a folder)
    │   ├── LockBusyError          another run holds the consolidation lock (exit code 3)
    │   ├── NotAWorkspaceError     the folder has no MEMORY.md, memory/ or dreaming.toml (exit code 2)
    │   ├── OutsideWorkspaceError  a write would go through a symbolic link (exit code 1, nothing written)
    │   └── RecallStoreError       OpenClaw's SQLite recall store cannot be used (missing, not SQLite, another schema
    │                              version, read-only, locked): the recall phases are skipped, exit code 1 on its own
    ├── BudgetError                an LLM call was refused by the budget
    ├── ModelCallError             a model call that went out failed: timeout, connection, HTTP status, a malformed or
    │                              oversized reply (the call's gap or node fails; the night goes on)
    └── ToolError                  an outside system (ripgrep, Tavily, search index) failed
        └── RetryableToolError     a timeout, HTTP 429 or 5xx: the only errors that are retried

Bad input lines are never exceptions: they are counted and reported (see ``memory.InputReport``); an unreadable state
file is moved aside and reported, not raised; a bad value or a table of the wrong type in dreaming.toml is a warning,
not a ``ConfigError``. Exit code 4 is decided from the run's state (``budget_exhausted_before_any_work``), not from an
exception.
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "BudgetError",
    "ConfigError",
    "DreamingError",
    "LockBusyError",
    "ModelCallError",
    "NotAWorkspaceError",
    "OutsideWorkspaceError",
    "RecallStoreError",
    "RetryableToolError",
    "ToolError",
    "WorkspaceError",
]


class DreamingError(Exception):
    """Base class of every error dreaming raises on purpose."""


class ConfigError(DreamingError):
    """The configuration file cannot be used at all."""


class WorkspaceError(DreamingError):
    """The workspace cannot be used."""


class LockBusyError(WorkspaceError):
    """Another run holds the consolidation lock and did not release it in time."""

    def __init__(self, lock_path: Path, holder: str) -> None:
        self.lock_path, self.holder = lock_path, holder
        super().__init__(f"another dreaming run holds {lock_path} (holder {holder}); try again later")


class NotAWorkspaceError(WorkspaceError):
    """The folder is not a workspace (no MEMORY.md, no memory/, no dreaming.toml) and ``dreaming init`` was not run."""

    def __init__(self, root: Path) -> None:
        self.root = root
        super().__init__(
            f"{root} is not a dreaming workspace (no MEMORY.md, memory/ or dreaming.toml); "
            f"run `dreaming init --workspace {root}` to make it one"
        )


class OutsideWorkspaceError(WorkspaceError):
    """A write was refused because its real path is not where it appears: a symbolic link on the way leads elsewhere.

    Dreaming writes only inside the workspace and never through a link, whether the link is a folder
    (``memory/insights``) or the file itself (``events.jsonl``); nothing was written.
    """

    def __init__(self, path: Path, real: Path) -> None:
        self.path = path
        self.real = real
        super().__init__(f"refusing to write {path}: a symbolic link on its path leads to {real}")


class RecallStoreError(WorkspaceError):
    """OpenClaw's SQLite recall store cannot be used; nothing was written to it.

    Raised for a database that is missing, not SQLite or corrupt, of another schema version, read-only or locked past
    the busy timeout. Reads report it instead (the store reads as empty with its ``problem`` set); a night skips its
    recall phases and says why. The file is OpenClaw's: it is never moved aside or repaired.
    """

    def __init__(self, db: Path, reason: str) -> None:
        self.db, self.reason = db, reason
        super().__init__(f"OpenClaw's recall store {db} cannot be used: {reason}")


class BudgetError(DreamingError):
    """An LLM call was refused by the budget."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"LLM call refused: {reason}")


class ModelCallError(DreamingError):
    """A model call that was allowed and sent failed; the gateway has already recorded its cost.

    Every failure of the call itself (the client's timeout, connection and HTTP status errors, a reply that is not
    JSON or not a chat completion, usage that cannot be read, a reply longer than the output cap) reaches callers as
    this one type, so that a caller fails only its own gap or node and the night goes on.

    Attributes:
        kind: a short stable word: ``timeout``, ``connection``, ``http_<status>``, ``malformed_reply``,
            ``oversized_reply`` or ``error``.
        detail: one line for people, already shortened and redacted.
    """

    def __init__(self, kind: str, detail: str = "") -> None:
        self.kind = kind
        self.detail = detail
        super().__init__(f"{kind}: {detail}" if detail else kind)

    @property
    def reason(self) -> str:
        """The reason to record: ``"<kind>: <detail>"``."""
        return str(self)


class ToolError(DreamingError):
    """An outside system failed."""


class RetryableToolError(ToolError):
    """A transient failure (timeout, HTTP 429 or 5xx) that may be retried."""
