"""The workspace as an MCP server (the official ``mcp`` SDK): an agent's memory tools and files for any MCP client.

Tools: ``memory_search`` (searches and records the recall, or the knowledge gap, exactly as ``dreaming search``),
``record_gap``, ``prior_insights``, ``dream_now``, ``status`` and ``list_gaps``. Resources, read-only:
``dreaming://memory`` (MEMORY.md), ``dreaming://dreams`` (DREAMS.md) and ``dreaming://insights/<id>`` (each
``memory/insights/<id>.md``, listed one by one). A resource is read only from the workspace's own paths: an insight
id picks a file from the listing of ``memory/insights/``, never builds a path, and a file whose real path leaves the
workspace is refused.

Over HTTP (``dreaming mcp --http``) the app may be guarded by a bearer token (:func:`http_app`); the command line
requires one whenever the server is bound to anything but loopback.
"""

from __future__ import annotations

import hmac
import json
import os
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from mcp.types import Resource as MCPResource
from pydantic import Field
from starlette.applications import Starlette
from starlette.types import ASGIApp, Receive, Scope, Send

from dreaming.config import DreamingConfig, load_config
from dreaming.errors import DreamingError, LockBusyError
from dreaming.memory import Workspace
from dreaming.memory.gaps import GapStatus, KnowledgeGap, list_gaps, record_gap
from dreaming.memory.insights import insight_paths, load_prior_insights
from dreaming.night import adream, busy_answer, utc_now, workspace_status
from dreaming.tools.memory_search import MAX_TOOL_LIMIT, hits_to_json, search_and_record

__all__ = ["BearerTokenGuard", "build_server", "http_app"]

SERVER_NAME = "dreaming"
MEMORY_URI = "dreaming://memory"
DREAMS_URI = "dreaming://dreams"
INSIGHT_URI = "dreaming://insights/{insight_id}"
MARKDOWN = "text/markdown"


def _read_inside(ws: Workspace, path: Path) -> str:
    """Return the text of ``path`` (bad bytes as U+FFFD), or "" when it does not exist.

    Raises:
        ResourceError: the file's real path is outside the workspace (a symbolic link leading elsewhere).
    """
    if not path.exists():
        return ""
    if not ws.contains(path):
        raise ResourceError(f"{ws.relative(path)} leads outside the workspace; not read")
    return path.read_bytes().decode("utf-8", errors="replace")


def _insight_files(ws: Workspace) -> dict[str, Path]:
    """Return the insight files by id (the file name without ``.md``), leaving out any whose real path is elsewhere.

    Archived insights (``memory/insights/archive/``) are not among them.
    """
    return {path.stem: path for path in insight_paths(ws, ws.insights_dir)}


def _gap_json(gap: KnowledgeGap) -> dict[str, Any]:
    return {"key": gap.key, **gap.to_json()}


