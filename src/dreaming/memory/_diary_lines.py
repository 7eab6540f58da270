"""Turn the night's phase summaries (plain JSON-able mappings) into the diary's factual sections."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dreaming.memory._diary import DiarySection

__all__ = ["diary_sections"]

MAX_BAD_LINES = 10


def _n(value: Any) -> str:
    return f"{int(value):,}" if isinstance(value, (int, float)) else str(value)


def _verdict_lines(s: Mapping[str, Any]) -> list[str]:
    review = s.get("verdicts.review") or {}
    light = s.get("verdicts.light") or {}
    rem = s.get("verdicts.rem") or {}
    deep = s.get("verdicts.deep") or {}
    if not (review or light or rem or deep):
        return []
    lines: list[str] = []
    if review:
        if review.get("supplied"):
            lines.append(f"Review: used the supplied verdict_review.jsonl ({_n(review.get('reviewed', 0))} lines).")
        else:
            lines.append(
                f"Reviewed {_n(review.get('reviewed', 0))} verdicts against prices"
                f" ({_n(review.get('unreviewable', 0))} unreviewable)."
            )
    if light:
        lines.append(
            f"Ingested {_n(light.get('ingested', 0))} matured samples ({_n(light.get('immature', 0))} not yet matured)."
        )
    if rem:
        lines.append(
            f"Exempted {_n(rem.get('exempted', 0))} macro-shock samples; left out {_n(rem.get('unknown_regime', 0))}"
            f" with unknown regime; scored {_n(len(rem.get('candidates', [])))} buckets"
            f" ({_n(rem.get('passing', 0))} pass the gate)."
        )
    for key, label in (("promoted", "Promoted"), ("updated", "Updated")):
        ids = deep.get(key) or []
        if ids:
            lines.append(f"{label} {len(ids)}: " + ", ".join(_ident(i) for i in ids))
    for item in deep.get("vetoed") or []:
        lines.append(f"Vetoed by the model: {_ident(item)}")
    for item in deep.get("retired") or []:
        lines.append(f"Retired {_ident(item)}")
    if deep and not any(deep.get(k) for k in ("promoted", "updated", "retired", "vetoed")):
        lines.append("No insight promoted, updated or retired.")
    return lines


def _ident(item: Any) -> str:
    if isinstance(item, Mapping):
        ident = item.get("id", "?")
        reason = item.get("reason")
        return f"`{ident}` ({reason})" if reason else f"`{ident}`"
    return f"`{item}`"


def _budget_lines(report: Mapping[str, Any], halts: Sequence[Mapping[str, str]]) -> list[str]:
    lines: list[str] = []
    if "llm" in report and len(report) == 1:
        lines.append(f"LLM: {report['llm']}; no model was called.")
    else:
        for key in ("spend_window_usd", "spend_run_usd", "calls", "cache_hits", "breaker"):
            if key in report:
                lines.append(f"{key.replace('_', ' ')}: {report[key]}")
        for key in ("refusals", "tokens_by_node", "tokens_by_model"):
            if report.get(key):
                lines.append(f"{key.replace('_', ' ')}: {report[key]}")
    for halt in halts:
        lines.append(f"Stopped `{halt.get('node')}`: {halt.get('reason')}")
    return lines


def diary_sections(state: Mapping[str, Any], budget_report: Mapping[str, Any]) -> list[DiarySection]:
    """Return the diary's sections for a night, from its state and the budget's report."""
    summaries: Mapping[str, Any] = state.get("summaries") or {}
    sections: list[DiarySection] = []
    verdicts = _verdict_lines(summaries)
    if verdicts:
        sections.append(DiarySection(title="Verdicts", lines=verdicts))
    recall = summaries.get("recall") or {}
    if recall.get("lines"):
        sections.append(DiarySection(title="Recall", lines=list(recall["lines"])))
    research = summaries.get("research") or {}
    if research.get("lines") or research.get("markdown"):
        sections.append(
            DiarySection(title="Research", lines=list(research.get("lines", [])), raw=research.get("markdown", ""))
        )
    sections.append(DiarySection(title="Budget", lines=_budget_lines(budget_report, state.get("halts") or [])))
    bad = list(state.get("bad_input") or [])
    count = int(state.get("bad_input_count") or 0)
    if count:
        shown = bad[:MAX_BAD_LINES]
        more = [f"... {count - len(shown)} more in events.jsonl"] if count > len(shown) else []
        sections.append(DiarySection(title=f"Input skipped ({count} lines)", lines=shown + more))
    return sections
