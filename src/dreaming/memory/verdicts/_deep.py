"""Deep sleep of the verdict path: gate, aging, insight files, retirement to the archive, the MEMORY.md index.

Writes are ordered so that a run killed at any point and run again ends with the same files as an uninterrupted
run: first every promoted insight file, then every retirement (archive copy written before the active file goes),
then the index. Each write is atomic and skipped when the bytes are already there.

The body of a promoted insight file is the seed's: title, statistics, interpretation, action suggestion
(:func:`insight_body`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from dreaming.config import VerdictsConfig
from dreaming.memory.files import InputReport, read_state
from dreaming.memory.insights import Scalar, active_insights, read_insight, write_insight, write_memory_index
from dreaming.memory.verdicts._candidates import VerdictCandidate, passes_gate
from dreaming.memory.workspace import Workspace, settled_decision

__all__ = [
    "VERDICT_KINDS",
    "DeepSummary",
    "deep_sleep_verdicts",
    "gate_passing",
    "insight_body",
    "insight_title",
    "load_candidates",
]

VERDICT_KINDS = ("caution", "reliable")
"""The ``kind`` of a verdict insight; deep sleep of the verdict path manages only these files."""
_HISTORY = ("last_retired", "last_retired_reason")
_REGIME_PHRASE = {"uptrend": "an uptrend", "downtrend": "a downtrend", "range_bound": "a range-bound market"}
_BULLISH = ("BUY", "ACCUMULATE")


@dataclass(frozen=True, kw_only=True, slots=True)
class DeepSummary:
    """What deep sleep did."""

    promoted: tuple[str, ...] = ()
    """Ids newly written to memory/insights/ (including those restored from the archive)."""
    restored: tuple[str, ...] = ()
    """Of the promoted, those that came back from the archive (a recurring pattern)."""
    updated: tuple[str, ...] = ()
    """Ids already active and confirmed again (statistics refreshed in place)."""
    retired: tuple[tuple[str, str], ...] = ()
    """``(id, reason)`` of each insight moved to the archive."""
    vetoed: tuple[str, ...] = ()
    """Passing, fresh candidates that a model vetoed."""
    stale: tuple[str, ...] = ()
    """Candidates that pass the gate but were last seen more than ``insight_max_age_days`` ago."""
    index_changed: bool = False
    """Whether MEMORY.md changed."""
    problem: str | None = None
    """Why candidates.json could not be used (it is then left alone or moved aside; no insight is touched)."""


def load_candidates(ws: Workspace, *, now: datetime) -> tuple[list[VerdictCandidate], str | None]:
    """Read ``candidates.json``; return its usable candidates and, when it cannot be used, why."""
    loaded = read_state(ws.candidates, versions=(1,), now=now)
    if loaded.data is None:
        if loaded.problem:
            return [], f"{ws.relative(ws.candidates)} {loaded.problem}; moved aside to {loaded.moved_aside}"
        return [], f"{ws.relative(ws.candidates)} is missing"
    raw = loaded.data.get("candidates")
    entries = raw if isinstance(raw, list) else []
    return [c for c in (VerdictCandidate.from_json(e) for e in entries) if c is not None], None


def _is_stale(c: VerdictCandidate, today: date, config: VerdictsConfig) -> bool:
    try:
        seen = date.fromisoformat(c.last_seen)
    except ValueError:
        return True
    return (today - seen).days > config.insight_max_age_days


def gate_passing(ws: Workspace, config: VerdictsConfig, *, now: datetime) -> list[VerdictCandidate]:
    """Return the candidates that pass the gate and are not stale: what a model verifier may be asked to veto."""
    candidates, _ = load_candidates(ws, now=now)
    today = now.date()
    return [c for c in candidates if passes_gate(c.score, c.n, config) and not _is_stale(c, today, config)]


def _front(c: VerdictCandidate, *, first_promoted: str, today: str, history: Mapping[str, Scalar]) -> dict[str, Scalar]:
    stats: dict[str, Any] = c.to_json()
    front: dict[str, Scalar] = {k: stats[k] for k in ("id", "kind", "asset", "verdict", "regime", "window")}
    front.update(score=c.score, n=c.n, hits=c.hits, hit_rate=c.hit_rate, avg_change_pct=c.avg_change_pct)
    for name in ("missed_up_rate", "avoided_down_rate", "wrong_way_rate"):
        if name in stats:
            front[name] = stats[name]
    front.update(last_seen=c.last_seen, first_promoted=first_promoted, last_confirmed=today, status="active")
    front.update({k: history[k] for k in _HISTORY if k in history})
    return front


def _pct(rate: float | None) -> str:
    return f"{(rate or 0.0) * 100:.1f}%"


def insight_title(c: VerdictCandidate) -> str:
    """Return the title line without the leading ``# ``."""
    where = f"{c.verdict} on {c.asset} in {_REGIME_PHRASE.get(c.regime, c.regime)} ({c.window})"
    if c.kind == "caution":
        if c.verdict == "HOLD":
            return f"⚠️ Admonition: {where} frequently misses opportunities"
        return f"⚠️ Admonition: {where} often goes the wrong way"
    return f"✅ Reliable: {where} is usually right"


