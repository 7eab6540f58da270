"""Promote recalls into MEMORY.md, as ``openclaw memory promote`` and as OpenClaw's nightly deep sweep do.

- :func:`promote_short_term_recalls` is ``dreaming promote``: no repair; every entry ranked with no gate and no limit,
  then apply checks the gates and ``--limit`` (no limit by default: every eligible candidate).
- :func:`deep_sleep_recall` is the nightly sweep (``dreaming run``'s deep phase): repair (:func:`sweep_repair`), rank
  with the configured gates and limit, then apply with the consolidation filter: an entry must come from the owner or
  the agent, and a session-corpus entry from an interactive session. OpenClaw holds back entries without provenance
  too; with ``[recall] openclaw_compat = false`` they are promoted, since a JSON store written before 2026.9 has no
  provenance at all (OpenClaw #123361: migrated stores stuck on their old working set).

Both read the store as OpenClaw reads it (normalized and capped), and what apply writes back is that store with its
updates, as OpenClaw's ``writeStore`` writes it. The sweep ranks the store as repair left it, read back.

Apply, under the short-term lock (reference §7): candidates refreshed from the store, the gates re-checked in
OpenClaw's order, each rehydrated from its live note (:func:`relocate_candidate_range`), candidates already marked in
MEMORY.md reconciled, the rest appended (:func:`budgeted_memory_append`) or held back for the budget, then the store
updated: the rehydrated lines and snippet, ``promotedAt``; the key never changes. A dry run writes nothing.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from dreaming.config import DeepConfig, DreamingConfig
from dreaming.memory._decode import (
    bad_line_numbers,
    decode_keeping_bytes,
    encode_keeping_bytes,
    read_user_text,
    undecodable_note,
)
from dreaming.memory._secrets import redact_secrets
from dreaming.memory.files import InputReport, atomic_write_bytes, atomic_write_text, record_event
from dreaming.memory.recall._apply import (
    PlannedPromotion,
    PromotionLine,
    budgeted_memory_append,
    build_promotion_section,
    extract_promotion_keys,
    overlaps_managed_fence,
    plan_promotion,
    relocate_candidate_range,
)
from dreaming.memory.recall._audit import SweepRepair, note_candidates, sweep_repair
from dreaming.memory.recall._contamination import is_contaminated_snippet
from dreaming.memory.recall._js import to_fixed, utf16_len
from dreaming.memory.recall._normalize import normalize_project_keys, normalize_store_in_place, truncate_snippet
from dreaming.memory.recall._paths import readable_note
from dreaming.memory.recall._phase_signals import read_phase_signals
from dreaming.memory.recall._phases import phase_report_path
from dreaming.memory.recall._ranking import Candidate, RankingResult, rank_entries
from dreaming.memory.recall._record import apply_retention, day_bucket_for
from dreaming.memory.recall._store import RecallStore, format_iso, parse_iso, read_store, short_term_lock, write_store
from dreaming.memory.workspace import Workspace

__all__ = ["AppliedPromotion", "PromotionSummary", "deep_sleep_recall", "promote_short_term_recalls"]

_SESSION_CORPUS = "memory/.dreams/session-corpus/"


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
    """The rehydrated snippet (MEMORY.md shows it without a leading list mark, cut to its display length)."""
    score: float
    """Its score."""
    reconciled: bool
    """True when its marker was already in MEMORY.md and nothing was appended."""


@dataclass(frozen=True, kw_only=True, slots=True)
class PromotionSummary:
    """What a promotion run did for recalls."""

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
    """``(key, reason)`` for candidates apply held back, with OpenClaw's reasons (``score threshold (...)``,
    ``source rehydration failed``, ``MEMORY.md budget exceeded (...)``, ...) or this project's (``holds_secret``)."""
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
    removed_dangling_entries: int = 0
    """Store entries dropped because their note is gone."""

    @property
    def skipped(self) -> tuple[tuple[str, str], ...]:
        """Return every ``(key, gate)`` that kept an entry out: ranking gates, then apply refusals."""
        return self.ranking.skipped + self.refused


