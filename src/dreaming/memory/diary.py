"""The dream diary ``DREAMS.md``: one entry per run, appended atomically, never a promotion source.

Holds the entry model and its rendering (:func:`render_diary_entry`, :func:`append_diary_entry`) and the turning of
the night's phase summaries (plain JSON-able mappings) into the entry's factual sections (:func:`diary_sections`).

Heading levels: the diary is ``# Dream Diary``, an entry ``##``, a section ``###``, and a section's pre-rendered body
(the REM Research one) ``####``.

It also holds :func:`readable_markdown`, the one way the memory's markdown (an entry, MEMORY.md, an insight) is
shown to a person: without the HTML comments that mark it for machines (``<!-- dreaming:run:... -->``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from dreaming.memory._decode import decode_keeping_bytes, encode_keeping_bytes
from dreaming.memory.files import atomic_write_bytes
from dreaming.memory.workspace import Workspace

__all__ = [
    "DIARY_HEADING",
    "DiaryEntry",
    "DiarySection",
    "append_diary_entry",
    "diary_sections",
    "night_digest",
    "night_entry",
    "readable_markdown",
    "render_diary_entry",
]

DIARY_HEADING = "# Dream Diary\n"
DIARY_MAX_BYTES = 512 * 1024
"""Past this size the diary is moved to ``memory/dreaming/diary/`` and a new one begins (stores stay bounded)."""
MAX_LISTED = 12
"""Longer lists in a section are cut to this many lines plus a count of the rest."""
MAX_BAD_LINES = 10


@dataclass(frozen=True, kw_only=True, slots=True)
class DiarySection:
    """One titled block of an entry."""

    title: str
    """Heading text, e.g. ``Verdicts``."""
    lines: Sequence[str] = ()
    """Bullet lines, without the leading ``- ``."""
    raw: str = ""
    """Pre-rendered markdown placed after the bullets (e.g. the REM Research body); its headings are ``####``."""


@dataclass(frozen=True, kw_only=True, slots=True)
class DiaryEntry:
    """Everything one run writes into the diary."""

    run_id: str
    """The run; its marker makes appending idempotent."""
    now: datetime
    """The night's 'now'."""
    trigger: str = "run"
    """``run`` (scheduled), ``now`` (on demand) or ``eval``."""
    narrative: str | None = None
    """An optional model-written paragraph."""
    sections: Sequence[DiarySection] = field(default_factory=tuple)
    """The factual blocks."""


def _marker(run_id: str) -> str:
    return f"<!-- dreaming:run:{run_id} -->"


def render_diary_entry(entry: DiaryEntry) -> str:
    """Render one entry as markdown (no trailing separator)."""
    out = [
        f"## {entry.now.date().isoformat()} ({entry.trigger}, {entry.now.strftime('%H:%M')} UTC)",
        _marker(entry.run_id),
        "",
    ]
    if entry.narrative:
        out += [entry.narrative.strip(), ""]
    for section in entry.sections:
        out.append(f"### {section.title}")
        lines = list(section.lines)
        shown = lines[:MAX_LISTED]
        out += [f"- {line}" for line in shown]
        if len(lines) > len(shown):
            out.append(f"- ... and {len(lines) - len(shown)} more")
        if section.raw:
            if lines:
                out.append("")
            out.append(section.raw.rstrip("\n"))
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
"""An HTML comment, over any number of lines; one never closed runs to the end, as a markdown renderer reads it."""


