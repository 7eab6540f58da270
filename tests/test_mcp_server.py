"""The MCP server: driven through the official SDK's own client, over stdio (a real ``dreaming mcp``) and in process."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import typer
from mcp import Client, ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, TextContent, TextResourceContents
from typer.testing import CliRunner

import dreaming
from dreaming.cli.mcp import register
from dreaming.cli.options import is_loopback
from dreaming.mcp_server import build_server, http_app
from dreaming.memory import ConsolidationLock, Workspace, init_workspace

NOW = datetime(2026, 4, 15, 3, 0, tzinfo=UTC)
SRC = Path(dreaming.__file__).resolve().parents[1]


def child_env() -> dict[str, str]:
    """The environment of a child process that runs this checkout's code (not whatever is installed)."""
    paths = [str(SRC), *filter(None, [os.environ.get("PYTHONPATH")])]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    ws = Workspace.at(tmp_path / "ws")
    init_workspace(ws)
    (ws.memory_dir / "2026-04-01.md").write_text("# Ops\n\nKafka retention is seven days.\n")
    return ws


def text_of(result: CallToolResult) -> str:
    assert not result.is_error, result.content
    [content] = result.content
    assert isinstance(content, TextContent)
    return content.text


def run_with(server_ws: Workspace, check: Callable[[Client], Awaitable[None]]) -> None:
    async def main() -> None:
        async with Client(build_server(server_ws, clock=lambda: NOW)) as client:
            await check(client)

    asyncio.run(main())


@pytest.mark.slow
def test_stdio_server_through_the_sdk_client(ws: Workspace) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "dreaming", "mcp", "--workspace", str(ws.root)], env=child_env()
    )

    async def session() -> None:
        with anyio.fail_after(120):
            async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
                await client.initialize()
                tools = {tool.name for tool in (await client.list_tools()).tools}
                assert tools == {"memory_search", "record_gap", "prior_insights", "dream_now", "status", "list_gaps"}
                resources = {str(r.uri) for r in (await client.list_resources()).resources}
                assert {"dreaming://memory", "dreaming://dreams"} <= resources
                templates = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
                assert templates == ["dreaming://insights/{insight_id}"]

                missed = await client.call_tool("memory_search", {"query": "postgres vacuum schedule"})
                assert json.loads(text_of(missed)) == []
                gaps = json.loads((ws.state_dir / "knowledge-gaps.json").read_text())["gaps"]
                assert gaps["postgres vacuum schedule"]["type"] == "no_results"
                assert gaps["postgres vacuum schedule"]["count"] == 1

                hit = await client.call_tool("memory_search", {"query": "kafka retention", "limit": 3})
                [found] = json.loads(text_of(hit))
                assert found["path"] == "memory/2026-04-01.md"
                recalls = json.loads((ws.state_dir / "short-term-recall.json").read_text())["entries"]
                assert recalls["memory:memory/2026-04-01.md:1:3"]["recallCount"] == 1

                memory = await client.read_resource("dreaming://memory")
                [content] = memory.contents
                assert isinstance(content, TextResourceContents)
                assert content.text == ws.memory_md.read_text()

                entry = text_of(await client.call_tool("dream_now", {}))
                assert entry.startswith("## ") and "(now, " in entry.splitlines()[0]

    asyncio.run(session())
    headings = [line for line in ws.dreams_md.read_text().splitlines() if line.startswith("## ")]
    assert len(headings) == 1 and "(now, " in headings[0]


def test_tools_take_now_from_the_clock(ws: Workspace) -> None:
    async def check(client: Client) -> None:
        gap = json.loads(text_of(await client.call_tool("record_gap", {"query": "How do we rotate keys?"})))
        assert gap["key"] == "how do we rotate keys" and gap["first_seen"] == NOW.isoformat()
        assert json.loads(text_of(await client.call_tool("list_gaps", {"status": "kept"}))) == []
        [listed] = json.loads(text_of(await client.call_tool("list_gaps", {"status": "open"})))
        assert listed["count"] == 1
        blank = await client.call_tool("record_gap", {"query": "   "})
        assert blank.is_error
        status = json.loads(text_of(await client.call_tool("status", {})))
        assert status["lock"] == "free" and status["open_gaps"][0]["query"] == "How do we rotate keys?"
        assert text_of(await client.call_tool("prior_insights", {})) == "No active insights."
        assert (await client.call_tool("memory_search", {"query": "kafka", "limit": 0})).is_error

    run_with(ws, check)


