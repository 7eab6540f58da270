"""What each page of the viewer shows, read from the workspace's files and nothing else; nothing here writes.

Each ``*_page`` function returns the page's template context (plain mappings: Jinja reads them). Files that are
missing read as empty; files that do not parse are named in the page's ``problems`` rather than failing it, and
are never moved aside (the night does that, under its lock).

"As of": recall ranking and the budget window depend on "now". The viewer's "now" defaults to the last night's time
(the last ``run.finished`` event), so a page shows what the night saw; ``dreaming view --now`` changes it.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from dreaming.backtest._plot import plot_svg
from dreaming.config import DreamingConfig
from dreaming.memory import InputReport, InsightFile, Workspace, active_insights, iter_jsonl, read_insight
from dreaming.memory.gaps import list_gaps
from dreaming.memory.insights import insight_paths
from dreaming.memory.recall import gate_reason, rank_short_term_candidates
from dreaming.memory.verdicts import REGIMES
from dreaming.view._charts import Bar, SpendPoint, hit_rate_chart, spend_chart

__all__ = [
    "backtest_page",
    "budget_page",
    "dreams_page",
    "insight_anchor",
    "memory_page",
    "nights",
    "patterns_page",
    "research_page",
    "viewer_now",
]

_RUN_MARKER = re.compile(r"^<!--\s*dreaming:run:(?P<id>[^\s>]+)\s*-->\s*$")
_MAX_RECALL_ROWS = 200
"""The Memory page lists the best-scored entries up to this many (a store may hold thousands)."""
_MAX_FINDING_ROWS = 200
_VERDICT_KINDS = ("reliable", "caution")
_CONTEXT_LINES = 1
"""Lines shown before and after an evidence line."""


def _parse_time(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _events(ws: Workspace, report: InputReport) -> Iterator[dict[str, Any]]:
    for _, event in iter_jsonl(ws.events, report, label="memory/.dreams/events.jsonl"):
        yield event


def _problems(report: InputReport) -> list[str]:
    shown = [f"{bad.path}:{bad.line}: {bad.reason}" for bad in report.bad[:10]]
    if report.count > len(shown):
        shown.append(f"... {report.count - len(shown)} more unreadable lines")
    return shown


def nights(ws: Workspace, report: InputReport | None = None) -> list[dict[str, Any]]:
    """Return every night the event log knows, oldest first: its id, trigger, times, halts and digest."""
    report = report if report is not None else InputReport()
    found: dict[str, dict[str, Any]] = {}
    for event in _events(ws, report):
        run_id = event.get("run_id")
        if not isinstance(run_id, str):
            continue
        if event.get("type") == "run.started":
            found.setdefault(run_id, {"run_id": run_id, "finished": False, "halts": [], "digest": {}})
            found[run_id].update(trigger=event.get("trigger", ""), at=_parse_time(event.get("at")))
        elif event.get("type") == "run.finished":
            night = found.setdefault(run_id, {"run_id": run_id, "trigger": "", "at": _parse_time(event.get("at"))})
            digest = event.get("digest")
            night.update(
                finished=True,
                done=list(event.get("done") or []),
                halts=[h for h in event.get("halts") or [] if isinstance(h, dict)],
                bad_input=event.get("bad_input") or 0,
                digest=digest if isinstance(digest, dict) else {},
            )
    ordered = [n for n in found.values() if n.get("at") is not None]
    return sorted(ordered, key=lambda n: (n["at"], n["run_id"]))


def viewer_now(ws: Workspace) -> datetime:
    """Return the viewer's default "now": the last finished night's time, else the clock."""
    finished = [n["at"] for n in nights(ws) if n.get("finished")]
    return max(finished) if finished else datetime.now(UTC)


def _workspace_text(ws: Workspace, path: Path) -> str | None:
    """Return a markdown file's text as a page shows it; None when missing, unreadable or outside the workspace.

    A link to a file outside the workspace is not followed (as memory search does not follow one): the viewer may be
    served to others, and ``MEMORY.md -> /etc/passwd`` must not put that file on a page.
    """
    if not ws.contains(path):
        return None
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _outside(ws: Workspace, *paths: Path) -> list[str]:
    """Return a problem line for each of ``paths`` that links outside the workspace (not shown)."""
    return [
        f"{path.relative_to(ws.root).as_posix() if path.is_relative_to(ws.root) else path} links outside the"
        " workspace; not shown"
        for path in paths
        if not ws.contains(path)
    ]


def _diary_files(ws: Workspace) -> list[Path]:
    rotated = (
        sorted((ws.reports_dir / "diary").glob("DREAMS-until-*.md")) if (ws.reports_dir / "diary").is_dir() else []
    )
    return [*rotated, ws.dreams_md]


def diary_entries(ws: Workspace) -> dict[str, str]:
    """Return each diary entry's markdown by run id (DREAMS.md and its rotated parts); text without a marker is left."""
    entries: dict[str, str] = {}
    for path in _diary_files(ws):
        text = _workspace_text(ws, path)
        if text is None:
            continue
        lines = text.splitlines()
        starts = [i for i, line in enumerate(lines) if line.startswith("## ")]
        for number, start in enumerate(starts):
            end = starts[number + 1] if number + 1 < len(starts) else len(lines)
            block = lines[start:end]
            marker = next((m for line in block[:3] if (m := _RUN_MARKER.match(line.strip()))), None)
            if marker is not None:
                entries[marker["id"]] = "\n".join(block).strip() + "\n"
    return entries


