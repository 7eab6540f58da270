"""``dreaming promote`` and ``dreaming doctor``: the recall path from the command line."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any

import typer

from dreaming.cli.options import (
    EXIT_LOCK_BUSY,
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
from dreaming.errors import LockBusyError
from dreaming.memory import ConsolidationLock, check_confined
from dreaming.memory.recall import (
    Candidate,
    PromotionSummary,
    audit_recall_artifacts,
    deep_sleep_recall,
    repair_recall_artifacts,
)

__all__ = ["promotion_json", "register"]


def _candidate_json(c: Candidate) -> dict[str, Any]:
    return {
        "key": c.key,
        "path": c.path,
        "start_line": c.start_line,
        "end_line": c.end_line,
        "score": round(c.score, 6),
        "recall_count": c.recall_count,
        "daily_count": c.daily_count,
        "grounded_count": c.grounded_count,
        "unique_queries": c.unique_queries,
        "components": {k: round(v, 6) for k, v in asdict(c.components).items()},
    }


def promotion_json(summary: PromotionSummary) -> dict[str, Any]:
    """Return ``{"candidates": [...], "skipped": [{"key", "gate"}]}`` for a promotion run."""
    return {
        "candidates": [_candidate_json(c) for c in summary.ranking.candidates],
        "skipped": [{"key": key, "gate": gate} for key, gate in summary.skipped],
    }


def register(app: typer.Typer) -> None:
    """Add ``promote`` and ``doctor`` to ``app``."""

    @app.command()
    def promote(
        dry_run: Annotated[bool, typer.Option("--dry-run", help="Rank and show; write nothing.")] = False,
        json_out: JsonOption = False,
        now: NowOption = None,
        workspace: WorkspaceOption = Path("."),
    ) -> None:
        """Rank recalls and promote the best into MEMORY.md (each candidate with its components)."""
        ws, config = open_workspace(workspace)
        moment = parse_now(now)
        if dry_run:
            summary = deep_sleep_recall(ws, config, now=moment, dry_run=True)
        else:
            try:
                with refused_writes():
                    check_confined(ws)
                    with ConsolidationLock(ws.lock_file, timeout_s=config.lock_timeout_seconds):
                        summary = deep_sleep_recall(ws, config, now=moment)
            except LockBusyError as exc:
                err_console.print(f"[red]error:[/] {exc}")
                raise typer.Exit(EXIT_LOCK_BUSY) from exc
        if json_out:
            print_json(promotion_json(summary))
            return
        if summary.disabled_reason:
            console.print(summary.disabled_reason)
        for c in summary.ranking.candidates:
            console.print(
                f"{c.score:.3f} {c.path}:{c.start_line}-{c.end_line} recalls={c.recall_count} "
                f"ingestion={c.daily_count} grounded={c.grounded_count}"
            )
        verb = "would promote" if dry_run else "promoted"
        console.print(
            f"{verb} {len(summary.applied)}; held back {len(summary.skipped)}; real recalls {summary.real_recalls}, "
            f"ingestion signals {summary.ingestion_signals}"
        )

    @app.command()
    def doctor(
        repair: Annotated[bool, typer.Option("--repair", help="Fix what can be fixed.")] = False,
        json_out: JsonOption = False,
        now: NowOption = None,
        workspace: WorkspaceOption = Path("."),
    ) -> None:
        """Audit (and with --repair, fix) the recall store and its lock."""
        ws, _ = open_workspace(workspace)
        moment = parse_now(now)
        payload: dict[str, Any] = {}
        if repair:
            with refused_writes():
                payload["repair"] = asdict(repair_recall_artifacts(ws, now=moment))
        payload["audit"] = asdict(audit_recall_artifacts(ws, now=moment))
        if json_out:
            print_json(payload)
            return
        issues = payload["audit"]["issues"]
        for issue in issues:
            console.print(f"{issue['severity']}: {issue['code']}: {issue['message']}")
        if repair:
            console.print(f"repair: {payload['repair']}")
        if not issues:
            console.print(f"recall store healthy ({payload['audit']['entry_count']} entries)")
