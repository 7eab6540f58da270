"""Shared fixtures: a temp workspace, a fixed clock, no network at all, and no real OpenClaw install."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from dreaming.memory import Workspace

NOW = datetime(2026, 4, 15, 3, 0, tzinfo=UTC)


class NetworkBlockedError(RuntimeError):
    """Raised when a test tries to open a real network connection."""


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Make every real socket connection fail; respx and fakes work above the socket layer."""
    real_connect = socket.socket.connect

    def guarded(self: socket.socket, address: Any) -> Any:
        if self.family == socket.AF_UNIX:
            return real_connect(self, address)
        raise NetworkBlockedError(f"test tried to reach the network: {address!r}")

    monkeypatch.setattr(socket.socket, "connect", guarded)
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "DREAMING_MODEL", "TAVILY_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    yield


@pytest.fixture(autouse=True)
def _no_real_openclaw(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Point OpenClaw's home and state dir at a folder that does not exist, so no test reads or writes ~/.openclaw.

    A test that wants an OpenClaw install builds one (tests/memory/recall/openclaw_state.py) and points
    ``OPENCLAW_STATE_DIR`` at it.
    """
    home = tmp_path_factory.getbasetemp() / "no-home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("OPENCLAW_HOME", str(home))
    monkeypatch.setenv("OPENCLAW_STATE_DIR", str(home / ".openclaw"))
    for name in ("OPENCLAW_WORKSPACE_DIR", "OPENCLAW_PROFILE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    """Return an empty workspace under ``tmp_path``."""
    ws = Workspace.at(tmp_path / "ws")
    ws.root.mkdir(parents=True)
    return ws


@pytest.fixture
def now() -> datetime:
    """Return the fixed 'now' of the tests."""
    return NOW
