"""The memory's commands: ``promote`` and ``doctor`` (the recall path), ``search`` and ``gap add`` / ``gap list``.

The recall path and the search are imported by the commands that use them: ``--help`` and ``gap`` load neither.
"""

from __future__ import annotations

from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer
from rich.markup import escape

from dreaming.cli.options import (
    EXIT_FAILED,
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
    print_plain,
    refused_writes,
)
from dreaming.config import DeepConfig
from dreaming.errors import LockBusyError, RecallStoreError, ToolError
from dreaming.memory import ConsolidationLock, check_confined, readable_markdown
from dreaming.memory.gaps import GAP_STATUSES, GAP_TYPES, GapStatus, GapType, KnowledgeGap, list_gaps, record_gap

if TYPE_CHECKING:
    from dreaming.memory.recall import Candidate, PromotionSummary, RankingResult
    from dreaming.memory.search import SearchHit

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


def promotion_json(summary: PromotionSummary, deep: DeepConfig, stored: RankingResult | None = None) -> dict[str, Any]:
    """Return ``{"candidates": [...], "skipped": [{"key", "gate", "reason"}]}`` for a promotion run.

    A candidate that apply refuses (its note is gone, its lines are fenced) is skipped with that reason. With
    ``stored`` (the store as read before the run, ranked with the same gates and no limit), every stored entry is
    accounted for: one the run never saw (the nightly repair dropped it first) is reported with the gate the stored
    entry meets, so an entry dropped on read (a contaminated snippet, a note that is not a daily note) is never
    silently absent. A skipped entry that got a score carries it with its components.
    """
    from dreaming.memory.recall import gate_reason

    refused = dict(summary.refused)
    ranked = summary.ranking
    scored = {c.key: c for c in (*(stored.scored if stored else ()), *ranked.scored, *ranked.candidates)}
    seen = {c.key for c in ranked.candidates if c.key not in refused}
    skipped: list[dict[str, Any]] = []

    def skip(key: str, gate: str) -> None:
        seen.add(key)
        reason = summary.disabled_reason if gate == "disabled" else gate_reason(gate, deep)
        row: dict[str, Any] = {"key": key, "gate": gate, "reason": reason}
        if key in scored:
            row["score"] = round(scored[key].score, 6)
            row["components"] = _candidate_json(scored[key])["components"]
        skipped.append(row)

    for key, gate in summary.skipped:
        skip(key, gate)
    if stored is not None:
        for key, gate in stored.skipped:
            if key not in seen:
                skip(key, gate)
        for c in stored.candidates:
            if c.key not in seen:
                skip(c.key, "disabled" if summary.disabled_reason else "repaired_away")
    candidates = [_candidate_json(c) for c in ranked.candidates if c.key not in refused]
    return {"candidates": candidates, "skipped": skipped}


def _register_recall(app: typer.Typer) -> None:

    @app.command()
    def promote(
        dry_run: Annotated[bool, typer.Option("--dry-run", help="Rank and show; write nothing.")] = False,
        limit: Annotated[
            int | None, typer.Option("--limit", min=0, help="Promote at most this many (default: every eligible one).")
        ] = None,
        json_out: JsonOption = False,
        now: NowOption = None,
        workspace: WorkspaceOption = Path("."),
    ) -> None:
        """Rank recalls and promote the best into MEMORY.md (each candidate with its components)."""
        from dreaming.memory.recall import (
            check_recall_store_confined,
            deep_sleep_recall,
            promote_short_term_recalls,
            rank_short_term_candidates,
        )

        ws, config = open_workspace(workspace)
        moment = parse_now(now)
        stored = None
        if json_out:  # the store as it stands, ranked without a limit: it explains entries the run never sees
            unlimited = replace(config.deep, limit=1_000_000_000)
            stored = rank_short_term_candidates(
                ws, unlimited, now=moment, openclaw_compat=config.recall.openclaw_compat
            )
        if dry_run:
            summary = deep_sleep_recall(ws, config, now=moment, dry_run=True)
        else:
            try:
                with refused_writes():
                    check_confined(ws)
                    check_recall_store_confined(ws)
                    with ConsolidationLock(ws.lock_file, timeout_s=config.lock_timeout_seconds):
                        # ``openclaw memory promote --apply``: no repair, every entry ranked, the gates at apply.
                        summary = promote_short_term_recalls(ws, config, now=moment, limit=limit)
            except LockBusyError as exc:
                err_console.print(f"[red]error:[/] {exc}")
                raise typer.Exit(EXIT_LOCK_BUSY) from exc
        if json_out:
            print_json(promotion_json(summary, config.deep, stored))
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
        """Say which recall store the workspace uses and whether semantic search is on; audit it (--repair fixes it)."""
        from dreaming.memory.recall import audit_recall_artifacts, describe_recall_store, repair_recall_artifacts

        ws, config = open_workspace(workspace)
        moment = parse_now(now)
        compat = config.recall.openclaw_compat
        payload: dict[str, Any] = {
            "store": asdict(describe_recall_store(ws, now=moment)),
            "semantic_search": _semantic_state(config.search.semantic),
        }
        failed = None
        if repair:
            with refused_writes():
                try:
                    payload["repair"] = asdict(repair_recall_artifacts(ws, now=moment, openclaw_compat=compat))
                except RecallStoreError as exc:  # OpenClaw's database cannot be used: say so, and still audit
                    failed = str(exc)
                    payload["repair"] = {"error": failed}
        payload["audit"] = asdict(audit_recall_artifacts(ws, now=moment, openclaw_compat=compat))
        if json_out:
            print_json(payload)
        else:
            _print_doctor(payload, repair=repair)
        if failed is not None:
            raise typer.Exit(EXIT_FAILED)


