"""``dreaming search``, ``dreaming gap add`` and ``dreaming gap list``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, cast

import typer

from dreaming.agent._cli_common import (
    EXIT_FAILED,
    EXIT_USAGE,
    JsonOption,
    NowOption,
    WorkspaceOption,
    console,
    err_console,
    open_workspace,
    parse_now,
    print_json,
    refused_writes,
)
from dreaming.errors import ToolError
from dreaming.memory.gaps import GAP_STATUSES, GAP_TYPES, GapStatus, GapType, KnowledgeGap, list_gaps, record_gap
from dreaming.memory.search import SearchHit
from dreaming.tools.memory_search import search_and_record

__all__ = ["register"]

LimitOption = Annotated[int, typer.Option("--limit", "-n", min=1, max=100, help="How many hits to show at most.")]


def _gap_json(gap: KnowledgeGap | None) -> dict[str, Any] | None:
    return None if gap is None else {"key": gap.key, **gap.to_json()}


def _one_line(text: str, width: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _print_hits(hits: list[SearchHit]) -> None:
    if not hits:
        console.print("no hits")
    for hit in hits:
        console.print(
            f"{hit.path}:{hit.start_line}-{hit.end_line}  {hit.score:.2f}  {_one_line(hit.snippet)}", highlight=False
        )


def search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    limit: LimitOption = 8,
    workspace: WorkspaceOption = Path("."),
    now: NowOption = None,
    as_json: JsonOption = False,
) -> None:
    """Search the memory; record the recall, and a knowledge gap when the results are empty or weak."""
    ws, config = open_workspace(workspace)
    try:
        with refused_writes():
            outcome = search_and_record(ws, query, now=parse_now(now), timezone=config.timezone, limit=limit)
    except ToolError as exc:
        err_console.print(f"[red]error:[/] {exc}")
        raise typer.Exit(EXIT_FAILED) from exc
    if as_json:
        print_json(
            {
                "query": query,
                "hits": [hit.to_json() for hit in outcome.hits],
                "gap_type": outcome.gap_type,
                "gap": _gap_json(outcome.gap),
                "recording_errors": outcome.recording_errors,
            }
        )
        return
    _print_hits(outcome.hits)
    if outcome.gap is not None:
        console.print(f"recorded knowledge gap ({outcome.gap.type}, seen {outcome.gap.count}x)", highlight=False)
    if outcome.recording_errors:
        err_console.print(f"[yellow]warning:[/] {outcome.recording_errors} recording step(s) failed (see the log)")


def gap_add(
    query: Annotated[str, typer.Argument(help="The question the memory cannot answer.")],
    gap_type: Annotated[
        str, typer.Option("--type", help=f"One of {', '.join(GAP_TYPES)}; by hand it defaults to no_results.")
    ] = "no_results",
    workspace: WorkspaceOption = Path("."),
    now: NowOption = None,
    as_json: JsonOption = False,
) -> None:
    """Record a knowledge gap by hand."""
    if gap_type not in GAP_TYPES:
        raise typer.BadParameter(f"--type must be one of {', '.join(GAP_TYPES)}")
    ws, _ = open_workspace(workspace)
    try:
        with refused_writes():
            gap = record_gap(ws, query, cast(GapType, gap_type), best_score=0.0, now=parse_now(now))
    except ValueError as exc:
        err_console.print(f"[red]error:[/] {exc}")
        raise typer.Exit(EXIT_USAGE) from exc
    if as_json:
        print_json(_gap_json(gap))
        return
    console.print(f"recorded knowledge gap {gap.key!r} ({gap.type}, seen {gap.count}x, {gap.status})", highlight=False)


def gap_list(
    status: Annotated[
        str | None, typer.Option("--status", help=f"Only gaps with this status: {', '.join(GAP_STATUSES)}.")
    ] = None,
    workspace: WorkspaceOption = Path("."),
    now: NowOption = None,
    as_json: JsonOption = False,
) -> None:
    """List knowledge gaps, most frequent first."""
    if status is not None and status not in GAP_STATUSES:
        raise typer.BadParameter(f"--status must be one of {', '.join(GAP_STATUSES)}")
    ws, _ = open_workspace(workspace)
    gaps = list_gaps(ws, status=cast(GapStatus | None, status), now=parse_now(now))
    if as_json:
        print_json({"gaps": [_gap_json(gap) for gap in gaps]})
        return
    if not gaps:
        console.print("no knowledge gaps")
    for gap in gaps:
        wait = f", waits until {gap.next_attempt_after.isoformat()}" if gap.next_attempt_after else ""
        console.print(
            f"{gap.count:>4}x  {gap.status:<10} {gap.type:<14} {gap.query}  "
            f"(last seen {gap.last_seen.isoformat()}, {gap.attempts} fruitless attempt(s){wait})",
            highlight=False,
        )


def register(app: typer.Typer) -> None:
    """Add ``search`` and the ``gap`` group to the command line."""
    app.command("search")(search)
    gaps = typer.Typer(help="Record or list knowledge gaps.", no_args_is_help=True)
    gaps.command("add")(gap_add)
    gaps.command("list")(gap_list)
    app.add_typer(gaps, name="gap")