def readable_markdown(text: str) -> str:
    """Return markdown as a person should see it: every HTML comment removed, all else byte for byte.

    A line that held only comments (and spaces) goes with its line break, so a marker line leaves no hole; blank lines
    that were there stay. Comments inside code spans are removed too: memory markdown keeps none there.
    """
    spans = [match.span() for match in _COMMENT.finditer(text)]
    if not spans:
        return text
    out: list[str] = []
    position = span_index = 0
    for line in text.splitlines(keepends=True):
        end = position + len(line)
        kept: list[str] = []
        cut = False
        cursor = position
        while span_index < len(spans) and spans[span_index][0] < end:
            start, stop = spans[span_index]
            kept.append(text[cursor : max(cursor, start)])
            cut = True
            cursor = max(cursor, min(stop, end))
            if stop > end:
                break
            span_index += 1
        kept.append(text[cursor:end])
        position = end
        rest = "".join(kept)
        if cut and not rest.strip():
            # An emptied line goes, unless the line before lost its break to the comment: then its break stays.
            if out and not out[-1].endswith("\n") and rest.endswith("\n"):
                out.append("\n")
            continue
        out.append(rest)
    return "".join(out)


def _rotate(ws: Workspace, current: str, entry: DiaryEntry) -> str:
    """Move a diary past :data:`DIARY_MAX_BYTES` to ``memory/dreaming/diary/`` and return the fresh diary's text."""
    folder = ws.reports_dir / "diary"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"DREAMS-until-{entry.now.date().isoformat()}.md"
    counter = 1
    while target.exists():
        target = folder / f"DREAMS-until-{entry.now.date().isoformat()}-{counter}.md"
        counter += 1
    atomic_write_bytes(target, encode_keeping_bytes(current))
    return f"{DIARY_HEADING}\nEarlier entries: `{ws.relative(target)}`.\n"


def append_diary_entry(ws: Workspace, entry: DiaryEntry) -> bool:
    """Append ``entry`` to DREAMS.md atomically; return False when this run's entry is already there.

    The diary stays bounded: once it passes :data:`DIARY_MAX_BYTES`, it is kept whole under
    ``memory/dreaming/diary/`` (never indexed as memory) and a fresh DREAMS.md starts with a link to it.
    Bytes a user left in it that are not UTF-8 are kept byte for byte.
    """
    try:
        current = decode_keeping_bytes(ws.dreams_md.read_bytes())
    except FileNotFoundError:
        current = DIARY_HEADING
    if _marker(entry.run_id) in current:
        return False
    if len(encode_keeping_bytes(current)) > DIARY_MAX_BYTES:
        current = _rotate(ws, current, entry)
    if not current.endswith("\n"):
        current += "\n"
    text = current + "\n" + render_diary_entry(entry)
    atomic_write_bytes(ws.dreams_md, encode_keeping_bytes(text))
    return True


def _n(value: Any) -> str:
    return f"{int(value):,}" if isinstance(value, (int, float)) else str(value)


def _verdict_lines(s: Mapping[str, Any]) -> list[str]:
    review = s.get("verdicts.review") or {}
    light = s.get("verdicts.light") or {}
    rem = s.get("verdicts.rem") or {}
    deep = s.get("verdicts.deep") or {}
    if review.get("source") == "none" and not light.get("ingested"):
        return []
    lines: list[str] = []
    if review.get("source") == "supplied":
        lines.append("Review: used the supplied verdict_review.jsonl.")
    elif review:
        lines.append(
            f"Reviewed {_n(review.get('reviewed', 0))} verdicts against prices"
            f" ({_n(review.get('unreviewable', 0))} unreviewable, {_n(review.get('future', 0))} dated after now)."
        )
        if review.get("missing_prices"):
            lines.append("No price file for: " + ", ".join(review["missing_prices"]))
    if light:
        lines.append(
            f"Ingested {_n(light.get('ingested', 0))} matured samples ({_n(light.get('immature', 0))} not yet matured)."
        )
    candidates = rem.get("candidates") or []
    if rem:
        passing = [c for c in candidates if c.get("passes_gate")]
        lines.append(
            f"Exempted {_n(rem.get('exempted', 0))} macro-shock samples (black-swan exemption); left out"
            f" {_n(rem.get('unknown_regime', 0))} with unknown regime; scored {_n(len(candidates))} buckets,"
            f" {_n(len(passing))} pass the gate."
        )
    for key, label in (
        ("promoted", "Promoted"),
        ("restored", "Promoted again from the archive"),
        ("updated", "Updated"),
    ):
        ids = deep.get(key) or []
        if ids:
            lines.append(f"{label} ({len(ids)}): " + ", ".join(f"`{i}`" for i in ids))
    for ident in deep.get("vetoed") or []:
        lines.append(f"Vetoed by the model: `{ident}`")
    for item in deep.get("retired") or []:
        ident, reason = (item[0], item[1]) if isinstance(item, (list, tuple)) else (item, "")
        lines.append(f"Retired `{ident}`: {reason}")
    stale = set(deep.get("stale") or [])
    failed = [c for c in candidates if not c.get("passes_gate")]
    if failed:
        best = max(failed, key=lambda c: (c.get("score", 0), c.get("id", "")))
        lines.append(
            f"Not promoted: {len(failed)} buckets below the gate (best `{best.get('id')}`"
            f" score {best.get('score')}, n={best.get('n')})."
        )
    if stale:
        lines.append(f"Not promoted: {len(stale)} passing buckets are stale (not seen in the aging window).")
    if deep.get("problem"):
        lines.append(f"Problem: {deep['problem']}")
    return lines