@dataclass(frozen=True, kw_only=True, slots=True)
class _Gates:
    """The thresholds apply checks again (OpenClaw's ``applyShortTermPromotions`` options)."""

    min_score: float
    min_recall_count: int
    min_unique_queries: int
    max_age_days: int
    """Negative: no age gate."""
    limit: int | None
    """None: every eligible candidate."""
    consolidation: bool
    """The nightly sweep's origin/session filter."""

    @classmethod
    def of(cls, deep: DeepConfig, *, limit: int | None, consolidation: bool) -> _Gates:
        age = deep.max_age_days
        return cls(
            min_score=deep.min_score, min_recall_count=math.floor(deep.min_recall_count),
            min_unique_queries=math.floor(deep.min_unique_queries),
            max_age_days=math.floor(age) if math.isfinite(age) and age >= 0 else -1,
            limit=limit, consolidation=consolidation,
        )  # fmt: skip


@dataclass(frozen=True, kw_only=True, slots=True)
class _Applied:
    applied: tuple[AppliedPromotion, ...]
    refused: tuple[tuple[str, str], ...]
    appended: int
    reconciled: int
    compacted: tuple[str, ...]


def _int(value: object, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _trusted(provenance: object, path: str, *, compat: bool) -> bool:
    """Return whether the consolidation filter lets an entry through (owner or agent; interactive for sessions)."""
    if not isinstance(provenance, dict):
        return not compat  # this project promotes legacy entries, which never had provenance
    if provenance.get("originClass") not in ("owner", "agent"):
        return False
    session = path.replace("\\", "/").startswith((_SESSION_CORPUS, "sessions/"))
    return not session or provenance.get("sessionKind") == "interactive"


def _note_lines(path: Path) -> list[str] | None:
    # Read as ingestion read it (U+FFFD for bytes that are not UTF-8) and split as OpenClaw splits (``\r?\n``).
    try:
        text = read_user_text(path)[0]
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    return text.replace("\r\n", "\n").split("\n")


def _rehydrate_openclaw(ws: Workspace, c: Candidate) -> tuple[PlannedPromotion | None, list[str] | None]:
    for source in note_candidates(ws, c.path):
        lines = _note_lines(source) if ws.contains(source) else None
        if lines is None:
            continue
        found = relocate_candidate_range(lines, c.snippet, c.start_line, c.end_line)
        if found is None or overlaps_managed_fence(lines, found[0], found[1]):
            continue
        first, last, text = found
        return PlannedPromotion(candidate=c, start_line=first, end_line=last, text=text), lines
    return None, None


def _plan(ws: Workspace, c: Candidate, *, compat: bool) -> PlannedPromotion | str:
    """Rehydrate one candidate; return the plan or why it is held back."""
    if not compat:
        note = readable_note(ws, c.path)
        outcome = plan_promotion(c, _note_lines(note) if note is not None else None)
        return outcome
    plan, lines = _rehydrate_openclaw(ws, c)
    if plan is None or lines is None:
        return "source rehydration failed"
    if is_contaminated_snippet(plan.text):
        return "contamination filter after rehydration"
    raw = " ".join(line.strip() for line in lines[plan.start_line - 1 : plan.end_line])
    if redact_secrets(raw) != raw:
        return "holds_secret"  # the note is the one place a secret may stay; MEMORY.md is read by every session
    return plan


def _read_memory_md(ws: Workspace, report: InputReport | None) -> str:
    # Bytes of the user's that are not UTF-8 survive the rewrite byte for byte (surrogateescape both ways).
    try:
        current = decode_keeping_bytes(ws.memory_md.read_bytes())
    except FileNotFoundError:
        return ""
    bad = bad_line_numbers(current)
    if bad and report is not None:
        report.skip(ws.relative(ws.memory_md), bad[0], undecodable_note(bad, "kept byte for byte"))
    return current


def _gate(c: Candidate, entry: dict[str, Any] | None, gates: _Gates, *, compat: bool) -> str | None:
    """Return why apply holds a refreshed candidate back (OpenClaw's order), or None."""
    provenance = entry.get("provenance") if entry else None
    origin = provenance.get("originClass") if isinstance(provenance, dict) else None
    if origin in ("untrusted", "system"):
        return f"origin filter ({origin})"
    if gates.consolidation and (entry is None or not _trusted(provenance, c.path, compat=compat)):
        return "consolidation origin/session filter" if entry is not None else "candidate changed during apply"
    if is_contaminated_snippet(c.snippet):
        return "contamination filter"
    if c.promoted_at or (entry is not None and entry.get("promotedAt")):
        return "already promoted"
    signals = c.recall_count + c.daily_count + c.grounded_count
    if c.score < gates.min_score:
        return f"score threshold ({to_fixed(c.score, 3)} < {_js_number(gates.min_score)})"
    if signals < gates.min_recall_count:
        return f"signal threshold ({signals} < {gates.min_recall_count})"
    if c.unique_queries < gates.min_unique_queries:
        return f"query threshold ({c.unique_queries} < {gates.min_unique_queries})"
    if gates.max_age_days >= 0 and c.age_days > gates.max_age_days:
        return f"age threshold ({to_fixed(c.age_days, 1)}d > {gates.max_age_days}d)"
    return None


def _js_number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _refresh(c: Candidate, entry: dict[str, Any] | None) -> Candidate:
    """Return the candidate with its entry's current path, lines and snippet (OpenClaw refreshes them)."""
    if entry is None:
        return c
    return dataclasses.replace(
        c, path=str(entry.get("path", c.path)), start_line=_int(entry.get("startLine"), c.start_line),
        end_line=_int(entry.get("endLine"), c.end_line), snippet=str(entry.get("snippet", c.snippet)),
    )  # fmt: skip


def _line(plan: PlannedPromotion, entry: dict[str, Any] | None) -> PromotionLine:
    c = plan.candidate
    return PromotionLine(
        key=c.key, path=c.path, start_line=plan.start_line, end_line=plan.end_line, snippet=plan.text, score=c.score,
        signal_count=c.recall_count + c.daily_count + c.grounded_count, recall_count=c.recall_count,
        avg_score=c.avg_score, concept_tags=c.concept_tags,
        project_key=normalize_project_keys(entry.get("projectKey")) if entry else None,
    )  # fmt: skip


def _apply(
    ws: Workspace,
    config: DreamingConfig,
    store: RecallStore,
    candidates: tuple[Candidate, ...],
    gates: _Gates,
    *,
    now: datetime,
    day: str,
    dry_run: bool,
    report: InputReport | None,
) -> _Applied:
    """Apply ranked candidates to MEMORY.md and the store (module docstring). Call under the lock."""
    compat = config.recall.openclaw_compat
    refused: list[tuple[str, str]] = []
    eligible: list[Candidate] = []
    for ranked in candidates:
        entry = store.entries.get(ranked.key)
        c = _refresh(ranked, entry if isinstance(entry, dict) else None)
        reason = _gate(c, entry if isinstance(entry, dict) else None, gates, compat=compat)
        if reason is None:
            eligible.append(c)
        else:
            refused.append((c.key, reason))
    limit = len(eligible) if gates.limit is None else max(0, gates.limit)
    refused += [(c.key, f"selection limit ({limit})") for c in eligible[limit:]]
    plans: list[PlannedPromotion] = []
    for c in eligible[:limit]:
        outcome = _plan(ws, c, compat=compat)
        if isinstance(outcome, str):
            refused.append((c.key, outcome))
        else:
            plans.append(outcome)
    order = {c.key: n for n, c in enumerate(candidates)}

    def in_candidate_order(found: list[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
        return tuple(sorted(found, key=lambda item: order.get(item[0], len(order))))  # as OpenClaw lists them

    if not plans:
        return _Applied(applied=(), refused=in_candidate_order(refused), appended=0, reconciled=0, compacted=())
    current = _read_memory_md(ws, report)
    marked = extract_promotion_keys(current)
    already = [p for p in plans if p.candidate.key in marked]
    fresh = [p for p in plans if p.candidate.key not in marked]
    done, appended = list(already), 0
    dropped: list[str] = []
    if fresh:
        lines = [_line(p, store.entries.get(p.candidate.key)) for p in fresh]
        section = build_promotion_section(lines, day, config.deep.max_promoted_snippet_tokens)
        budget = max(0, config.deep.memory_file_max_chars)
        fraction = config.deep.max_prior_entry_loss_fraction
        content, dropped = budgeted_memory_append(current, section, budget, fraction)
        if budget > 0 and utf16_len(content) > budget:
            reason = f"MEMORY.md budget exceeded ({utf16_len(content)} > {budget} chars)"
            refused += [(p.candidate.key, reason) for p in fresh]
            dropped = []
        else:
            if not dry_run:
                atomic_write_bytes(ws.memory_md, encode_keeping_bytes(content))
            done += fresh
            appended = len(fresh)
    stamp = format_iso(now)
    for plan in done:
        entry = store.entries.get(plan.candidate.key)
        if isinstance(entry, dict):
            # The stored snippet keeps the 800-unit cap OpenClaw's writeStore applies to every entry.
            entry.update(startLine=plan.start_line, endLine=plan.end_line, snippet=truncate_snippet(plan.text),
                         promotedAt=stamp)  # fmt: skip
    if not dry_run:
        previous = parse_iso(store.updated_at)
        apply_retention(store, openclaw_compat=compat)
        write_store(ws, store, now=max(now, previous) if previous else now)
    fresh_keys = {p.candidate.key for p in fresh}
    applied = tuple(
        AppliedPromotion(
            key=p.candidate.key, path=p.candidate.path, start_line=p.start_line, end_line=p.end_line, text=p.text,
            score=p.candidate.score, reconciled=p.candidate.key not in fresh_keys,
        )
        for p in done
    )  # fmt: skip
    return _Applied(applied=applied, refused=in_candidate_order(refused), appended=appended, reconciled=len(already),
                    compacted=tuple(dropped))  # fmt: skip


def _summary(
    day: str,
    dry_run: bool,
    ranking: RankingResult,
    done: _Applied,
    *,
    invalid: int = 0,
    dangling: int = 0,
    overflow: int = 0,
    report_path: Path | None = None,
) -> PromotionSummary:
    by_key = {c.key: c for c in ranking.candidates}
    real = sum(by_key[a.key].recall_count + by_key[a.key].grounded_count for a in done.applied if a.key in by_key)
    ingestion = sum(by_key[a.key].daily_count for a in done.applied if a.key in by_key)
    return PromotionSummary(
        day=day, dry_run=dry_run, disabled_reason=None, ranking=ranking, applied=done.applied, refused=done.refused,
        appended=done.appended, reconciled_existing=done.reconciled, compacted_dates=done.compacted,
        real_recalls=real, ingestion_signals=ingestion, removed_invalid_entries=invalid,
        removed_overflow_entries=overflow, removed_dangling_entries=dangling, report_path=report_path,
    )  # fmt: skip


def _disabled(config: DreamingConfig, day: str, dry_run: bool) -> PromotionSummary | None:
    reason = None
    if not config.deep.enabled:
        reason = "deep promotion is disabled"
    elif config.deep.limit == 0:
        reason = "deep promotion skipped because limit=0"
    if reason is None:
        return None
    return PromotionSummary(
        day=day, dry_run=dry_run, disabled_reason=reason, ranking=RankingResult(candidates=(), skipped=()),
        applied=(), refused=(), appended=0, reconciled_existing=0, compacted_dates=(), real_recalls=0,
        ingestion_signals=0, removed_invalid_entries=0, removed_overflow_entries=0, report_path=None,
    )  # fmt: skip


def promote_short_term_recalls(
    ws: Workspace,
    config: DreamingConfig,
    *,
    now: datetime,
    limit: int | None = None,
    report: InputReport | None = None,
) -> PromotionSummary:
    """Promote as ``openclaw memory promote --apply`` does: no repair, rank everything, apply the gates and ``limit``.

    ``limit`` None promotes every eligible candidate. The gates are ``[deep]``'s; no deep report is written.
    """
    day = day_bucket_for(now, config.timezone)
    ungated = dataclasses.replace(
        config.deep, min_score=0.0, min_recall_count=0, min_unique_queries=0, max_age_days=-1.0, limit=sys.maxsize
    )
    gates = _Gates.of(config.deep, limit=limit, consolidation=False)
    compat = config.recall.openclaw_compat
    with short_term_lock(ws, wait_s=max(10.0, config.lock_timeout_seconds)):
        store = read_store(ws, now=now, move_unreadable=True)
        normalize_store_in_place(store, now=now, openclaw_compat=compat)
        signals = read_phase_signals(ws, now=now)
        ranking = rank_entries(store.entries, signals, ungated, now=now, openclaw_compat=compat)
        done = _apply(ws, config, store, ranking.candidates, gates, now=now, day=day, dry_run=False, report=report)
    if done.applied:
        record_event(ws.events, "memory.promotion.applied", now, applied=len(done.applied), appended=done.appended)
    return _summary(day, False, ranking, done)


def deep_sleep_recall(
    ws: Workspace, config: DreamingConfig, *, now: datetime, dry_run: bool = False, report: InputReport | None = None
) -> PromotionSummary:
    """Run the nightly sweep for recalls: repair, rank with ``[deep]``, apply with the consolidation filter; report.

    Writes ``memory/dreaming/deep/<day>.md`` unless ``dry_run``, which repairs and applies in memory only. MEMORY.md
    lines holding bytes that are not UTF-8 are reported to ``report`` and kept byte for byte.
    """
    day = day_bucket_for(now, config.timezone)
    disabled = _disabled(config, day, dry_run)
    if disabled is not None:
        return disabled
    gates = _Gates.of(config.deep, limit=config.deep.limit, consolidation=True)
    compat = config.recall.openclaw_compat
    _read_memory_md(ws, report)  # the night reports MEMORY.md's undecodable lines whether or not anything is promoted

    def sweep(store: RecallStore) -> tuple[RankingResult, _Applied, SweepRepair]:
        repair = sweep_repair(ws, store, now=now, compat=compat, write_signals=not dry_run)
        if repair.changed and not dry_run:
            write_store(ws, store, now=now)
            # Rank what is stored now, in the order it is read back (OpenClaw's ranking reads the store anew).
            store = read_store(ws, now=now)
        normalize_store_in_place(store, now=now, openclaw_compat=compat)
        signals = read_phase_signals(ws, now=now)
        ranking = rank_entries(store.entries, signals, config.deep, now=now, openclaw_compat=compat)
        done = _apply(ws, config, store, ranking.candidates, gates, now=now, day=day, dry_run=dry_run, report=None)
        return ranking, done, repair

    if dry_run:
        ranking, done, repair = sweep(read_store(ws, now=now))
    else:
        with short_term_lock(ws, wait_s=max(10.0, config.lock_timeout_seconds)):
            ranking, done, repair = sweep(read_store(ws, now=now, move_unreadable=True))
    path = None if dry_run else phase_report_path(ws, "deep", day)
    summary = _summary(
        day, dry_run, ranking, done, invalid=repair.removed_invalid_entries,
        dangling=repair.removed_dangling_entries, overflow=repair.removed_overflow_entries, report_path=path,
    )  # fmt: skip
    if path is not None:
        atomic_write_text(path, render_deep_report(summary))
        if done.applied:
            record_event(ws.events, "memory.promotion.applied", now, applied=len(done.applied), appended=done.appended)
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