def _store_lines(store: dict[str, Any]) -> list[str]:
    """Return the lines saying which recall store is used, why, and what it holds."""
    if store["kind"] == "sqlite":
        version = store["user_version"]
        state = f"user_version {version}" if version is not None else "unreadable"
        key = f", workspace key {store['workspace_key']}" if store["workspace_key"] else ""
        lines = [f"recall store: OpenClaw SQLite {store['db']} ({state}){key} ({store['reason']})"]
        if store["rows"]:
            lines.append("  rows: " + ", ".join(f"{ns} {n}" for ns, n in store["rows"].items()))
    else:
        lines = [f"recall store: JSON {store['json_path']} ({store['reason']})"]
    if store["problem"]:
        lines.append(f"error: recall-store-unusable: {store['problem']}")
    lines += [f"warn: recall-store-choice: {w}" for w in store["warnings"]]
    return lines


def _semantic_state(configured: bool) -> str:
    """Return ``on``, ``off`` or ``not_installed`` (configured, but the ``semantic`` extra is missing)."""
    from dreaming.memory.search import semantic_installed

    if not configured:
        return "off"
    return "on" if semantic_installed() else "not_installed"


_SEMANTIC_LINES = {
    "on": "semantic search: on",
    "off": "semantic search: off",
    "not_installed": "semantic search: configured but the semantic extra is not installed "
    "(pip install 'dreaming[semantic]'); keyword search only",
}


def _print_doctor(payload: dict[str, Any], *, repair: bool) -> None:
    for line in _store_lines(payload["store"]):
        print_plain(line)
    print_plain(_SEMANTIC_LINES[payload["semantic_search"]])
    issues = payload["audit"]["issues"]
    for issue in issues:
        console.print(f"{issue['severity']}: {issue['code']}: {escape(issue['message'])}", highlight=False)
    if repair:
        error = payload["repair"].get("error")
        if error:
            err_console.print(f"[red]error:[/] {escape(error)}", highlight=False)
        else:
            console.print(f"repair: {payload['repair']}", highlight=False)
    if not issues:
        console.print(f"recall store healthy ({payload['audit']['entry_count']} entries)")


LimitOption = Annotated[int, typer.Option("--limit", "-n", min=1, max=100, help="How many hits to show at most.")]


def _gap_json(gap: KnowledgeGap | None) -> dict[str, Any] | None:
    return None if gap is None else {"key": gap.key, **gap.to_json()}


def _one_line(text: str, width: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _print_hits(hits: list[SearchHit]) -> None:
    from dreaming.memory.recall import note_snippet

    if not hits:
        console.print("no hits")
    for hit in hits:
        # Shown as recall records it (``Committee: The CIO asked ...; ...``), and a MEMORY.md chunk without the
        # promotion markers it holds, as all memory markdown is shown.
        snippet = _one_line(note_snippet(readable_markdown(hit.snippet).splitlines()))
        print_plain(f"{hit.path}:{hit.start_line}-{hit.end_line}  {hit.score:.2f}  {snippet}")


def search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    limit: LimitOption = 8,
    workspace: WorkspaceOption = Path("."),
    now: NowOption = None,
    as_json: JsonOption = False,
) -> None:
    """Search the memory; record the recall, and a knowledge gap when the results are empty or weak."""
    from dreaming.tools.memory_search import search_and_record

    ws, config = open_workspace(workspace)
    try:
        with refused_writes():
            outcome = search_and_record(ws, query, now=parse_now(now), timezone=config.timezone, limit=limit,
                                        openclaw_compat=config.recall.openclaw_compat,
                                        semantic=config.search.semantic)  # fmt: skip
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


def _register_search(app: typer.Typer) -> None:
    app.command("search")(search)
    gaps = typer.Typer(help="Record or list knowledge gaps.", no_args_is_help=True)
    gaps.command("add")(gap_add)
    gaps.command("list")(gap_list)
    app.add_typer(gaps, name="gap")


def register(app: typer.Typer) -> None:
    """Add ``promote``, ``doctor``, ``search`` and the ``gap`` group to ``app``, in that order."""
    _register_recall(app)
    _register_search(app)
