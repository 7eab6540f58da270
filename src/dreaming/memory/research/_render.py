"""The body of a diary entry's "REM Research" section, in the seed's format, nested under the entry's headings.

The diary entry is a ``##`` heading and its sections ``###`` ones (``memory/diary.py``), so this body's own headings
are ``####``: the seed's "## REM Research — <date>" heading is the section's title, and the entry's heading already
says the date and time.
"""

from __future__ import annotations

from collections.abc import Iterable

from dreaming.memory.research._evidence import redact_secrets
from dreaming.memory.research._insights import Conflict
from dreaming.memory.research._records import ResearchFinding

__all__ = ["render_rem_research_section"]

_METHOD_WORDS = {
    "code-crossref": "code cross-reference confirmed",
    "multi-source": "independent sources agree",
    "web-confirm": "one web source confirms",
    "single-source": "single source only",
}
MAX_SOURCES_SHOWN = 3
"""A gap lists at most this many sources in DREAMS.md, then "and N more" (research.jsonl has them all)."""
_SKIPPED = {"skipped_budget": "budget", "skipped_duplicate": "duplicate", "skipped_time": "time limit"}


def _one_line(text: str) -> str:
    return " ".join(redact_secrets(text).split())


def _sources(finding: ResearchFinding) -> str:
    unique = list(dict.fromkeys(f"{item.source_type} ({item.locator})" for item in finding.evidence))
    shown = ", ".join(unique[:MAX_SOURCES_SHOWN]) or "none"
    hidden = len(unique) - MAX_SOURCES_SHOWN
    return f"{shown}, and {hidden} more" if hidden > 0 else shown


def _entry(number: int, finding: ResearchFinding) -> list[str]:
    gap = _one_line(finding.gap)
    reason = _one_line(finding.reason)
    if finding.decision == "keep":
        learned = _one_line(finding.claim.text) if finding.claim else ""
        return [
            f'{number}. ✅ "{gap}" (confidence: {finding.confidence:.2f})',
            f"   - Sources: {_sources(finding)}",
            f"   - Learned: {learned}",
            f"   - Validation: {_METHOD_WORDS.get(finding.method or '', finding.method or 'none')} ({finding.method})",
        ]
    if finding.decision == "discard":
        lines = [f'{number}. ❌ "{gap}" (confidence: {finding.confidence:.2f}) — DISCARDED']
        if finding.why:
            lines += [f"   - Why: {_one_line(finding.why)}", f"   - Details: {reason}"]
        else:
            lines.append(f"   - Reason: {reason}")
        if finding.evidence:
            lines.append(f"   - Sources: {_sources(finding)}")
        lines.append("   - Action: needs user clarification")
        return lines
    if finding.decision == "abstain":
        return [f'{number}. ⚪ "{gap}" — ABSTAINED', f"   - Reason: {reason}"]
    if finding.decision == "failed":
        return [f'{number}. ⚠️ "{gap}" — FAILED', f"   - Reason: {reason}"]
    label = _SKIPPED.get(finding.decision, finding.decision)
    return [f'{number}. ⏭️ "{gap}" — SKIPPED ({label})', f"   - Reason: {reason}"]


def render_rem_research_section(
    findings: Iterable[ResearchFinding],
    *,
    conflicts: Iterable[Conflict] = (),
    backlog: Iterable[str] = (),
) -> str:
    """Render the REM Research section's body: every gap with its outcome, then conflicts and the backlog.

    Its headings are ``####`` ones, under the diary section that holds it (see the module docstring).

    Args:
        findings: one per gap attempted tonight, in the order to show.
        conflicts: kept findings that contradict an insight and could not supersede it.
        backlog: gap queries that stopped being researched and need the user.
    """
    items = list(findings)
    conflict_list = list(conflicts)
    backlog_list = list(backlog)
    count = len(items)
    lines = [f"#### Investigated {count} knowledge gap{'s' if count != 1 else ''}", ""]
    for number, finding in enumerate(items, start=1):
        lines.extend(_entry(number, finding))
        lines.append("")
    if conflict_list:
        lines.extend(["#### Conflicts for you to settle", ""])
        for conflict in conflict_list:
            new, old = conflict.finding, conflict.existing
            claim = new.claim.text if new.claim else ""
            lines.append(
                f'- "{_one_line(new.gap)}": new finding "{_one_line(claim)}" '
                f"({new.confidence:.2f}; {', '.join(new.locators) or 'no sources'}) contradicts "
                f'{old.id} "{_one_line(old.claim)}" ({old.confidence:.2f}); '
                f"not superseded: {_one_line(conflict.reason)}"
            )
        lines.append("")
    if backlog_list:
        lines.extend(["#### Research backlog: needs you", ""])
        lines.extend(f'- "{_one_line(query)}"' for query in backlog_list)
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"
