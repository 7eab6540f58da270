"""A fleet's global ledger: one file shared by many processes, the same write-ahead, window and latch rules."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from langchain_core.messages import HumanMessage

import dreaming
from dreaming.config import BudgetConfig, DreamingConfig
from dreaming.llm import FakeChatModel, build_gateway
from dreaming.llm.budget import Allowed, Skipped
from dreaming.llm.ledger import BudgetLedger, LedgerEntry
from dreaming.memory import Workspace
from tests._fakes import file_ledger

T0 = datetime(2026, 4, 15, 3, 0, tzinfo=UTC)


def reservation(cost: float, at: datetime = T0) -> LedgerEntry:
    return LedgerEntry(at=at, model="m", node="verify", cost_usd=cost, estimated=True, reserved=True)


def shared(path: Path, cap: float = 1.0) -> BudgetLedger:
    return BudgetLedger.load(path, BudgetConfig(max_cost_usd=cap), now=T0, shared=True)


def test_each_change_sees_what_the_others_reserved(tmp_path: Path) -> None:
    path = tmp_path / "fleet-budget.json"
    a, b = shared(path), shared(path)
    first = reservation(0.6)
    assert a.reserve(first, now=T0) == Allowed()
    refused = b.reserve(reservation(0.6), now=T0)  # b loaded before a reserved: it re-reads under the lock
    assert isinstance(refused, Skipped) and refused.reason == "budget_exceeded"
    assert b.tripped_reason is not None  # latched for b's run
    assert b.reserve(reservation(0.1), now=T0) != Allowed()
    c = shared(path)
    assert c.reserve(reservation(0.3), now=T0) == Allowed()
    a.settle(LedgerEntry(at=T0, model="m", node="verify", cost_usd=0.5, id=first.id), now=T0)  # keeps c's entry
    stored = json.loads(path.read_text())["entries"]
    assert sorted((e["cost_usd"], e["reserved"]) for e in stored) == [(0.3, True), (0.5, False)]
    assert (tmp_path / "fleet-budget.json.lock").exists()


def test_the_shared_window_slides(tmp_path: Path) -> None:
    path = tmp_path / "fleet-budget.json"
    shared(path).record(LedgerEntry(at=T0, model="m", node="verify", cost_usd=0.9), now=T0)
    later = T0 + timedelta(minutes=61)
    assert shared(path).reserve(reservation(0.9, later), now=later) == Allowed()  # the old entry aged out
    assert [e["cost_usd"] for e in json.loads(path.read_text())["entries"]] == [0.9]


def test_an_unusable_shared_ledger_fails_closed(tmp_path: Path) -> None:
    path = tmp_path / "fleet-budget.json"
    path.write_text("not json")
    led = shared(path)
    assert led.tripped_reason is not None and led.moved_aside is not None
    assert led.reserve(reservation(0.01), now=T0) != Allowed()


def test_concurrent_processes_never_reserve_past_the_cap(tmp_path: Path) -> None:
    path = tmp_path / "fleet-budget.json"
    code = (
        "import sys\nfrom datetime import UTC, datetime\nfrom pathlib import Path\n"
        "from dreaming.config import BudgetConfig\nfrom dreaming.llm.ledger import BudgetLedger, LedgerEntry\n"
        "now = datetime.now(UTC)\n"
        "for _ in range(40):\n"
        "    led = BudgetLedger.load(Path(sys.argv[1]), BudgetConfig(max_cost_usd=3.0), now=now, shared=True)\n"
        "    led.reserve(LedgerEntry(at=now, model='m', node='n', cost_usd=0.125, estimated=True, reserved=True),"
        " now=now)\n"
    )
    env = os.environ | {"PYTHONPATH": str(Path(dreaming.__file__).resolve().parents[1])}
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(path)], env=env, stderr=subprocess.DEVNULL) for _ in range(4)
    ]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0, 0]
    entries = json.loads(path.read_text())["entries"]
    assert len(entries) == 24  # 160 attempts, exactly the 24 that fit: no lost write, no reservation past the cap
    assert len({e["id"] for e in entries}) == 24


def test_the_gateway_spends_in_the_fleet_ledger_under_the_fleet_cap(workspace: Workspace, tmp_path: Path) -> None:
    fleet_ledger = tmp_path / "fleet" / "budget.json"
    fleet_ledger.parent.mkdir()
    env = {
        "OPENAI_API_KEY": "sk-test",
        "DREAMING_BUDGET_LEDGER": str(fleet_ledger),
        "DREAMING_BUDGET_MAX_COST_USD": "0.5",
        "DREAMING_BUDGET_WINDOW_MINUTES": "30",
    }
    fake = FakeChatModel()
    gw = build_gateway(DreamingConfig(), workspace, env=env, now=lambda: T0, model_factory=fake.factory)
    assert file_ledger(gw).path == fleet_ledger and file_ledger(gw).shared
    assert (gw.ledger.config.max_cost_usd, gw.ledger.config.window_minutes) == (0.5, 30.0)
    asyncio.run(gw.ainvoke([HumanMessage("hello")], node="test"))
    assert len(json.loads(fleet_ledger.read_text())["entries"]) == 1
    assert not workspace.budget_ledger.exists()
    bad = env | {"DREAMING_BUDGET_MAX_COST_USD": "lots"}
    gw = build_gateway(DreamingConfig(), workspace, env=bad, now=lambda: T0, model_factory=fake.factory)
    assert gw.breaker_tripped() and "not a positive number" in (gw.ledger.problem or "")


def test_without_the_variable_the_workspace_keeps_its_own_ledger(workspace: Workspace) -> None:
    gw = build_gateway(
        DreamingConfig(), workspace, env={"OPENAI_API_KEY": "sk-test"}, now=lambda: T0,
        model_factory=FakeChatModel().factory,
    )  # fmt: skip
    assert file_ledger(gw).path == workspace.budget_ledger and not file_ledger(gw).shared