def test_dream_now_answers_busy_at_once_while_another_run_holds_the_lock(ws: Workspace) -> None:
    lock = ConsolidationLock(ws.lock_file, timeout_s=0.0)
    lock.acquire()

    async def check(client: Client) -> None:
        answer = text_of(await client.call_tool("dream_now", {"wait": False}))
        assert answer == f"busy: run {lock.holder()} is dreaming"

    try:
        run_with(ws, check)
    finally:
        lock.release()
    assert not ws.dreams_md.exists()


def test_each_insight_is_a_resource_and_reads_stay_inside_the_workspace(ws: Workspace, tmp_path: Path) -> None:
    ws.insights_dir.mkdir(parents=True)
    (ws.insights_dir / "research-kafka.md").write_text("---\nstatus: active\n---\nKafka keeps seven days.\n")
    (tmp_path / "outside.md").write_text("not the workspace's\n")
    (ws.insights_dir / "leak.md").symlink_to(tmp_path / "outside.md")
    ws.dreams_md.symlink_to(tmp_path / "outside.md")

    async def check(client: Client) -> None:
        uris = {str(r.uri) for r in (await client.list_resources()).resources}
        assert "dreaming://insights/research-kafka" in uris and "dreaming://insights/leak" not in uris
        read = await client.read_resource("dreaming://insights/research-kafka")
        [content] = read.contents
        assert isinstance(content, TextResourceContents) and "seven days" in content.text
        refused = ("dreaming://dreams", "dreaming://insights/leak", "dreaming://insights/nope",
                   "dreaming://insights/..%2F..%2FMEMORY")  # fmt: skip
        for uri in refused:
            with pytest.raises(MCPError):
                await client.read_resource(uri)

    run_with(ws, check)


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}},
}


def test_http_requests_need_the_bearer_token(ws: Workspace) -> None:
    app = http_app(build_server(ws, clock=lambda: NOW), host="0.0.0.0", token="s3cret")
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}

    async def post(client: httpx.AsyncClient, extra: dict[str, str]) -> httpx.Response:
        return await client.post("/mcp", json=INITIALIZE, headers={**headers, **extra})

    async def main() -> list[int]:
        transport = httpx.ASGITransport(app=app)
        async with app.router.lifespan_context(app), httpx.AsyncClient(transport=transport, base_url="http://x") as c:
            codes = [(await post(c, extra)).status_code for extra in ({}, {"authorization": "Bearer wrong"})]
            assert (await post(c, {})).headers["www-authenticate"] == "Bearer"
            ok = await post(c, {"authorization": "Bearer s3cret"})
            assert "dreaming" in ok.text, ok.text
            return [*codes, ok.status_code]

    assert asyncio.run(main()) == [401, 401, 200]


@pytest.fixture
def app() -> typer.Typer:
    app = typer.Typer()
    register(app)

    @app.callback()
    def _group() -> None:  # keeps `mcp` a subcommand
        pass

    return app


def test_http_off_loopback_without_a_token_exits_2(app: typer.Typer, ws: Workspace, monkeypatch: Any) -> None:
    monkeypatch.delenv("DREAMING_MCP_TOKEN", raising=False)
    before = sorted(p.relative_to(ws.root) for p in ws.root.rglob("*"))
    result = CliRunner().invoke(app, ["mcp", "--workspace", str(ws.root), "--http", "--host", "0.0.0.0"])
    assert result.exit_code == 2
    assert "bearer token is required" in result.output and len(result.output.strip().splitlines()) == 1
    assert sorted(p.relative_to(ws.root) for p in ws.root.rglob("*")) == before


def test_a_folder_that_is_not_a_workspace_is_refused(app: typer.Typer, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["mcp", "--workspace", str(tmp_path)])
    assert result.exit_code == 2
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("127.1.2.3", True), ("localhost", True), ("::1", True), ("[::1]", True),
     ("0.0.0.0", False), ("::", False), ("192.168.1.5", False), ("example.org", False)],
)  # fmt: skip
def test_loopback_hosts(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_the_command_line_does_not_import_the_sdk() -> None:
    code = "import sys, dreaming.cli; print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'uvicorn')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=child_env())
    assert out.stdout.strip() == "[]"