def _recall_lines(s: Mapping[str, Any]) -> list[str]:
    light = s.get("recall.light") or {}
    rem = s.get("recall.rem") or {}
    deep = s.get("recall.deep") or {}
    problem = light.get("problem") or rem.get("problem") or deep.get("problem")
    if problem:  # OpenClaw's recall store could not be used: the recall phases were skipped
        return [f"Recall skipped: {problem}"]
    if not (light.get("staged") or light.get("chunks_recorded") or deep.get("applied") or deep.get("skipped_by_gate")):
        return []
    lines = [
        f"Light: ingested {_n(light.get('chunks_recorded', 0))} chunks from {_n(light.get('files_ingested', 0))}"
        f" daily notes; staged {_n(light.get('staged', 0))} recalls (report `{light.get('report', '')}`).",
    ]
    if rem:
        themes = ", ".join(f"`{t}`" for t in rem.get("themes", [])[:6]) or "none"
        lines.append(f"REM: {_n(rem.get('truths', 0))} possible lasting truths; themes: {themes}.")
    if deep.get("disabled_reason"):
        lines.append(f"Deep: {deep['disabled_reason']}.")
    lines.append(
        f"Signals behind the candidates: {_n(deep.get('real_recalls', 0))} real recalls,"
        f" {_n(deep.get('ingestion_signals', 0))} ingestion signals (never counted as recalls)."
    )
    for item in deep.get("applied") or []:
        score = float(item.get("score") or 0.0)
        lines.append(f'Promoted to MEMORY.md: "{item.get("text")}" ({item.get("source")}, score {score:.3f})')
    for key, reason in deep.get("refused") or []:
        lines.append(f"Refused `{key}`: {reason}")
    gates = deep.get("skipped_by_gate") or {}
    if gates:
        lines.append("Not promoted, by the gate that stopped them: " + ", ".join(f"{g} {c}" for g, c in gates.items()))
    if deep.get("compacted_dates"):
        lines.append(
            "MEMORY.md over its size budget: compacted generated sections of " + ", ".join(deep["compacted_dates"])
        )
    if deep.get("repaired"):
        lines.append(f"Repaired the recall store: dropped {deep['repaired']} invalid or overflow entries.")
    return lines


