"""The same model faults against a real HTTP server on the loopback, not a mock (issue 9, item 8).

A llama.cpp-like server that reads only ``max_tokens`` (a request without it runs on to five times the cap), and one
that stalls past the client's timeout: the cap reaches it, an oversized reply is recorded at its real usage, and a
stall is one ``timeout`` error with its estimate recorded.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from dataclasses import replace
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from dreaming.config import DreamingConfig, LLMConfig
from dreaming.errors import ModelCallError
from dreaming.llm.gateway import LLMGateway, build_gateway
from dreaming.memory import Workspace
from tests._fakes import file_ledger

_REAL_CONNECT = socket.socket.connect  # taken at import, before any test blocks the network

CAP = 40
NOW = datetime(2026, 9, 1, 3, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch: pytest.MonkeyPatch, _no_network: None) -> None:
    """Let connections to 127.0.0.1 through (the suite blocks every real socket); anything else stays blocked."""
    guarded = socket.socket.connect
    real = _REAL_CONNECT

    def connect(self: socket.socket, address: Any) -> Any:
        if isinstance(address, tuple) and address[0] == "127.0.0.1":
            return real(self, address)
        return guarded(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)


class Server:
    """``POST /v1/chat/completions`` on 127.0.0.1: answer like llama.cpp, or stall until the test ends."""

    def __init__(self, *, stall: bool) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.done = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                outer.bodies.append(body)
                if stall:
                    outer.done.wait(30)  # far past the client's timeout; released when the test ends
                    return
                tokens = body["max_tokens"] if "max_tokens" in body else 5 * int(body["max_completion_tokens"])
                payload = json.dumps({
                    "id": "c", "object": "chat.completion", "created": 0, "model": body.get("model", ""),
                    "choices": [{"index": 0, "finish_reason": "length",
                                 "message": {"role": "assistant", "content": "word " * (tokens * 3)}}],
                    "usage": {"prompt_tokens": 12, "completion_tokens": tokens * 3, "total_tokens": 12 + tokens * 3},
                }).encode()  # fmt: skip
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.http.daemon_threads = True
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        host, port = self.http.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def close(self) -> None:
        self.done.set()
        self.http.shutdown()
        self.http.server_close()


def _gateway(tmp_path: Path, base_url: str) -> LLMGateway:
    ws = Workspace.at(tmp_path / "ws")
    ws.state_dir.mkdir(parents=True)
    config = replace(DreamingConfig(), llm=replace(LLMConfig(), timeout_seconds=0.5))
    return build_gateway(config, ws, env={"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": base_url}, now=lambda: NOW)


def _ask(gw: LLMGateway) -> Any:
    return asyncio.run(gw.ainvoke([HumanMessage("Say something.")], node="test", max_output_tokens=CAP))


@pytest.mark.slow
def test_a_server_that_reads_only_max_tokens_gets_the_cap_and_an_oversized_reply_is_recorded(tmp_path: Path) -> None:
    server = Server(stall=False)
    try:
        gw = _gateway(tmp_path, server.base_url)
        with pytest.raises(ModelCallError) as raised:
            _ask(gw)  # this server then bills three times what it was asked: over the cap all the same
    finally:
        server.close()
    (body,) = server.bodies
    assert body["max_tokens"] == CAP and body["max_completion_tokens"] == CAP
    assert raised.value.kind == "oversized_reply"
    (entry,) = file_ledger(gw).entries
    assert entry.output_tokens == 3 * CAP and entry.over_output_cap and not entry.estimated


@pytest.mark.slow
def test_a_server_that_stalls_past_the_timeout_is_one_timeout_with_its_estimate_recorded(tmp_path: Path) -> None:
    server = Server(stall=True)
    try:
        gw = _gateway(tmp_path, server.base_url)
        with pytest.raises(ModelCallError) as raised:
            _ask(gw)
    finally:
        server.close()
    assert raised.value.kind == "timeout"
    assert len(server.bodies) == 1  # no hidden retry
    (entry,) = file_ledger(gw).entries
    assert entry.estimated and entry.output_tokens == CAP and entry.cost_usd > 0
