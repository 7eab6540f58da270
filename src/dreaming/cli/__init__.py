"""The ``dreaming`` command line: the Typer app, its entry point, and its commands (one module per area).

``night.py``: init, run, now, status, eval, insights; ``memory.py``: promote, doctor, search, gap; ``fleet.py``:
fleet run, schedule; ``mcp.py``: mcp (the MCP server); ``view.py``: view (the dream viewer); ``backtest.py``:
backtest (the walk-forward backtest); ``options.py``: the options and output helpers they share.
"""

from __future__ import annotations

import logging
import sqlite3
import sys
from typing import Annotated

import typer

from dreaming._version import __version__

__all__ = ["app", "main"]

app = typer.Typer(
    name="dreaming",
    help="A memory for LLM agents that learns while they sleep.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"dreaming {__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool, typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Take the options that come before any command (``--version`` acts in its callback)."""


def main() -> None:
    """Run the command line.

    A file that cannot be written or read (a full disk, a read-only folder, a permission, a folder where a file
    should be) ends the command with exit 1 and one line naming the file and the cause, never a traceback: what was
    committed before stays as it was, and the next run resumes the night.
    """
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        app()
    except (OSError, sqlite3.Error) as exc:
        print(f"dreaming: {describe_io_error(exc)}", file=sys.stderr)
        raise SystemExit(1) from None


def describe_io_error(exc: OSError | sqlite3.Error) -> str:
    """Return one line saying which file failed and why (``cannot write memory/x.json: No space left on device``)."""
    if isinstance(exc, sqlite3.Error):
        return f"the checkpoint database failed: {exc}"
    where = f" {exc.filename}" if exc.filename else ""
    return f"cannot write or read{where}: {exc.strerror or exc}"


def _register_all() -> None:
    from dreaming.cli import backtest, fleet, mcp, memory, night, view

    night.register(app)
    memory.register(app)
    fleet.register(app)
    mcp.register(app)
    view.register(app)
    backtest.register(app)


_register_all()
