"""``dreaming backtest``: replay a workspace's history night by night and score both committees (issue 16).

The backtest package is imported only when the command runs.
"""

from __future__ import annotations

import os
import re
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from dreaming.cli.options import (
    EXIT_USAGE,
    JsonOption,
    WorkspaceOption,
    err_console,
    open_workspace,
    print_json,
    print_plain,
)

if TYPE_CHECKING:
    from dreaming.config import DreamingConfig
    from dreaming.graph.backtest_committee import LLMCommittee
    from dreaming.memory import Workspace

__all__ = ["parse_step", "register"]

_STEP = re.compile(r"(\d+)\s*([dw]?)")
"""In ``memory/.dreams``, next to the report: the series drawn, when the plot module is there."""


def parse_step(text: str) -> int:
    """Return the step in days: ``7d``, ``7`` (days) or ``2w`` (weeks).

    Raises:
        typer.BadParameter: anything else, or zero (exit code 2).
    """
    found = _STEP.fullmatch(text.strip().lower())
    days = int(found[1]) * (7 if found[2] == "w" else 1) if found else 0
    if days < 1:
        raise typer.BadParameter(f"--step {text!r} is not a number of days such as 7d (or weeks: 2w)")
    return days


def _day(text: str, option: str) -> date:
    try:
        return date.fromisoformat(text.strip())
    except ValueError as exc:
        raise typer.BadParameter(f"{option} {text!r} is not an ISO date (YYYY-MM-DD)") from exc


def _usage(message: str) -> typer.Exit:
    err_console.print(f"[red]error:[/] {message}", highlight=False)
    return typer.Exit(EXIT_USAGE)


def register(app: typer.Typer) -> None:
    """Add ``backtest`` to ``app``."""

    @app.command()
    def backtest(
        start: Annotated[str, typer.Option("--from", help="The first night (YYYY-MM-DD).")],
        end: Annotated[str, typer.Option("--to", help="The last day decided (YYYY-MM-DD).")],
        workspace: WorkspaceOption = Path("."),
        step: Annotated[str, typer.Option("--step", help="Days between nights: 7d, 1d, 2w.")] = "7d",
        policy: Annotated[str, typer.Option("--policy", help="offline, or llm (a model).")] = "offline",
        as_json: JsonOption = False,
    ) -> None:
        """Score a committee with and without its insights, replaying the history night by night (no look-ahead).

        Writes memory/.dreams/backtest.json (and nothing else in the workspace) and prints the table.
        """
        first, last, days = _day(start, "--from"), _day(end, "--to"), parse_step(step)
        if first > last:
            raise _usage(f"--from {first.isoformat()} is after --to {last.isoformat()}")
        from dreaming.backtest import POLICIES, render_table, run_backtest, write_report
        from dreaming.memory import InputReport

        if policy not in POLICIES:
            raise _usage(f"unknown --policy {policy!r} (one of: {', '.join(POLICIES)})")
        ws, config = open_workspace(workspace)
        committee = _llm_committee(ws, config) if policy == "llm" else None
        report = InputReport()
        result = run_backtest(ws, config, start=first, end=last, step_days=days, policy=policy, report=report,
                              committee=committee)  # fmt: skip
        write_report(ws, result.report)
        if report.count:
            err_console.print(
                f"[yellow]note:[/] {report.count} bad input line(s) skipped; see bad_input in "
                f"{ws.relative(ws.state_dir / 'backtest.json')}",
                highlight=False,
            )
        if as_json:
            print_json(result.report)
        else:
            print_plain(render_table(result.report).rstrip("\n"))


def _llm_committee(ws: Workspace, config: DreamingConfig) -> LLMCommittee:
    """Return the LLM committee over the run's one gateway, or exit 2 when no model can be called."""
    from dreaming.graph.backtest_committee import LLMCommittee
    from dreaming.llm import build_gateway

    gateway = build_gateway(config, ws, env=os.environ, now=lambda: datetime.now(UTC))
    if not gateway.available:
        raise _usage(f"--policy llm needs a model, and none is configured ({gateway.unavailable_reason}); "
                     "set OPENAI_API_KEY and a priced [llm] model, or use --policy offline")  # fmt: skip
    return LLMCommittee(gateway)