def _interpretation(c: VerdictCandidate) -> tuple[str, str]:
    days = c.window.removesuffix("d")
    lead = (
        f"Historically, when the market was in {_REGIME_PHRASE.get(c.regime, c.regime)}, the committee issued "
        f"{c.verdict} for {c.asset}. {days} days later,"
    )
    tail = f"(average {c.avg_change_pct:+.2f}%, n={c.n})"
    if c.verdict == "HOLD":
        if c.kind == "caution":
            return (
                f"{lead} the market clearly rose in {_pct(c.missed_up_rate)} of cases {tail}: cash was held, "
                "missing the rally.",
                "In this regime, the tendency to HOLD should be reduced, and BUY/ACCUMULATE should be considered "
                "more actively.",
            )
        return (
            f"{lead} the market stayed within its normal range in {_pct(c.hit_rate)} of cases {tail}.",
            f"In this regime, HOLD on {c.asset} has been a sound default; keep it unless the evidence is strong.",
        )
    bullish = c.verdict in _BULLISH
    if c.kind == "caution":
        moved = "fell" if bullish else "rose"
        advice = (
            f"be more skeptical of {c.verdict} on {c.asset}; consider HOLD or a smaller position."
            if bullish
            else f"reconsider {c.verdict} on {c.asset}; selling has often been premature."
        )
        return (
            f"{lead} the market {moved} instead in {_pct(c.wrong_way_rate)} of cases {tail}.",
            f"In this regime, {advice}",
        )
    moved = "rose" if bullish else "fell"
    return (
        f"{lead} the market {moved} as expected in {_pct(c.hit_rate)} of cases {tail}.",
        f"In this regime, {c.verdict} on {c.asset} has usually been right and can be given more weight.",
    )


def insight_body(c: VerdictCandidate) -> str:
    """Return the markdown body of an insight file (everything after the front matter)."""
    days = c.window.removesuffix("d")
    stats = [
        f"- Sample Count: {c.n}",
        f"- {days}-day Hit Rate: {_pct(c.hit_rate)}",
        f"- Average {days}-day Actual Change: {c.avg_change_pct:+.2f}%",
    ]
    if c.verdict == "HOLD":
        stats.append(
            f"- Missed Opportunity Rate (HOLD but market rose): {_pct(c.missed_up_rate)} / "
            f"Avoided Decline Rate: {_pct(c.avoided_down_rate)}"
        )
    else:
        stats.append(f"- Wrong-Way Rate: {_pct(c.wrong_way_rate)}")
    stats.append(f"- Score: {c.score} / Last seen: {c.last_seen}")
    interpretation, action = _interpretation(c)
    return (
        f"# {insight_title(c)}\n\n## Statistics\n" + "\n".join(stats) + "\n\n## Interpretation\n"
        f"{interpretation}\n\n> Action suggestion: {action}\n"
    )


def _retire_reason(
    insight_id: str,
    front: Mapping[str, Scalar],
    by_id: Mapping[str, VerdictCandidate],
    vetoes: Mapping[str, str],
    today: date,
    config: VerdictsConfig,
) -> str:
    if insight_id in vetoes:
        return f"vetoed: {vetoes[insight_id]}"
    c = by_id.get(insight_id)
    if c is not None:
        if _is_stale(c, today, config):
            return f"stale: last seen {c.last_seen}, more than {config.insight_max_age_days} days before {today}"
        failed = []
        if c.score < config.gate_min_score:
            failed.append(f"score {c.score} < {config.gate_min_score}")
        if c.n < config.gate_min_count:
            failed.append(f"n {c.n} < {config.gate_min_count}")
        return "failed gate: " + ", ".join(failed)
    bucket = tuple(front.get(k) for k in ("asset", "verdict", "regime", "window"))
    for other in by_id.values():
        if (other.asset, other.verdict, other.regime, other.window) == bucket:
            return f"pattern changed: the bucket now scores as {other.id} (score {other.score}, n={other.n})"
    return "no longer observed: the bucket has no classified sample"


