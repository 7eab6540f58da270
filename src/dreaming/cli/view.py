"""``dreaming view``: the read-only dream viewer in the browser, or its pages exported as static HTML.

Starlette, Jinja and uvicorn are imported only when the command runs.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Annotated

import typer

from dreaming.cli.options import (
    EXIT_USAGE,
    NowOption,
    WorkspaceOption,
    console,
    err_console,
    is_loopback,
    open_workspace,
    parse_now,
)

__all__ = ["register"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8766
TOKEN_ENV = "DREAMING_VIEW_TOKEN"


def register(app: typer.Typer) -> None:
    """Add ``view`` to ``app``."""

    @app.command()
    def view(
        workspace: WorkspaceOption = Path("."),
        host: Annotated[str, typer.Option("--host", help="The address to bind.")] = DEFAULT_HOST,
        port: Annotated[int, typer.Option("--port", help="The port to bind.")] = DEFAULT_PORT,
        token: Annotated[
            str | None,
            typer.Option(
                "--token",
                envvar=TOKEN_ENV,
                show_envvar=True,
                help="Every request must carry it; off loopback one is made up when not given.",
            ),
        ] = None,
        export: Annotated[
            Path | None, typer.Option("--export", help="Write the pages as static HTML into this folder and exit.")
        ] = None,
        now: NowOption = None,
    ) -> None:
        """Look at the nights in the browser (Dreams, Patterns, Memory, Research, Budget); read-only."""
        ws, config = open_workspace(workspace)
        from dreaming.view import Site, create_app, export_site

        site = Site.of(ws, config, now=parse_now(now) if now else None)
        if export is not None:
            target = export.expanduser().resolve()
            if target == ws.root or target.is_relative_to(ws.root):
                err_console.print(f"[red]error:[/] --export {target} is inside the workspace; choose another folder")
                raise typer.Exit(EXIT_USAGE)
            written = export_site(site, target)
            console.print(f"wrote {len(written)} pages to {target} (open {written[0]})", markup=False, highlight=False)
            return
        if not token and not is_loopback(host):
            token = secrets.token_urlsafe(18)
        import uvicorn

        shown = "localhost" if host in ("127.0.0.1", "::1") else host
        url = f"http://{shown}:{port}/" + (f"?token={token}" if token else "")
        err_console.print(f"viewing {ws.root} at {url} (read-only; Ctrl-C stops)", markup=False, highlight=False)
        uvicorn.run(create_app(site, token=token), host=host, port=port, log_level="warning")
