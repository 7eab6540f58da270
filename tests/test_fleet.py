"""Many workspaces, one budget (issue 11, item 4): the fleet config, the exit codes, and the fleet run end to end."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import dreaming
from dreaming.config import next_run, validate_cron
from dreaming.errors import ConfigError
from dreaming.fleet import (
    FleetBudget,
    NightResult,
    cron_matches,
    fleet_exit_code,
    load_fleet,
    render_results,
    run_fleet,
)
from dreaming.graph.verify import MAX_OUTPUT_TOKENS as VERIFY_MAX_OUTPUT_TOKENS
from tests._slow_server import (
    LOOPBACK_PRICE_PER_MILLION,
    LOOPBACK_WORKSPACE_CONFIG,
    SlowChatServer,
    completion_tokens,
)
from tests._workspaces import NIGHT, build_verdict_workspace

SRC = Path(dreaming.__file__).resolve().parents[1]
"""The source root of the code under test, for the processes a test starts."""


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "DREAMING_"))}
    return env | {"PYTHONPATH": str(SRC)} | extra


def _result(outcome: Any, code: int) -> NightResult:
    return NightResult(workspace=Path("w"), outcome=outcome, exit_code=code)


def test_the_fleet_exits_with_its_worst_outcome() -> None:
    assert fleet_exit_code([]) == 0
    assert fleet_exit_code([_result("done", 0), _result("done", 4)]) == 4
    assert fleet_exit_code([_result("done", 4), _result("busy", 3), _result("done", 0)]) == 3
    assert fleet_exit_code([_result("failed", 2), _result("busy", 3), _result("done", 4)]) == 1
    assert fleet_exit_code([_result("failed", -9)]) == 1


def test_cron_is_validated_and_read_in_its_timezone() -> None:
    assert validate_cron(" 30  2 * * 1-5 ") == "30 2 * * 1-5"
    for bad in ("0 25 * * *", "0 3 * *", "61 3 * * *", "0 3 * * * *", "nonsense"):
        with pytest.raises(ConfigError):
            validate_cron(bad)
    after = datetime(2026, 7, 1, 12, 0, tzinfo=UTC)
    assert next_run("0 3 * * *", "Europe/Paris", after) == datetime(2026, 7, 2, 1, 0, tzinfo=UTC)  # CEST
    assert next_run("0 3 * * *", "Europe/Paris", after.replace(month=12)) == datetime(2026, 12, 2, 2, 0, tzinfo=UTC)
    assert cron_matches("30 2 * * *", "Asia/Kolkata", datetime(2026, 7, 1, 21, 0, 40, tzinfo=UTC))
    assert not cron_matches("30 2 * * *", "Asia/Kolkata", datetime(2026, 7, 1, 21, 1, tzinfo=UTC))
    with pytest.raises(ConfigError):
        next_run("0 3 * * *", "Mars/Olympus", after)


def test_a_fleet_config_reads_globs_budget_and_schedules(tmp_path: Path) -> None:
    for name in ("b", "a", "c"):
        (tmp_path / "agents" / name / "workspace").mkdir(parents=True)
    fleet = tmp_path / "fleet.toml"
    fleet.write_text(
        'concurrency = 2\n[budget]\nledger = "state/fleet-budget.json"\nmax_cost_usd = 2.5\n'
        '[[workspaces]]\npath = "agents/c/workspace"\ncron = "0 4 * * *"\ntimezone = "Europe/Paris"\n'
        '[[workspaces]]\npath = "agents/*/workspace"\n'
    )
    config = load_fleet(fleet)
    assert [m.path.parent.name for m in config.members] == ["c", "a", "b"]  # file order, each folder once
    assert (config.members[0].cron, config.members[0].timezone) == ("0 4 * * *", "Europe/Paris")
    assert config.members[1].cron is None
    assert config.budget == FleetBudget(ledger=tmp_path / "state" / "fleet-budget.json", max_cost_usd=2.5)
    assert config.concurrency == 2
    assert not (tmp_path / "state").exists()  # reading writes nothing


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[[workspaces]\n", "fleet config"),
        ("concurrency = 2\n", "at least one [[workspaces]]"),
        ('[[workspaces]]\npath = "nowhere/*"\n', "matches no folder"),
        ('[[workspaces]]\npath = "."\ncron = "0 25 * * *"\n', "not a valid cron"),
        ('[[workspaces]]\npath = "."\ntimezone = "Mars/Olympus"\n', "not a known IANA timezone"),
        ('[budget]\nmax_cost_usd = 1\n[[workspaces]]\npath = "."\n', "needs ledger"),
        ('[budget]\nledger = "l.json"\nmax_cost_usd = -1\n[[workspaces]]\npath = "."\n', "not a positive number"),
        ('concurrency = 0\n[[workspaces]]\npath = "."\n', "not a positive integer"),
        ('colour = "blue"\n[[workspaces]]\npath = "."\n', "unknown keys"),
    ],
)
def test_an_invalid_fleet_config_is_refused_with_its_reason(tmp_path: Path, text: str, message: str) -> None:
    fleet = tmp_path / "fleet.toml"
    fleet.write_text(text)
    with pytest.raises(ConfigError, match=message.replace("[", r"\[")):
        load_fleet(fleet)


def test_render_results_is_one_row_per_night_and_a_total() -> None:
    rows = [
        NightResult(workspace=Path("/a"), outcome="done", exit_code=0, run_id="r1", spend_usd=0.25),
        NightResult(workspace=Path("/b"), outcome="busy", exit_code=3, detail="busy: held by 12:34"),
    ]
    text = render_results(rows).splitlines()
    assert text[0].split() == ["workspace", "outcome", "run", "id", "spend", "exit", "detail"]
    assert text[1].split() == ["/a", "done", "r1", "$0.2500", "0"]
    assert text[2].split()[:5] == ["/b", "busy", "-", "$0.0000", "3"]
    assert text[3] == "1 done, 1 busy, 0 failed; spend $0.2500"


def test_one_broken_workspace_never_stops_the_others(tmp_path: Path) -> None:
    good = [tmp_path / "agents" / name for name in ("a", "b")]
    for ws in good:
        ws.mkdir(parents=True)
        (ws / "MEMORY.md").write_text("# memory\n")
    broken = tmp_path / "agents" / "c"
    broken.mkdir()
    (broken / "dreaming.toml").write_text("x = [\n")
    results = run_fleet([*good, broken], concurrency=2, budget=None, env=_env(), now=NIGHT)
    assert [(r.outcome, r.exit_code) for r in results] == [("done", 0), ("done", 0), ("failed", 2)]
    assert all(r.run_id for r in results[:2]) and "not valid TOML" in results[2].detail
    assert fleet_exit_code(results) == 1


# The acceptance test: 20 workspaces, concurrency 4, one corrupt, one locked, one global budget

FLEET_SIZE = 20
CALLS_PER_NIGHT = 4
"""One asset in build_verdict_workspace gives four passing insights, each verified by one model call."""


def _hold_lock(ws: Path) -> subprocess.Popen[str]:
    code = (
        "import sys\nfrom pathlib import Path\nfrom dreaming.memory import ConsolidationLock\n"
        "lock = ConsolidationLock(Path(sys.argv[1]))\nlock.acquire()\nprint('held', flush=True)\nsys.stdin.read()\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code, str(ws / "memory" / ".dreams" / "dreaming.lock")],
        env=_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


@pytest.mark.slow
def test_a_fleet_of_20_with_one_corrupt_and_one_locked_stays_under_one_global_cap(tmp_path: Path) -> None:
    one_call = VERIFY_MAX_OUTPUT_TOKENS * LOOPBACK_PRICE_PER_MILLION / 1e6  # the estimate of every verify call
    wanted = (FLEET_SIZE - 2) * CALLS_PER_NIGHT * one_call  # the model work of the 18 nights that can run
    cap = round(wanted / 2 + one_call / 2, 6)  # about half of it, never a whole number of calls
    paths = []
    for i in range(FLEET_SIZE):
        ws = build_verdict_workspace(tmp_path / "agents" / f"agent{i:02d}" / "workspace", assets=("A0",))
        (ws / "dreaming.toml").write_text(LOOPBACK_WORKSPACE_CONFIG)
        paths.append(ws)
    corrupt, locked = paths[3], paths[11]
    (corrupt / "dreaming.toml").write_text("[verdicts\nllm_verify = true\n")
    fleet = tmp_path / "fleet.toml"
    fleet.write_text(
        f'[budget]\nledger = "state/fleet-budget.json"\nmax_cost_usd = {cap!r}\nwindow_minutes = 600\n'
        '[[workspaces]]\npath = "agents/*/workspace"\n'
    )
    holder = _hold_lock(locked)
    try:
        with SlowChatServer() as server:
            server.answer_now()
            env = _env(OPENAI_API_KEY="sk-test-loopback", OPENAI_BASE_URL=server.base_url)
            command = [sys.executable, "-m", "dreaming", "fleet", "run", "--fleet", str(fleet), "--concurrency", "4"]
            done = subprocess.run([*command, "--now", NIGHT, "--json"], env=env, capture_output=True, text=True,
                                  timeout=900, cwd=tmp_path)  # fmt: skip
            received = server.requests
    finally:
        holder.communicate("", timeout=60)
    assert done.returncode == 1, done.stderr  # a failed night is the worst outcome
    report = json.loads(done.stdout)
    nights = {Path(n["workspace"]): n for n in report["nights"]}
    assert len(nights) == FLEET_SIZE
    assert (nights[corrupt]["outcome"], nights[corrupt]["exit_code"]) == ("failed", 2)
    assert (nights[locked]["outcome"], nights[locked]["exit_code"]) == ("busy", 3)
    completed = [n for ws, n in nights.items() if ws not in (corrupt, locked)]
    assert all(n["outcome"] == "done" and n["run_id"] for n in completed), completed
    assert all("Dream Diary" in (ws / "DREAMS.md").read_text() for ws in paths if ws not in (corrupt, locked))
    assert any(n["exit_code"] == 4 for n in completed)  # the cap really stopped some nights' model work

    ledger = json.loads((tmp_path / "state" / "fleet-budget.json").read_text())
    entries = [e for e in ledger["entries"] if not e["cache_hit"]]
    spend = math.fsum(e["cost_usd"] for e in entries)
    billed = math.fsum(completion_tokens(body) * LOOPBACK_PRICE_PER_MILLION / 1e6 for body in received)
    print(f"fleet spend ${spend:.4f} (billed ${billed:.4f}, {len(received)} calls) against a cap of ${cap:.4f}")
    assert len(entries) == len(received) > 0  # every request the server answered is in the one ledger
    assert spend <= cap + one_call and billed <= cap + one_call
    assert spend < wanted  # without the global cap the fleet would have spent it all
    assert report["budget"]["window_spend_usd"] == pytest.approx(spend)
    assert math.fsum(n["spend_usd"] for n in completed) == pytest.approx(spend)
    for ws in paths:  # the nights spent in the fleet's ledger, never in their own
        assert not (ws / "memory" / ".dreams" / "dreaming-budget.json").exists()
    assert sorted(p.name for p in (tmp_path / "state").iterdir()) == ["fleet-budget.json", "fleet-budget.json.lock"]
