"""A slow OpenAI-compatible chat server on the loopback, for tests that kill a run with model calls in flight.

It counts every chat-completion request it receives (before answering), holds each answer until :meth:`release`
(or answers at once after :meth:`answer_now`), and answers a forced tool with a well-formed call reporting usage:
``prompt_tokens`` fixed, ``completion_tokens`` the request's whole output cap (what a runaway model bills).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

PROMPT_TOKENS = 10
"""The prompt tokens every answer reports."""
LOOPBACK_PRICE_PER_MILLION = 1000.0
"""Output price of the loopback model; input is free, so a call's estimate is exactly what the server bills."""
LOOPBACK_WORKSPACE_CONFIG = f"""
[verdicts]
llm_verify = true
[budget]
max_cost_usd = 1000.0                # a fleet's cap replaces it; ample for a night on its own
[llm]
model = "loopback-model"
[llm.prices.loopback-model]
input = 0
output = {LOOPBACK_PRICE_PER_MILLION!r}
"""
"""A workspace's dreaming.toml: its verdict insights verified by the loopback model, at that price."""
HOLD_SECONDS = 120.0
"""The longest an answer is held (bounded: the server never hangs a test for good)."""


class SlowChatServer:
    """Serve ``POST /v1/chat/completions`` on ``127.0.0.1`` at a free port; use as a context manager."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: list[dict[str, Any]] = []
        self._released = threading.Event()
        self._fast = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="slow-chat-server", daemon=True)

    @property
    def base_url(self) -> str:
        """The ``OPENAI_BASE_URL`` to give a client."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The bodies of the chat requests received so far (answered or not)."""
        with self._lock:
            return list(self._requests)

    def answer_now(self) -> None:
        """Answer every request from now on without holding it."""
        self._fast.set()

    def release(self) -> None:
        """Let every held answer go (to clients that may be gone)."""
        self._released.set()

    def __enter__(self) -> SlowChatServer:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.release()
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass  # quiet: the test reads the counts

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                with server._lock:
                    server._requests.append(body)
                if not server._fast.is_set():
                    server._released.wait(HOLD_SECONDS)
                payload = json.dumps(_completion(body)).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:
                    pass  # the client was killed while it waited

        return Handler


def completion_tokens(body: dict[str, Any]) -> int:
    """Return the completion tokens the server bills for a request: its whole output cap."""
    return int(body.get("max_tokens") or body.get("max_completion_tokens") or 0)


def _completion(body: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": "ok"}
    tools = body.get("tools") or []
    if tools:
        name = tools[0]["function"]["name"]
        arguments = json.dumps({"veto": False, "reason": "plausible"})
        call = {"id": "call_1", "type": "function", "function": {"name": name, "arguments": arguments}}
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
    out = completion_tokens(body)
    return {
        "id": "chatcmpl-slow",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", ""),
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if tools else "stop"}],
        "usage": {"prompt_tokens": PROMPT_TOKENS, "completion_tokens": out, "total_tokens": PROMPT_TOKENS + out},
    }
