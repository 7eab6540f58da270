"""Options and helpers shared by every command of the command line.

Output: on a terminal, markdown is rendered by rich (:func:`print_markdown`) and tables drawn; piped, it is plain text
with no colour or escape codes. Either way no HTML comment (``<!-- ... -->``) reaches the screen.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from dreaming.config import DreamingConfig, load_config
from dreaming.errors import ConfigError, NotAWorkspaceError, OutsideWorkspaceError, RecallStoreError
from dreaming.memory import Workspace, readable_markdown

__all__ = [
    "EXIT_BUDGET",
    "EXIT_FAILED",
    "EXIT_LOCK_BUSY",
    "EXIT_OK",
    "EXIT_USAGE",
    "JsonOption",
    "NowOption",
    "WorkspaceOption",
    "console",
    "err_console",
    "is_loopback",
    "open_workspace",
    "parse_now",
    "print_json",
    "print_markdown",
    "print_plain",
    "refused_writes",
]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_LOCK_BUSY = 3
EXIT_BUDGET = 4

console = Console(soft_wrap=True)
err_console = Console(stderr=True, soft_wrap=True)

WorkspaceOption = Annotated[
    Path, typer.Option("--workspace", "-w", help="The workspace folder (default: the current folder).")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
NowOption = Annotated[
    str | None, typer.Option("--now", help="Pretend the current time is this ISO timestamp (default: the clock).")
]


def parse_now(value: str | None) -> datetime:
    """Return the run's 'now': the ``--now`` value (naive means UTC) or the clock.

    Raises:
        typer.BadParameter: the value is not an ISO date or timestamp (exit code 2).
    """
    if value is None:
        return datetime.now(UTC)
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError as exc:
        raise typer.BadParameter(f"--now {value!r} is not an ISO date or timestamp") from exc
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def is_loopback(host: str) -> bool:
    """Return whether ``host`` names only this machine (``localhost``, ``127.0.0.0/8``, ``::1``)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:  # any other name may resolve anywhere
        return False


def open_workspace(path: Path) -> tuple[Workspace, DreamingConfig]:
    """Resolve the workspace and read its configuration, printing config warnings to stderr; write nothing.

    Raises:
        typer.Exit: the folder does not exist, is not a workspace (no MEMORY.md, memory/ or dreaming.toml: ``dreaming
            init`` makes one), or dreaming.toml is not valid TOML (code 2 for each).
    """
    ws = Workspace.at(path)
    if not ws.root.is_dir():
        err_console.print(f"[red]error:[/] workspace {ws.root} is not a folder")
        raise typer.Exit(EXIT_USAGE)
    try:
        ws.require()
    except NotAWorkspaceError as exc:
        err_console.print(f"[red]error:[/] {exc}")
        raise typer.Exit(EXIT_USAGE) from exc
    try:
        config = load_config(ws.config_file)
    except ConfigError as exc:
        err_console.print(f"[red]error:[/] {exc}")
        raise typer.Exit(EXIT_USAGE) from exc
    for warning in config.warnings:
        err_console.print(f"[yellow]warning:[/] dreaming.toml: {warning}")
    return ws, config


@contextlib.contextmanager
def refused_writes() -> Iterator[None]:
    """Turn a refused write (leaving the workspace, or OpenClaw's recall store unusable) into one line and exit 1."""
    try:
        yield
    except (OutsideWorkspaceError, RecallStoreError) as exc:
        err_console.print(f"[red]error:[/] {escape(str(exc))}", highlight=False)
        raise typer.Exit(EXIT_FAILED) from exc


def print_plain(text: str) -> None:
    """Print ``text`` on stdout exactly: no markup, highlighting, emoji codes or wrapping."""
    console.print(text, markup=False, highlight=False, emoji=False, soft_wrap=True)


def print_markdown(text: str) -> None:
    """Print memory markdown on stdout without its HTML comments: rendered on a terminal, else as plain text."""
    readable = readable_markdown(text)
    if console.is_terminal:
        from rich.markdown import Markdown  # with pygments, most of what rich costs to import

        console.print(Markdown(readable), soft_wrap=False)  # the console does not wrap; rendered markdown must
    else:
        print_plain(readable)


def print_json(payload: Any) -> None:
    """Print ``payload`` as indented JSON on stdout (no colour, no wrapping)."""
    typer.echo(json.dumps(payload, indent=2, ensure_ascii=False, default=str))