def dreams_page(ws: Workspace) -> dict[str, Any]:
    """Return the Dreams page: every night newest first, with its numbers and its DREAMS.md entry."""
    report = InputReport()
    known = nights(ws, report)
    entries = diary_entries(ws)
    listed = {n["run_id"] for n in known}
    rows = [{**night, "entry": entries.get(night["run_id"], "")} for night in reversed(known)]
    orphans = [{"run_id": run_id, "entry": text} for run_id, text in entries.items() if run_id not in listed]
    return {"nights": rows, "orphans": orphans, "problems": [*_problems(report), *_outside(ws, *_diary_files(ws))]}


def insight_anchor(insight_id: str) -> str:
    """Return the HTML id an insight is shown under (the file stem, made safe for an attribute)."""
    return "insight-" + re.sub(r"[^A-Za-z0-9_-]", "-", insight_id)


def _insight_row(insight: InsightFile) -> dict[str, Any]:
    front = dict(insight.front)
    return {
        "id": insight.path.stem,
        "anchor": insight_anchor(insight.path.stem),
        "title": insight.title,
        "kind": insight.kind,
        "front": front,
        "body": insight.body,
    }


def _float(value: object) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _read_candidates(ws: Workspace) -> tuple[list[dict[str, Any]], str | None]:
    try:
        data = json.loads(ws.candidates.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return [], None
    except (OSError, ValueError) as exc:
        return [], f"memory/.dreams/candidates.json is unreadable ({type(exc).__name__})"
    rows = data.get("candidates") if isinstance(data, dict) else None
    if not isinstance(rows, list):
        return [], "memory/.dreams/candidates.json holds no candidate list"
    return [r for r in rows if isinstance(r, dict)], None


def _missed_gate(candidate: Mapping[str, Any], config: DreamingConfig) -> str:
    gate = config.verdicts
    missed = []
    score, n = _float(candidate.get("score")), int(_float(candidate.get("n")))
    if score < gate.gate_min_score:
        missed.append(f"score {score:.4f} < {gate.gate_min_score}")
    if n < gate.gate_min_count:
        missed.append(f"n {n} < {gate.gate_min_count}")
    return "; ".join(missed) or "passes"


def patterns_page(ws: Workspace, config: DreamingConfig) -> dict[str, Any]:
    """Return the Patterns page: active verdict insights, a hit-rate chart per asset, near misses and the archive."""
    insights = [_insight_row(i) for i in active_insights(ws) if i.kind in _VERDICT_KINDS]
    candidates, problem = _read_candidates(ws)
    promoted = {row["id"] for row in insights}
    gate = config.verdicts
    gate_label = f"score >= {gate.gate_min_score}, n >= {gate.gate_min_count}"
    charts = []
    by_asset: dict[tuple[str, str], list[Bar]] = defaultdict(list)
    for c in candidates:
        by_asset[(str(c.get("asset", "?")), str(c.get("window", "?")))].append(
            Bar(
                regime=str(c.get("regime", "?")),
                verdict=str(c.get("verdict", "?")),
                hit_rate=_float(c.get("hit_rate")),
                n=int(_float(c.get("n"))),
                passes_gate=bool(c.get("passes_gate")),
            )
        )
    for (asset, window), bars in sorted(by_asset.items()):
        title = f"{asset}, {window}: hit rate by regime and verdict"
        svg = hit_rate_chart(title, bars, gate_label=gate_label)
        charts.append({"asset": asset, "window": window, "title": title, "svg": svg})
    near = sorted(
        (c for c in candidates if not c.get("passes_gate")),
        key=lambda c: (-_float(c.get("score")), str(c.get("id"))),
    )[:10]
    stale = [c for c in candidates if c.get("passes_gate") and c.get("id") not in promoted]
    archive: list[dict[str, Any]] = []
    for path in insight_paths(ws, ws.archive_dir):
        insight = read_insight(path)
        if insight is not None:
            archive.append(_insight_row(insight))
    return {
        "insights": insights,
        "charts": charts,
        "near_misses": [{**c, "missed": _missed_gate(c, config)} for c in near],
        "stale": stale,
        "gate": gate_label,
        "max_age_days": gate.insight_max_age_days,
        "archive": archive,
        "problems": [problem] if problem else [],
    }


def memory_page(ws: Workspace, config: DreamingConfig, now: datetime) -> dict[str, Any]:
    """Return the Memory page: MEMORY.md, and every recall entry with its components and the gate that stopped it."""
    compat = config.recall.openclaw_compat
    ranked = rank_short_term_candidates(ws, config.deep, now=now, openclaw_compat=compat)
    gate_of = dict(ranked.skipped)
    candidate_keys = {c.key for c in ranked.candidates}
    open_gates = dataclasses.replace(
        config.deep, min_score=0.0, min_recall_count=0, min_unique_queries=0, max_age_days=-1.0, limit=1_000_000_000
    )
    everything = rank_short_term_candidates(ws, open_gates, now=now, include_promoted=True, openclaw_compat=compat)
    rows = []
    for candidate in everything.candidates[:_MAX_RECALL_ROWS]:
        gate = "passes" if candidate.key in candidate_keys else gate_of.get(candidate.key, "?")
        rows.append(
            {
                "candidate": candidate,
                "components": dataclasses.asdict(candidate.components),
                "gate": gate,
                "gate_detail": gate_reason(gate, config.deep),
            }
        )
    # Entries no gate-free ranking scores: left out on read (contaminated, over the cap, ...) or not a daily note.
    unranked = Counter(gate_reason(gate, config.deep) for _, gate in everything.skipped)
    return {
        "memory_md": _workspace_text(ws, ws.memory_md) or "",
        "recalls": rows,
        "total": len(everything.candidates) + len(everything.skipped),
        "shown": len(rows),
        "unranked": dict(unranked),
        "passing": len(ranked.candidates),
        "gates": {
            "min_score": config.deep.min_score,
            "min_recall_count": config.deep.min_recall_count,
            "min_unique_queries": config.deep.min_unique_queries,
            "max_age_days": config.deep.max_age_days,
            "limit": config.deep.limit,
        },
        "problems": _outside(ws, ws.memory_md),
    }


def _evidence(locator: str, read_line: Any) -> dict[str, Any]:
    if locator.startswith(("http://", "https://")):
        return {"url": locator}
    path, _, line_text = locator.rpartition(":")
    if not path or not line_text.isdigit():
        return {"text": locator}
    line = int(line_text)
    lines = []
    for number in range(max(1, line - _CONTEXT_LINES), line + _CONTEXT_LINES + 1):
        text = read_line(path, number) if read_line is not None else None
        if text is not None:
            lines.append({"number": number, "text": text.rstrip("\n"), "hit": number == line})
    return {"locator": locator, "lines": lines}


def research_page(ws: Workspace, config: DreamingConfig, read_line: Any = None) -> dict[str, Any]:
    """Return the Research page: gaps by status, and every research attempt with its evidence and decision.

    ``read_line(path, line)`` returns the current text of a ``path:line`` locator, or None (the codebase tool's
    confined, redacting reader); without it, evidence shows its locators only.
    """
    report = InputReport()
    gaps = list_gaps(ws)
    by_status: dict[str, list[Any]] = defaultdict(list)
    for gap in gaps:
        by_status[gap.status].append(gap)
    attempts = [row for _, row in iter_jsonl(ws.research_log, report, label="memory/.dreams/research.jsonl")]
    attempts.reverse()
    rows = []
    for row in attempts[:_MAX_FINDING_ROWS]:
        locators = [str(x) for x in row.get("locators") or [] if isinstance(x, str)]
        rows.append(
            {
                **row,
                "evidence": [_evidence(loc, read_line) for loc in locators[:8]],
                "more_evidence": max(0, len(locators) - 8),
            }
        )
    insights = [_insight_row(i) for i in active_insights(ws) if i.kind == "research"]
    return {
        "gaps": {
            status: by_status.get(status, []) for status in ("open", "backlog", "kept", "discarded", "unresolved")
        },
        "kept": [r for r in rows if r.get("decision") == "keep"],
        "other": [r for r in rows if r.get("decision") != "keep"],
        "insights": insights,
        "threshold": config.autoresearch.confidence_threshold,
        "problems": _problems(report),
    }


def _ledger_entries(ws: Workspace) -> tuple[list[dict[str, Any]], str | None]:
    try:
        data = json.loads(ws.budget_ledger.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return [], None
    except (OSError, ValueError) as exc:
        return (
            [],
            f"memory/.dreams/dreaming-budget.json is unreadable ({type(exc).__name__}); the next night sets it aside",
        )
    entries = data.get("entries") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return [], "memory/.dreams/dreaming-budget.json holds no entry list (an older version, or damaged)"
    return [e for e in entries if isinstance(e, dict)], None


def budget_page(ws: Workspace, config: DreamingConfig, now: datetime) -> dict[str, Any]:
    """Return the Budget page: spend over time against the cap, by node and model, refusals and the breaker."""
    entries, problem = _ledger_entries(ws)
    window = timedelta(minutes=config.budget.window_minutes)
    points = []
    by_node: defaultdict[str, float] = defaultdict(float)
    by_model: defaultdict[str, float] = defaultdict(float)
    for entry in entries:
        at = _parse_time(entry.get("at"))
        cost = _float(entry.get("cost_usd"))
        if at is None:
            continue
        points.append(SpendPoint(at=at, cost_usd=cost))
        by_node[str(entry.get("node") or "?")] += cost
        by_model[str(entry.get("model") or "?")] += cost
    in_window = sum(p.cost_usd for p in points if now - window < p.at <= now)
    history = nights(ws)
    refusals: Counter[str] = Counter()
    night_spend: dict[datetime, float] = {}
    for night in history:
        budget = night.get("digest", {}).get("budget") or {}
        refusals.update({str(k): int(v) for k, v in (budget.get("refusals") or {}).items() if isinstance(v, int)})
        night_spend[night["at"]] = _float(budget.get("spent_usd"))
    last_budget = (history[-1].get("digest", {}).get("budget") or {}) if history else {}
    cap = config.budget.max_cost_usd
    return {
        "chart": spend_chart(points, cap_usd=cap, window=window, now=now, nights=night_spend),
        "cap_usd": cap,
        "window_minutes": config.budget.window_minutes,
        "window_spend_usd": in_window,
        "breaker_open": in_window >= cap,
        "last_breaker_tripped": bool(last_budget.get("breaker_tripped")),
        "entries": sorted(entries, key=lambda e: str(e.get("at")), reverse=True)[:100],
        "by_node": sorted(by_node.items(), key=lambda kv: (-kv[1], kv[0])),
        "by_model": sorted(by_model.items(), key=lambda kv: (-kv[1], kv[0])),
        "refusals": refusals.most_common(),
        "nights": [
            {"at": n["at"], "run_id": n["run_id"], **(n.get("digest", {}).get("budget") or {})}
            for n in reversed(history)
        ],
        "problems": [problem] if problem else [],
    }


_BACKTEST_METRICS = (
    ("hit_rate", "Hit rate", "rate"),
    ("missed_rally_rate", "Missed rally", "rate"),
    ("avoided_drawdown_rate", "Avoided drawdown", "rate"),
    ("opportunity_cost_pct", "Opportunity cost", "pct"),
)
"""The report's metrics in the order shown: key, label, unit (a rate in [0, 1], or a number already in percent)."""
_MAX_BACKTEST_ROWS = 300
"""The Backtest page lists at most this many (asset, regime, window) rows."""


def _read_backtest(ws: Workspace) -> tuple[dict[str, Any] | None, str | None]:
    name = "memory/.dreams/backtest.json"
    try:
        data = json.loads((ws.state_dir / "backtest.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None, None
    except (OSError, ValueError) as exc:
        return None, f"{name} is unreadable ({type(exc).__name__})"
    if not isinstance(data, dict):
        return None, f"{name} holds no report"
    if data.get("version") != 1:
        return None, f"{name} is of version {str(data.get('version'))[:20]!r}; this viewer reads version 1"
    return data, None


def _metric_text(value: object, unit: str, *, signed: bool = False) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return "-"
    number = float(value)
    if unit == "rate":
        return f"{number * 100:+.1f} pp" if signed else f"{number:.1%}"
    return f"{number:+.2f} pp" if signed else f"{number:.2f}%"


def _interval_text(value: object, unit: str) -> str:
    if not isinstance(value, list) or len(value) != 2:
        return "-"
    low, high = (_metric_text(v, unit, signed=True) for v in value)
    return "-" if "-" in (low, high) else f"[{low}, {high}]"


def _backtest_key(row: Mapping[str, Any]) -> tuple[str, str, str]:
    return str(row.get("asset", "?")), str(row.get("regime", "?")), str(row.get("window", "?"))


def _backtest_order(key: tuple[str, str, str]) -> tuple[bool, str, int, str, int, str]:
    asset, regime, window = key  # "*" (everything) first, then assets by name, regimes as REGIMES lists them
    rank = -1 if regime == "*" else REGIMES.index(regime) if regime in REGIMES else len(REGIMES)
    days = int(window[:-1]) if window.endswith("d") and window[:-1].isdigit() else 1 << 30
    return asset != "*", asset, rank, regime, days, window


def backtest_page(ws: Workspace) -> dict[str, Any]:
    """Return the Backtest page: the last report of ``dreaming backtest`` as tables, and its plot; None without one.

    Rows are (asset, regime, window), "*" standing for all; each metric shows the baseline committee's value and the
    dreaming committee's, with the difference and its paired bootstrap 95% interval where the report has them.
    """
    report, problem = _read_backtest(ws)
    if report is None:
        return {"report": None, "problems": [problem] if problem else []}
    units = {key: unit for key, _, unit in _BACKTEST_METRICS}
    buckets: dict[tuple[str, str, str], dict[str, Any]] = {}

    def bucket(key: tuple[str, str, str]) -> dict[str, Any]:
        return buckets.setdefault(
            key, {"asset": key[0], "regime": key[1], "window": key[2], "n": None, "changed": None, "metrics": {}}
        )

    metrics, differences = report.get("metrics"), report.get("differences")
    for row in metrics if isinstance(metrics, list) else []:
        if not isinstance(row, dict) or row.get("policy") not in ("baseline", "dreaming"):
            continue
        entry = bucket(_backtest_key(row))
        if row.get("policy") == "baseline" and isinstance(row.get("n"), int):
            entry["n"] = row["n"]
        if row.get("policy") == "dreaming" and isinstance(row.get("changed"), int):
            entry["changed"] = row["changed"]
        for key, unit in units.items():
            entry["metrics"].setdefault(key, {})[row["policy"]] = _metric_text(row.get(key), unit)
    for row in differences if isinstance(differences, list) else []:
        if not isinstance(row, dict) or row.get("metric") not in units:
            continue
        unit = units[row["metric"]]
        cell = bucket(_backtest_key(row))["metrics"].setdefault(row["metric"], {})
        cell.setdefault("baseline", _metric_text(row.get("baseline"), unit))
        cell.setdefault("dreaming", _metric_text(row.get("dreaming"), unit))
        significant = row.get("significant")
        cell.update(
            difference=_metric_text(row.get("difference"), unit, signed=True),
            ci95=_interval_text(row.get("ci95"), unit),
            significant=significant if isinstance(significant, bool) else None,
        )
    ordered = [buckets[key] for key in sorted(buckets, key=_backtest_order)]
    overall = [row for row in ordered if row["asset"] == "*" and row["regime"] == "*"]
    others = [row for row in ordered if not (row["asset"] == "*" and row["regime"] == "*")]
    keys = ("from", "to", "step_days", "policy", "committee", "nights", "decisions", "changed", "bad_input_count")
    summary = {key: report.get(key) for key in keys}
    return {
        "report": summary,
        "chart": plot_svg(report),
        "metric_names": [(key, label) for key, label, _ in _BACKTEST_METRICS],
        "overall": overall,
        "buckets": others[:_MAX_BACKTEST_ROWS],
        "more_buckets": max(0, len(others) - _MAX_BACKTEST_ROWS),
        "problems": [],
    }
