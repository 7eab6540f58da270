"""``dreaming mcp``: serve a workspace to MCP clients, over stdio or streamable HTTP.

The ``mcp`` SDK is imported only when the command runs, so ``dreaming --help`` and every other command never load it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dreaming.cli.options import EXIT_USAGE, WorkspaceOption, err_console, is_loopback, open_workspace

__all__ = ["register"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
TOKEN_ENV = "DREAMING_MCP_TOKEN"


def register(app: typer.Typer) -> None:
    """Add ``mcp`` to ``app``."""

    @app.command()
    def mcp(
        workspace: WorkspaceOption = Path("."),
        http: Annotated[bool, typer.Option("--http", help="Serve streamable HTTP (at /mcp) instead of stdio.")] = False,
        host: Annotated[str, typer.Option("--host", help="The address to bind with --http.")] = DEFAULT_HOST,
        port: Annotated[int, typer.Option("--port", help="The port to bind with --http.")] = DEFAULT_PORT,
        token: Annotated[
            str | None,
            typer.Option(
                "--token",
                envvar=TOKEN_ENV,
                show_envvar=True,
                help="With --http, every request must send 'Authorization: Bearer <token>' (required off loopback).",
            ),
        ] = None,
    ) -> None:
        """Serve the workspace to MCP clients: memory tools, "dream now", MEMORY.md, DREAMS.md and the insights."""
        ws, config = open_workspace(workspace)
        if http and not token and not is_loopback(host):
            err_console.print(
                f"[red]error:[/] --host {host} is not loopback: a bearer token is required (--token or {TOKEN_ENV})",
                highlight=False,
            )
            raise typer.Exit(EXIT_USAGE)
        from dreaming.mcp_server import build_server, http_app

        server = build_server(ws, config=config)
        if not http:
            server.run("stdio")
            return
        import uvicorn

        err_console.print(f"serving {ws.root} over MCP at http://{host}:{port}/mcp", markup=False, highlight=False)
        uvicorn.run(http_app(server, host=host, token=token), host=host, port=port, log_level="warning")
