"""The gateway's choice of ledger with ``DREAMING_DATABASE_URL``, and a whole night on the fleet's ledger."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
import respx
from langchain_core.messages import HumanMessage
from typer.testing import CliRunner

from dreaming.cli import app
from dreaming.config import DreamingConfig
from dreaming.errors import BudgetError
from dreaming.fleet._schema import apply_migrations
from dreaming.llm import FakeChatModel, build_gateway
from dreaming.llm.gateway import LLMGateway
from dreaming.llm.ledger import BudgetLedger, LedgerEntry
from dreaming.llm.ledger_postgres import PostgresBudgetLedger
from dreaming.llm.pricing import cost_usd, load_price_table
from dreaming.memory import Workspace
from tests._fakes import completion
from tests._workspaces import NIGHT, build_verdict_workspace
from tests.fleet.test_ledger_postgres import UNREACHABLE, set_budget, stored

T0 = datetime(2026, 4, 15, 3, 0, tzinfo=UTC)


@pytest.fixture
def url(pg_url: str) -> str:
    """A migrated schema with a fleet budget of $0.5 per 30 minutes."""
    with psycopg.connect(pg_url) as conn:
        apply_migrations(conn)
    set_budget(pg_url, cap=0.5, window_minutes=30)
    return pg_url


def events(ws: Workspace) -> list[dict[str, Any]]:
    if not ws.events.exists():
        return []
    return [json.loads(line) for line in ws.events.read_text().splitlines()]


def gateway(ws: Workspace, fake: FakeChatModel, **env: str) -> LLMGateway:
    env = {"OPENAI_API_KEY": "sk-test"} | env
    return build_gateway(DreamingConfig(), ws, env=env, now=lambda: T0, model_factory=fake.factory)


def test_with_a_fleet_budget_the_night_spends_in_postgres(workspace: Workspace, url: str) -> None:
    fake = FakeChatModel(usage=(1000, 200))
    gw = gateway(workspace, fake, DREAMING_DATABASE_URL=url)
    assert isinstance(gw.ledger, PostgresBudgetLedger)
    assert (gw.ledger.config.max_cost_usd, gw.ledger.config.window_minutes) == (0.5, 30.0)
    reply = asyncio.run(gw.ainvoke([HumanMessage("hello")], node="test"))
    price = load_price_table({}).price_for("gpt-4.1-mini")
    assert price is not None
    expected = cost_usd(price, input_tokens=1000, output_tokens=200)
    ((entry_id, reserved, cost),) = stored(url)
    assert (entry_id, reserved) == (reply.recorded.id, False) and cost == pytest.approx(expected)
    assert not workspace.budget_ledger.exists()
    (event,) = [e for e in events(workspace) if e["type"] == "budget.fleet_ledger"]
    assert (event["ledger"], event["cap_usd"], event["window_minutes"]) == ("postgres", 0.5, 30.0)
    report = gw.report()
    assert report.fleet_database and report.window_spend_usd == pytest.approx(expected)
    assert any("fleet's global ledger in Postgres" in line for line in report.lines())


def test_the_fleet_cap_refuses_a_call_other_workers_leave_no_room_for(workspace: Workspace, url: str) -> None:
    spent = LedgerEntry(at=T0, model="gpt-4.1-mini", node="verify", cost_usd=0.5)
    PostgresBudgetLedger.load(url, DreamingConfig().budget, now=T0).record(spent, now=T0)  # another night's spend
    fake = FakeChatModel()
    gw = gateway(workspace, fake, DREAMING_DATABASE_URL=url)
    assert gw.breaker_tripped()  # starts tripped: the window is at the cap
    with pytest.raises(BudgetError):
        asyncio.run(gw.ainvoke([HumanMessage("hello")], node="test"))
    assert fake.calls == [] and [row[0] for row in stored(url)] == [spent.id]


def test_without_a_budget_row_or_without_the_variable_the_workspace_keeps_its_own(
    workspace: Workspace, pg_url: str
) -> None:
    fake = FakeChatModel()
    for env in ({}, {"DREAMING_DATABASE_URL": pg_url}):  # unset; set, but the database holds no fleet tables
        gw = gateway(workspace, fake, **env)
        assert isinstance(gw.ledger, BudgetLedger) and gw.ledger.path == workspace.budget_ledger
    with psycopg.connect(pg_url) as conn:
        apply_migrations(conn)  # the tables, but no budget row
    gw = gateway(workspace, fake, DREAMING_DATABASE_URL=pg_url)
    assert isinstance(gw.ledger, BudgetLedger) and not gw.breaker_tripped()
    asyncio.run(gw.ainvoke([HumanMessage("hello")], node="test"))
    assert workspace.budget_ledger.exists() and not gw.report().fleet_database


def test_an_unreachable_database_builds_a_gateway_that_refuses_every_call(workspace: Workspace) -> None:
    fake = FakeChatModel()
    gw = gateway(workspace, fake, DREAMING_DATABASE_URL=UNREACHABLE)
    assert gw.available and gw.breaker_tripped()
    with pytest.raises(BudgetError):
        asyncio.run(gw.ainvoke([HumanMessage("hello")], node="test"))
    assert fake.calls == [] and not workspace.budget_ledger.exists()
    (event,) = [e for e in events(workspace) if e["type"] == "budget.fleet_ledger"]
    assert "cannot be used" in event["problem"]
    (refused,) = [e for e in events(workspace) if e["type"] == "llm.refused"]
    assert refused["reason"] == "budget_exceeded" and "failing closed" in refused["detail"]
    assert any("fleet's budget ledger was unusable" in line for line in gw.report().lines())


def test_without_psycopg_the_variable_fails_closed(workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "dreaming.llm.ledger_postgres", None)  # import fails as without the fleet extra
    gw = gateway(workspace, FakeChatModel(), DREAMING_DATABASE_URL=UNREACHABLE)
    assert gw.breaker_tripped() and "install dreaming[fleet]" in (gw.ledger.problem or "")


def test_without_a_key_the_database_is_not_contacted(workspace: Workspace) -> None:
    gw = build_gateway(DreamingConfig(), workspace, env={"DREAMING_DATABASE_URL": UNREACHABLE}, now=lambda: T0)
    assert not gw.available and isinstance(gw.ledger, BudgetLedger) and not gw.breaker_tripped()


# A whole night (``dreaming run``) on the fleet's ledger

BASE = "http://llm.test/v1"
CONFIG = "[verdicts]\nllm_verify = true\n[diary]\nnarrative = true\n[budget]\nmax_cost_usd = 100\n"


@pytest.fixture
def llm(monkeypatch: pytest.MonkeyPatch) -> Iterator[respx.Route]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    monkeypatch.setenv("OPENAI_BASE_URL", BASE)
    with respx.mock(assert_all_called=False) as router:
        answer = completion("no", prompt_tokens=2000, completion_tokens=500)  # $0.0016 a call at gpt-4.1-mini's price
        yield router.post(f"{BASE}/chat/completions").mock(return_value=httpx.Response(200, json=answer))


def test_a_night_spends_under_the_fleet_cap_in_postgres(
    tmp_path: Path, url: str, llm: respx.Route, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_budget(url, cap=0.005)  # room for a few calls; the workspace's own cap is $100
    monkeypatch.setenv("DREAMING_DATABASE_URL", url)
    ws = build_verdict_workspace(tmp_path / "ws", assets=tuple(f"A{i}" for i in range(6)))
    (ws / "dreaming.toml").write_text(CONFIG)
    result = CliRunner().invoke(app, ["run", "--workspace", str(ws), "--now", NIGHT])
    assert result.exit_code in (0, 4), result.output
    rows = stored(url)
    assert llm.call_count == len(rows) > 0  # every request the endpoint saw was reserved in the fleet's ledger
    assert sum(cost for _, _, cost in rows) <= 0.005  # the fleet's cap, not the workspace's $100
    assert not (ws / "memory" / ".dreams" / "dreaming-budget.json").exists()
    diary = (ws / "DREAMS.md").read_text()
    assert "fleet's global ledger in Postgres" in diary and "Budget breaker tripped" in diary


def test_a_night_without_its_database_runs_and_makes_no_call(
    tmp_path: Path, llm: respx.Route, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DREAMING_DATABASE_URL", UNREACHABLE)
    ws = build_verdict_workspace(tmp_path / "ws")
    (ws / "dreaming.toml").write_text(CONFIG)
    result = CliRunner().invoke(app, ["run", "--workspace", str(ws), "--now", NIGHT])
    assert result.exit_code in (0, 4), result.output
    assert llm.call_count == 0
    assert list((ws / "memory" / "insights").glob("*.md"))  # the deterministic work went on
    assert "fleet's budget ledger was unusable" in (ws / "DREAMS.md").read_text()