class _WorkspaceServer(MCPServer[Any]):
    """An MCP server whose resource list also names each insight file present when the client asks."""

    def __init__(self, ws: Workspace, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.workspace = ws

    async def list_resources(self) -> list[MCPResource]:
        """List the fixed resources, then one resource per insight file."""
        insights = [
            MCPResource(uri=f"dreaming://insights/{insight_id}", name=insight_id, mime_type=MARKDOWN,
                        description=f"The insight memory/insights/{insight_id}.md")
            for insight_id in _insight_files(self.workspace)
        ]  # fmt: skip
        return [*await super().list_resources(), *insights]


def build_server(
    workspace: Workspace | str | os.PathLike[str],
    *,
    config: DreamingConfig | None = None,
    clock: Callable[[], datetime] = utc_now,
) -> MCPServer[Any]:
    """Return an MCP server for ``workspace``: its memory tools and its MEMORY.md, DREAMS.md and insights.

    Args:
        workspace: the workspace folder (or a :class:`~dreaming.memory.Workspace`).
        config: its configuration; read from its dreaming.toml by default.
        clock: the one source of 'now' for every call (searches, gaps, status, a night).

    Raises:
        NotAWorkspaceError: the folder is not a workspace (``dreaming init`` makes one).
        ConfigError: dreaming.toml is not valid TOML.
    """
    ws = workspace if isinstance(workspace, Workspace) else Workspace.at(Path(workspace))
    ws.require()
    cfg = config if config is not None else load_config(ws.config_file)
    server = _WorkspaceServer(
        ws,
        name=SERVER_NAME,
        instructions="The agent's long-term memory. Search it before answering (every search is recorded, and a "
        "search that finds nothing becomes a knowledge gap researched at night); read prior_insights for what was "
        "proven; call dream_now to consolidate on demand.",
        log_level="WARNING",
    )

    @server.tool(structured_output=False)
    def memory_search(
        query: Annotated[str, Field(description="Keywords to look for in the memory.")],
        limit: Annotated[int, Field(ge=1, le=MAX_TOOL_LIMIT, description="How many hits to return at most.")] = 8,
    ) -> str:
        """Search the agent's memory notes; returns the best matching lines as JSON (path, lines, score, snippet).

        Every search is recorded: what it recalled feeds the nightly promotion into MEMORY.md, and a search that
        finds little becomes a knowledge gap researched at night.
        """
        try:
            outcome = search_and_record(ws, query, now=clock(), timezone=cfg.timezone, limit=limit,
                                        openclaw_compat=cfg.recall.openclaw_compat,
                                        semantic=cfg.search.semantic)  # fmt: skip
        except DreamingError as exc:  # the index cannot be opened: the model reads why
            raise ToolError(f"memory search failed: {exc}") from exc
        return hits_to_json(outcome.hits)

    @server.tool(name="record_gap", structured_output=False)
    def record_gap_(
        query: Annotated[str, Field(description="What the agent needed to know and did not find.")],
    ) -> str:
        """Record a knowledge gap by hand: something to research at night. Returns the gap as JSON."""
        try:
            gap = record_gap(ws, query, "no_results", best_score=0.0, now=clock())
        except (ValueError, DreamingError) as exc:  # a blank query; a store that cannot be written
            raise ToolError(str(exc)) from exc
        return json.dumps(_gap_json(gap), ensure_ascii=False)

    @server.tool(structured_output=False)
    def prior_insights(asset: str | None = None, regime: str | None = None) -> str:
        """Read the insights dreaming has proven (verdict patterns and verified research findings).

        Optionally only those about an asset or a market regime.
        """
        return load_prior_insights(ws, asset=asset, regime=regime).text or "No active insights."

    @server.tool(structured_output=False)
    async def dream_now(
        wait: Annotated[bool, Field(description="Wait for another run's lock (else answer 'busy' at once).")] = True,
    ) -> str:
        """Consolidate memory now (a full dreaming night); returns the night's diary entry.

        Promotes proven patterns and recalls, retires stale ones and researches open knowledge gaps.
        """
        try:
            report = await adream(ws, now=clock(), trigger="now", wait=wait)
        except LockBusyError as exc:
            return busy_answer(ws, exc)
        except DreamingError as exc:  # a symbolic link where the night writes, an unreadable dreaming.toml
            raise ToolError(f"Not now: {exc}") from exc
        return report.diary_entry

    @server.tool(structured_output=False)
    def status() -> str:
        """Show the workspace's state as JSON: last run, lock, store sizes, insights, budget, open gaps."""
        return json.dumps(workspace_status(ws, cfg, clock()), ensure_ascii=False, indent=2, default=str)

    @server.tool(name="list_gaps", structured_output=False)
    def list_gaps_(status: GapStatus | None = None) -> str:
        """List the knowledge gaps (only those with ``status`` when given), most asked first, as JSON."""
        return json.dumps([_gap_json(gap) for gap in list_gaps(ws, status=status)], ensure_ascii=False)

    @server.resource(MEMORY_URI, name="MEMORY.md", mime_type=MARKDOWN, description="The agent's long-term memory.")
    def memory_md() -> str:
        return _read_inside(ws, ws.memory_md)

    @server.resource(DREAMS_URI, name="DREAMS.md", mime_type=MARKDOWN, description="The dream diary: one entry a run.")
    def dreams_md() -> str:
        return _read_inside(ws, ws.dreams_md)

    @server.resource(INSIGHT_URI, name="insight", mime_type=MARKDOWN, description="One file of memory/insights/.")
    def insight(insight_id: str) -> str:
        path = _insight_files(ws).get(insight_id)
        if path is None:
            raise ResourceNotFoundError(f"no insight {insight_id!r} in memory/insights/")
        return _read_inside(ws, path)

    return server


class BearerTokenGuard:
    """ASGI middleware: every HTTP request must carry ``Authorization: Bearer <token>``, else 401."""

    def __init__(self, app: ASGIApp, *, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass an authorized request (and the app's lifespan) on; answer 401 to any other."""
        if scope["type"] == "http":
            given = dict(scope["headers"]).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                body = b'{"error": "unauthorized: send Authorization: Bearer <token>"}'
                headers = [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", b"Bearer"),
                ]
                await send({"type": "http.response.start", "status": 401, "headers": headers})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def http_app(server: MCPServer[Any], *, host: str, token: str | None) -> Starlette:
    """Return the streamable-HTTP app of ``server`` (path ``/mcp``), guarded by ``token`` when one is given.

    ``host`` is where it will be bound: on loopback the SDK also checks Host and Origin headers (DNS rebinding).
    """
    app = server.streamable_http_app(host=host)
    if token:
        app.add_middleware(BearerTokenGuard, token=token)
    return app
