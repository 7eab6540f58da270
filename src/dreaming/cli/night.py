"""``dreaming init``, ``run``, ``now``, ``status``, ``eval`` and ``insights`` (``schedule``: ``cli/fleet.py``).

``run``, ``now`` and ``insights`` print markdown and ``status`` a table: rendered on a terminal, plain text when piped.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer

from dreaming.cli.fleet import fleet_run
from dreaming.cli.options import (
    EXIT_BUDGET,
    EXIT_LOCK_BUSY,
    EXIT_USAGE,
    JsonOption,
    NowOption,
    WorkspaceOption,
    console,
    err_console,
    open_workspace,
    parse_now,
    print_json,
    print_markdown,
    print_plain,
    refused_writes,
)
from dreaming.errors import LockBusyError
from dreaming.graph import jsonable
from dreaming.memory import (
    Workspace,
    init_workspace,
)
from dreaming.memory.insights import load_prior_insights
from dreaming.night import NightReport, adream, budget_exhausted_before_any_work, workspace_status

__all__ = ["register"]


def _run(workspace: Any, now_text: str | None, as_json: bool, trigger: str) -> None:
    import asyncio

    from rich.status import Status

    ws, _ = open_workspace(workspace)
    now = parse_now(now_text)
    quiet = as_json or not console.is_terminal
    status = None if quiet else Status("dreaming...", console=err_console)
    if status is not None:
        status.start()

    def progress(node: str, message: str) -> None:
        if status is not None:
            status.update(f"[bold]{node}[/]: {message}")

    try:
        with refused_writes():
            report = asyncio.run(adream(ws, now=now, trigger=trigger, progress=progress))
    except LockBusyError as exc:
        if status is not None:
            status.stop()
        err_console.print(f"[red]busy:[/] {exc}")
        raise typer.Exit(EXIT_LOCK_BUSY) from exc
    finally:
        if status is not None:
            status.stop()
    _report(report, as_json)
    if budget_exhausted_before_any_work(report.state):
        raise typer.Exit(EXIT_BUDGET)


def _report(report: NightReport, as_json: bool) -> None:
    if as_json:
        print_json(report.to_json())
        return
    for note in report.notes:
        err_console.print(f"[yellow]note:[/] {note}")
    print_markdown(report.diary_entry)
    files = report.files
    print_plain(f"MEMORY.md: {files['memory']}\nDREAMS.md: {files['diary']}\ninsights:  {files['insights']}")


def _status_rows(info: dict[str, Any]) -> list[tuple[str, str]]:
    """Return what ``dreaming status`` shows as (label, value) rows; an open gap is a row labelled ``""``."""
    last = info["last_run"] or {}
    return [
        ("workspace", str(info["workspace"])),
        ("last run", f"{last.get('run_id', 'never')} at {last.get('at', '-')}"),
        ("lock", str(info["lock"])),
        ("next run", f"{info['next_run'] or 'never (invalid [schedule] cron)'} ({info['schedule']['timezone']})"),
        ("insights", f"{info['insights']} active"),
        *(("budget", line) for line in info["budget"]["lines"]),
        ("gaps", f"{len(info['open_gaps'])} open, {len(info['backlog_gaps'])} in the backlog (need you)"),
        *(
            ("", f"{g['query']!r} x{g['count']} ({g['type']}, {g['attempts']} attempts)")
            for g in info["open_gaps"][:10]
        ),
    ]


def _print_status(info: dict[str, Any]) -> None:
    """Print the status as a table on a terminal, else as aligned plain lines."""
    rows = _status_rows(info)
    files = [(name, f"{size:,} bytes") for name, size in info["state_files"].items()]
    if console.is_terminal:
        from rich import box
        from rich.table import Table
        from rich.text import Text

        table = Table(title="dreaming status", show_header=False, box=box.ROUNDED, title_style="bold")
        table.add_column(style="bold", no_wrap=True)
        table.add_column()
        for n, (label, value) in enumerate(rows):
            shown = "" if n and rows[n - 1][0] == label else label  # a label once, over the rows it names
            table.add_row(Text(shown), Text(f"- {value}" if not label else value))
        table.add_section()
        for name, size in files:
            table.add_row(Text(name, style="dim"), Text(size, style="dim"))
        console.print(table)
        return
    out = [f"{label + ':':<10} {value}" if label else f"  - {value}" for label, value in rows]
    out += ["state files:", *(f"  {name}: {size}" for name, size in files)]
    print_plain("\n".join(out))


def register(app: typer.Typer) -> None:
    """Add init, run, now, status, eval and insights to ``app``."""

    @app.command()
    def init(workspace: WorkspaceOption = Path(".")) -> None:
        """Make a folder a workspace: MEMORY.md, memory/ and memory/.dreams/ (nothing that exists is changed)."""
        ws = Workspace.at(workspace)
        if ws.root.exists() and not ws.root.is_dir():
            err_console.print(f"[red]error:[/] workspace {ws.root} is not a folder")
            raise typer.Exit(EXIT_USAGE)
        with refused_writes():
            created = init_workspace(ws)
        what = ", ".join(created) if created else "nothing to create"
        console.print(f"workspace {ws.root}: {what}", markup=False, highlight=False)

    @app.command()
    def run(
        workspace: WorkspaceOption = Path("."),
        now: NowOption = None,
        json_out: JsonOption = False,
        workspaces: Annotated[
            list[str] | None,
            typer.Option("--workspaces", help="Many workspaces (a glob, repeatable): as `dreaming fleet run`."),
        ] = None,
        fleet: Annotated[Path | None, typer.Option("--fleet", help="A fleet config: as `dreaming fleet run`.")] = None,
        concurrency: Annotated[int | None, typer.Option("--concurrency", "-j", min=1, help="Nights at once.")] = None,
    ) -> None:
        """Dream one full night (the nightly job); with --workspaces or --fleet, one on each workspace."""
        if workspaces or fleet is not None:
            fleet_run(workspaces=workspaces, fleet=fleet, concurrency=concurrency, now=now, json_out=json_out)
            return
        _run(workspace, now, json_out, "run")

    @app.command("now")
    def now_cmd(workspace: WorkspaceOption = Path("."), now: NowOption = None, json_out: JsonOption = False) -> None:
        """Dream now, on demand (chat-triggered "dream now")."""
        _run(workspace, now, json_out, "now")

    @app.command()
    def status(workspace: WorkspaceOption = Path("."), json_out: JsonOption = False) -> None:
        """Show the last run, store sizes, the lock holder, budget state and open gaps."""
        ws, config = open_workspace(workspace)
        info = workspace_status(ws, config, parse_now(None))
        if json_out:
            print_json(info)
            return
        _print_status(info)

    @app.command("eval")
    def eval_cmd(
        dataset: Annotated[Path | None, typer.Option(help="Cases (JSONL); default: the bundled research set.")] = None,
        corpus: Annotated[Path | None, typer.Option(help="Codebase researched; default: the bundled corpus.")] = None,
        category: Annotated[list[str] | None, typer.Option(help="Only cases of this category (repeatable).")] = None,
        ledger: Annotated[Path | None, typer.Option(help="Append a row per run to this results.tsv.")] = None,
        online: Annotated[bool, typer.Option(help="Also run with OPENAI_API_KEY / TAVILY_API_KEY if set.")] = False,
        adversarial: Annotated[bool, typer.Option(help="Also run the scripted adversarial model.")] = False,
        now: NowOption = None,
        json_out: JsonOption = False,
    ) -> None:
        """Replay recorded knowledge gaps over real code and score what research kept, by its content."""
        import asyncio

        from dreaming.evals import bundled_cases, load_cases, render_table, run_research_eval
        from dreaming.evals._adversary import AdversarialModel

        cases = load_cases([dataset]) if dataset is not None else bundled_cases()
        if category:
            cases = [c for c in cases if c.category in category]
        at = parse_now(now)
        runs = [asyncio.run(run_research_eval(now=at, env={}, cases=cases, corpus=corpus, ledger=ledger))]
        if online and os.environ.get("OPENAI_API_KEY"):
            runs.append(asyncio.run(run_research_eval(now=at, env=os.environ, cases=cases, corpus=corpus,
                                                      ledger=ledger, label="model")))  # fmt: skip
        if adversarial:
            runs.append(asyncio.run(run_research_eval(now=at, env={}, cases=cases, corpus=corpus, ledger=ledger,
                                                      label="adversarial", model=AdversarialModel())))  # fmt: skip
        if json_out:
            print_json({"runs": [{**run.summary(), "results": [r.to_json() for r in run.results]} for run in runs]})
        else:
            typer.echo(render_table(runs))

    @app.command()
    def insights(
        workspace: WorkspaceOption = Path("."),
        asset: Annotated[str | None, typer.Option(help="Only insights about this asset.")] = None,
        regime: Annotated[str | None, typer.Option(help="Only insights about this regime.")] = None,
        json_out: JsonOption = False,
    ) -> None:
        """Print the insights an agent should see next (what load_prior_insights returns)."""
        ws, _ = open_workspace(workspace)
        prior = load_prior_insights(ws, asset=asset, regime=regime)
        if json_out:
            rows = [
                {"id": i.id, "title": i.title, "path": ws.relative(i.path), **jsonable(dict(i.front))}
                for i in prior.insights
            ]
            print_json({"insights": rows, "text": prior.text})
            return
        print_markdown(prior.text or "No active insights.")
