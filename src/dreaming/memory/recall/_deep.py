"""Deep sleep for recalls: repair the store, rank, promote into MEMORY.md within its size budget, report.

Everything that writes happens under the short-term promotion lock. A dry run reads, repairs in memory and ranks,
and writes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from dreaming.config import DreamingConfig
from dreaming.memory._decode import (
    bad_line_numbers,
    decode_keeping_bytes,
    encode_keeping_bytes,
    read_user_text,
    undecodable_note,
)
from dreaming.memory.files import InputReport, atomic_write_bytes, atomic_write_text, record_event
from dreaming.memory.recall._apply import (
    PlannedPromotion,
    compact_memory_for_budget,
    plan_promotion,
    promotion_marker,
    render_memory_update,
)
from dreaming.memory.recall._audit import repair_in_place
from dreaming.memory.recall._paths import readable_note
from dreaming.memory.recall._phase_signals import read_phase_signals
from dreaming.memory.recall._phases import phase_report_path
from dreaming.memory.recall._ranking import Candidate, RankingResult, rank_entries
from dreaming.memory.recall._record import day_bucket_for
from dreaming.memory.recall._store import RecallStore, format_iso, read_store, short_term_lock, write_store
from dreaming.memory.workspace import Workspace

__all__ = ["AppliedPromotion", "PromotionSummary", "deep_sleep_recall"]


@dataclass(frozen=True, kw_only=True, slots=True)
class AppliedPromotion:
    """One entry promoted (or found already promoted) this run."""

    key: str
    """Store key."""
    path: str
    """Note path."""
    start_line: int
    """Rehydrated first line."""
    end_line: int
    """Rehydrated last line."""
    text: str
    """The promoted text."""
    score: float
    """Its score."""
    reconciled: bool
    """True when its marker was already in MEMORY.md and nothing was appended."""


@dataclass(frozen=True, kw_only=True, slots=True)
class PromotionSummary:
    """What the deep phase did for recalls."""

    day: str
    """The dreaming day."""
    dry_run: bool
    """Nothing was written."""
    disabled_reason: str | None
    """Why nothing was attempted (disabled, limit 0), or None."""
    ranking: RankingResult
    """Candidates with components, and the gate that stopped every other entry."""
    applied: tuple[AppliedPromotion, ...]
    """Promotions, appended or reconciled."""
    refused: tuple[tuple[str, str], ...]
    """``(key, reason)`` for candidates refused at apply (fenced, snippet gone, note missing)."""
    appended: int
    """New bullets written to MEMORY.md."""
    reconciled_existing: int
    """Candidates whose marker was already in MEMORY.md."""
    compacted_dates: tuple[str, ...]
    """Dates of generated sections dropped for the size budget."""
    real_recalls: int
    """Organic recalls behind the applied promotions."""
    ingestion_signals: int
    """Daily/session ingestion signals behind them: reported apart, never counted as recalls (#72021)."""
    removed_invalid_entries: int
    """Store entries dropped by the repair step."""
    removed_overflow_entries: int
    """Store entries dropped for the entry cap."""
    report_path: Path | None
    """``memory/dreaming/deep/<day>.md`` when written."""

    @property
    def skipped(self) -> tuple[tuple[str, str], ...]:
        """Return every ``(key, gate)`` that kept an entry out: ranking gates, then apply refusals."""
        return self.ranking.skipped + self.refused


def _lines(path: Path | None) -> list[str] | None:
    # Read as ingestion read it (U+FFFD for bytes that are not UTF-8), so a recorded snippet still matches.
    if path is None:  # outside the workspace: never read
        return None
    try:
        return read_user_text(path)[0].split("\n")
    except (FileNotFoundError, IsADirectoryError):
        return None


def _plan(ws: Workspace, candidates: tuple[Candidate, ...]) -> tuple[list[PlannedPromotion], list[tuple[str, str]]]:
    plans: list[PlannedPromotion] = []
    refused: list[tuple[str, str]] = []
    for candidate in candidates:
        outcome = plan_promotion(candidate, _lines(readable_note(ws, candidate.path)))
        if isinstance(outcome, str):
            refused.append((candidate.key, outcome))
        else:
            plans.append(outcome)
    return plans, refused


_RunResult = tuple[
    RankingResult,
    list[PlannedPromotion],
    list[tuple[str, str]],
    list[PlannedPromotion],
    tuple[AppliedPromotion, ...],
    list[str],
    int,
    int,
]
"""What :func:`_run` found: ranking, plans, refusals, fresh plans, applied, compacted dates, invalid, overflow."""


def _read_memory_md(ws: Workspace, report: InputReport | None) -> str | None:
    # Bytes of the user's that are not UTF-8 survive the rewrite byte for byte (surrogateescape both ways).
    try:
        current = decode_keeping_bytes(ws.memory_md.read_bytes())
    except FileNotFoundError:
        return None
    bad = bad_line_numbers(current)
    if bad and report is not None:
        report.skip(ws.relative(ws.memory_md), bad[0], undecodable_note(bad, "kept byte for byte"))
    return current


def _run(
    ws: Workspace,
    config: DreamingConfig,
    store: RecallStore,
    now: datetime,
    day: str,
    dry_run: bool,
    report: InputReport | None = None,
) -> _RunResult:
    repaired, invalid, overflow = repair_in_place(store)
    ranking = rank_entries(
        store.entries, read_phase_signals(ws), config.deep, now=now, openclaw_compat=config.recall.openclaw_compat
    )
    plans, refused = _plan(ws, ranking.candidates)
    # Bytes decoded as they are (a CRLF file stays CRLF), and bytes that are not UTF-8 kept byte for byte.
    current = _read_memory_md(ws, report)
    fresh = [p for p in plans if current is None or promotion_marker(p.candidate.key) not in current]
    text = render_memory_update(current, fresh, day)
    text, compacted = compact_memory_for_budget(text, config.deep.memory_file_max_chars, keep_day=day)
    applied = tuple(
        AppliedPromotion(
            key=p.candidate.key,
            path=p.candidate.path,
            start_line=p.start_line,
            end_line=p.end_line,
            text=p.text,
            score=p.candidate.score,
            reconciled=p not in fresh,
        )
        for p in plans
    )
    if not dry_run:
        if fresh or compacted:
            atomic_write_bytes(ws.memory_md, encode_keeping_bytes(text))
        stamp = format_iso(now)
        for p in plans:
            entry = store.entries.get(p.candidate.key)
            if entry is not None:
                entry["promotedAt"] = stamp
        if plans or repaired:
            write_store(ws, store, now=now)
    return ranking, plans, refused, fresh, applied, compacted, invalid, overflow


def deep_sleep_recall(
    ws: Workspace, config: DreamingConfig, *, now: datetime, dry_run: bool = False, report: InputReport | None = None
) -> PromotionSummary:
    """Repair, rank and promote recalls into MEMORY.md; write the deep report unless ``dry_run``.

    MEMORY.md lines holding bytes that are not UTF-8 are reported to ``report`` and kept byte for byte.
    """
    day = day_bucket_for(now, config.timezone)
    reason = None
    if not config.deep.enabled:
        reason = "deep promotion is disabled"
    elif config.deep.limit == 0:
        reason = "deep promotion skipped because limit=0"
    if reason is not None:
        ranking = RankingResult(candidates=(), skipped=())
        return PromotionSummary(
            day=day, dry_run=dry_run, disabled_reason=reason, ranking=ranking, applied=(), refused=(), appended=0,
            reconciled_existing=0, compacted_dates=(), real_recalls=0, ingestion_signals=0,
            removed_invalid_entries=0, removed_overflow_entries=0, report_path=None,
        )  # fmt: skip
    if dry_run:
        result = _run(ws, config, read_store(ws, now=now), now, day, True)
    else:
        with short_term_lock(ws, wait_s=max(10.0, config.lock_timeout_seconds)):
            result = _run(ws, config, read_store(ws, now=now, move_unreadable=True), now, day, False, report)
    ranking, plans, refused, fresh, applied, compacted, invalid, overflow = result
    by_key = {c.key: c for c in ranking.candidates}
    summary = PromotionSummary(
        day=day, dry_run=dry_run, disabled_reason=None, ranking=ranking, applied=applied, refused=tuple(refused),
        appended=len(fresh), reconciled_existing=len(plans) - len(fresh), compacted_dates=tuple(compacted),
        real_recalls=sum(by_key[a.key].recall_count + by_key[a.key].grounded_count for a in applied),
        ingestion_signals=sum(by_key[a.key].daily_count for a in applied), removed_invalid_entries=invalid,
        removed_overflow_entries=overflow, report_path=None if dry_run else phase_report_path(ws, "deep", day),
    )  # fmt: skip
    if not dry_run:
        assert summary.report_path is not None
        atomic_write_text(summary.report_path, render_deep_report(summary))
        if applied:
            record_event(ws.events, "memory.promotion.applied", now, applied=len(applied), appended=len(fresh))
    return summary


def render_deep_report(summary: PromotionSummary) -> str:
    """Render ``memory/dreaming/deep/<day>.md``: promotions, then refusals and the real/ingestion split."""
    lines = [f"# Deep Sleep ({summary.day})", "", "## Deep Sleep"]
    for a in summary.applied:
        state = "already in MEMORY.md" if a.reconciled else "promoted"
        lines.append(f"- {a.text} [{state} score={a.score:.3f} source={a.path}:{a.start_line}-{a.end_line}]")
    if not summary.applied:
        lines.append("- No promotions.")
    lines += [
        "",
        f"- real recalls behind promotions: {summary.real_recalls}",
        f"- ingestion signals behind promotions (not recalls): {summary.ingestion_signals}",
        f"- entries held back by a gate: {len(summary.skipped)}",
    ]
    if summary.compacted_dates:
        lines.append(f"- compacted sections: {', '.join(summary.compacted_dates)}")
    return "\n".join(lines) + "\n"