def deep_sleep_verdicts(
    ws: Workspace,
    config: VerdictsConfig,
    *,
    now: datetime,
    vetoes: Mapping[str, str] | None = None,
    run_id: str | None = None,
    report: InputReport | None = None,
) -> DeepSummary:
    """Promote passing, fresh, unvetoed candidates to insight files; retire the rest to the archive; update the index.

    ``vetoes`` maps a candidate id to a model's reason for rejecting it. A veto can only keep an insight out (or
    retire an existing one); it never promotes one or changes a number. With ``run_id``, the plan (what is
    promoted, restored, updated, retired) is recorded before any write and reused when that run is resumed.
    retire an existing one); it never promotes one or changes a number. Repairs of MEMORY.md's markers go to
    ``report``.
    """
    existed = ws.candidates.exists()
    candidates, problem = load_candidates(ws, now=now)
    if problem is not None and not existed:  # nothing to promote or retire; the index still follows the files
        return DeepSummary(index_changed=write_memory_index(ws, now=now, report=report), problem=problem)
    if problem is not None:  # unusable (moved aside): no insight is touched
        return DeepSummary(problem=problem)
    vetoes = dict(vetoes or {})
    today = now.date()
    by_id = {c.id: c for c in candidates}
    passing = [c for c in candidates if passes_gate(c.score, c.n, config)]
    stale = sorted(c.id for c in passing if _is_stale(c, today, config))
    fresh = [c for c in passing if c.id not in stale]
    vetoed = sorted(c.id for c in fresh if c.id in vetoes)
    promote = sorted((c for c in fresh if c.id not in vetoes), key=lambda c: c.id)

    promoted: list[str] = []
    restored: list[str] = []
    updated: list[str] = []
    writes = []
    for c in promote:  # the plan of 1: which insight files are new, restored or updated
        path = ws.insights_dir / f"{c.id}.md"
        archived_path = ws.archive_dir / path.name
        current = read_insight(path)
        archived = read_insight(archived_path)
        if current is not None and current.status == "active":
            first = str(current.front.get("first_promoted") or today.isoformat())
            history: Mapping[str, Scalar] = current.front
            updated.append(c.id)
        elif archived is not None:
            first = str(archived.front.get("first_promoted") or today.isoformat())
            history = {
                "last_retired": archived.front.get("retired"),
                "last_retired_reason": archived.front.get("retired_reason"),
            }
            promoted.append(c.id)
            restored.append(c.id)
        else:
            first, history = today.isoformat(), {}
            promoted.append(c.id)
        writes.append((c, path, archived_path, archived, _front(c, first_promoted=first, today=today.isoformat(),
                                                                 history=history)))  # fmt: skip
    keep = {c.id for c in promote}
    retiring = [  # the plan of 2
        (insight, _retire_reason(insight.id, insight.front, by_id, vetoes, today, config))
        for insight in active_insights(ws)
        if insight.kind in VERDICT_KINDS and insight.id not in keep
    ]
    plan: dict[str, list[Any]] = {
        "promoted": promoted,
        "restored": restored,
        "updated": updated,
        "retired": [[insight.id, reason] for insight, reason in retiring],
    }
    # Recorded before any write, so that a resumed run reports what this night did (``settled_decision``).
    plan = settled_decision(ws, "verdicts", plan, run_id=run_id, now=now)

    for c, path, archived_path, archived, front in writes:  # 1. insight files
        write_insight(path, front, insight_body(c))
        # The archived copy goes only once its history is carried by the active file.
        if archived is not None and front.get("last_retired") == archived.front.get("retired"):
            with contextlib.suppress(FileNotFoundError):
                archived_path.unlink()
    for insight, reason in retiring:  # 2. retirements
        front = dict(insight.front)
        front.update(status="retired", retired=today.isoformat(), retired_reason=reason)
        write_insight(ws.archive_dir / insight.path.name, front, insight.body)
        insight.path.unlink()

    return DeepSummary(  # 3. the index
        promoted=tuple(plan["promoted"]),
        restored=tuple(plan["restored"]),
        updated=tuple(plan["updated"]),
        retired=tuple((str(i), str(r)) for i, r in plan["retired"]),
        vetoed=tuple(vetoed),
        stale=tuple(stale),
        index_changed=write_memory_index(ws, now=now, report=report),
    )