def _budget_lines(report: Mapping[str, Any], halts: Sequence[Mapping[str, str]]) -> list[str]:
    lines = [str(line).removeprefix("- ") for line in report.get("lines") or []]
    if not lines:
        lines.append(f"LLM: {report.get('llm', 'not used')}; no model was called.")
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
    recall = _recall_lines(summaries)
    if recall:
        sections.append(DiarySection(title="Recall", lines=recall))
    research = summaries.get("research") or {}
    if research.get("lines") or research.get("markdown"):
        sections.append(
            DiarySection(title="REM Research", lines=list(research.get("lines", [])), raw=research.get("markdown", ""))
        )
    sections.append(DiarySection(title="Budget", lines=_budget_lines(budget_report, state.get("halts") or [])))
    bad = list(state.get("bad_input") or [])
    count = int(state.get("bad_input_count") or 0)
    if count:
        shown = bad[:MAX_BAD_LINES]
        more = [f"... {count - len(shown)} more in events.jsonl"] if count > len(shown) else []
        sections.append(DiarySection(title=f"Input skipped ({count} lines)", lines=shown + more))
    return sections


def night_entry(
    state: Mapping[str, Any], *, trigger: str, budget_report: Mapping[str, Any] | None = None
) -> DiaryEntry:
    """Return a night's diary entry from its graph state: what DREAMS.md holds and the entry points print.

    ``budget_report`` defaults to the one the diary node kept in the state (``summaries["budget"]``).
    """
    if budget_report is None:
        budget_report = (state.get("summaries") or {}).get("budget") or {}
    return DiaryEntry(
        run_id=str(state["run_id"]),
        now=datetime.fromisoformat(str(state["now"])),
        trigger=trigger,
        narrative=state.get("narrative"),
        sections=diary_sections(state, budget_report),
    )


def night_digest(state: Mapping[str, Any], budget_report: Mapping[str, Any]) -> dict[str, Any]:
    """Return a night's numbers as one small JSON-able record: the run-finished event carries it.

    The diary entry says the same in sentences; this is what a timeline (``dreaming view``) or a script reads,
    without parsing prose. Missing phases give zeros.
    """
    summaries: Mapping[str, Any] = state.get("summaries") or {}

    def part(name: str) -> Mapping[str, Any]:
        value = summaries.get(name)
        return value if isinstance(value, Mapping) else {}

    review, light, rem, deep = (
        part("verdicts.review"),
        part("verdicts.light"),
        part("verdicts.rem"),
        part("verdicts.deep"),
    )
    recall_light, recall_deep, research = part("recall.light"), part("recall.deep"), part("research")
    candidates = [c for c in rem.get("candidates") or [] if isinstance(c, Mapping)]
    decisions = [str(f.get("decision")) for f in research.get("findings") or [] if isinstance(f, Mapping)]
    return {
        "verdicts": {
            "reviewed": int(review.get("reviewed") or 0),
            "ingested": int(light.get("ingested") or 0),
            "scored": len(candidates),
            "passing": sum(1 for c in candidates if c.get("passes_gate")),
            "promoted": len(deep.get("promoted") or []) + len(deep.get("restored") or []),
            "updated": len(deep.get("updated") or []),
            "retired": len(deep.get("retired") or []),
            "stale": len(deep.get("stale") or []),
        },
        "recall": {
            "staged": int(recall_light.get("staged") or 0),
            "promoted": len(recall_deep.get("applied") or []),
            "real_recalls": int(recall_deep.get("real_recalls") or 0),
            "held_back": sum(int(v) for v in (recall_deep.get("skipped_by_gate") or {}).values()),
        },
        "research": {
            "researched": len(decisions),
            "kept": decisions.count("keep"),
            "discarded": decisions.count("discard"),
            "other": len(decisions) - decisions.count("keep") - decisions.count("discard"),
            "backlog": len(research.get("backlog") or []),
        },
        "budget": {
            "available": bool(budget_report.get("available")),
            "unavailable_reason": budget_report.get("unavailable_reason"),
            "spent_usd": float(budget_report.get("run_spend_usd") or 0.0),
            "calls": int(budget_report.get("calls_made") or 0),
            "cache_hits": int(budget_report.get("cache_hits") or 0),
            "refusals": dict(budget_report.get("refusals") or {}),
            "breaker_tripped": bool(budget_report.get("breaker_tripped")),
        },
        "halts": [dict(h) for h in state.get("halts") or [] if isinstance(h, Mapping)],
    }
