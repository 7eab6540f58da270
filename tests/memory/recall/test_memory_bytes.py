"""MEMORY.md bytes, rehydration and the two promotion flows, pinned to OpenClaw 2026.9.6 (reference §5.1, §7).

The expected strings of the pure functions were produced by OpenClaw 2026.9.6's own ``buildPromotionSection``,
``formatPromotedSnippetForMemory``, ``buildBudgetedMemoryAppend`` and ``relocateCandidateRange`` run under Node.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from dreaming.config import DeepConfig, DreamingConfig, RecallConfig
from dreaming.memory import Workspace
from dreaming.memory.recall import deep_sleep_recall, promote_short_term_recalls
from dreaming.memory.recall._apply import (
    PromotionLine,
    budgeted_memory_append,
    build_promotion_section,
    format_promoted_snippet,
    relocate_candidate_range,
)
from dreaming.memory.recall._js import js_round

from .helpers import at, entries, note, rec

NOW = at("2026-04-11T09:00:00")
ZERO = DeepConfig(min_score=0, min_recall_count=0, min_unique_queries=0)
PATH = "memory/2026-04-10.md"


def _line(**fields: Any) -> PromotionLine:
    base: dict[str, Any] = {
        "key": "memory:memory/2026-04-10.md:3:3", "path": PATH, "start_line": 3, "end_line": 3,
        "snippet": "- Gateway listens on port 18789.", "score": 0.0625, "signal_count": 4, "recall_count": 3,
        "avg_score": 0.0625, "concept_tags": ("gateway", "port <!-- x -->", "a,b;c", "extra"),
    }  # fmt: skip
    base.update(fields)
    return PromotionLine(**base)


def test_bullet_bytes_js_rounding_and_trigger_sanitizing() -> None:
    assert build_promotion_section([_line()], "2026-04-11", 160) == (
        "\n## Promoted From Short-Term Memory (2026-04-11)\n\n"
        "<!-- openclaw-memory-promotion:memory:memory/2026-04-10.md:3:3 -->\n"
        "- Gateway listens on port 18789. [score=0.063 signals=4 recalls=3 avg=0.063 "
        "source=memory/2026-04-10.md:3-3] <!-- trigger: gateway, port x, a b c --> <!-- importance: 3 -->\n"
    )


def test_project_groups_and_importance_ties_round_up() -> None:
    lines = [
        _line(key="k1", path="2026-04-07.md", start_line=1, end_line=2, snippet="Global fact.", score=0.65,
              signal_count=3, recall_count=3, avg_score=0.5, concept_tags=()),
        _line(key="k2", path="memory/2026-04-08.md", start_line=5, end_line=5, snippet="Acme fact.", score=1.0,
              signal_count=5, recall_count=2, avg_score=0.9995, concept_tags=("acme",), project_key="acme/Repo"),
    ]  # fmt: skip
    assert js_round(0.65 * 10) == 7 and round(0.65 * 10) == 6  # Math.round, not Python's half-to-even
    assert build_promotion_section(lines, "2026-04-11", 160) == (
        "\n## Promoted From Short-Term Memory (2026-04-11)\n\n### Global\n\n"
        "<!-- openclaw-memory-promotion:k1 -->\n"
        "- Global fact. [score=0.650 signals=3 recalls=3 avg=0.500 source=2026-04-07.md:1-2] "
        "<!-- trigger:  --> <!-- importance: 7 -->\n\n### Project: acme/Repo\n\n"
        "<!-- openclaw-memory-promotion:k2 -->\n"
        "- Acme fact. [score=1.000 signals=5 recalls=2 avg=1.000 source=memory/2026-04-08.md:5-5] "
        "<!-- trigger: acme --> <!-- importance: 10 --> <!-- project: acme/Repo -->\n\n"
    )


@pytest.mark.parametrize(
    ("snippet", "expected"),
    [
        # the sentence boundary (index 9) is under 55% of 40, the last space (37) past 65%: cut there
        ("Aaaa aaaa. Bbbb bbbb bbbb 😀😀😀😀 cccc dddd eeee ffff", "Aaaa aaaa. Bbbb bbbb bbbb 😀😀😀😀 cccc..."),
        # emoji count two UTF-16 units each
        ("Aaaa aaaa aaaa aaaa aaaa aaaa aaaa 😀😀 cccc dddd eeee ffff", "Aaaa aaaa aaaa aaaa aaaa aaaa aaaa 😀😀..."),
        # no boundary: cut at the limit, which would split the emoji's pair: it stops before it
        ("A" * 39 + "😀bbbbbbbb", "A" * 39 + "..."),
        ("Short. Kept whole.", "Short. Kept whole."),
    ],
)
def test_display_cut_counts_utf16_units(snippet: str, expected: str) -> None:
    assert format_promoted_snippet(snippet, 10) == expected


@pytest.mark.parametrize(
    ("existing", "content"),
    [
        ("", "# Long-Term Memory\n\n\nS\n"),
        ("  \n", "# Long-Term Memory\n\n  \n\nS\n"),  # whitespace-only: the preamble, the whitespace kept
        ("# Mine\nText", "# Mine\nText\n\nS\n"),  # no final newline: one is added
        ("# Mine\nText\n", "# Mine\nText\n\nS\n"),  # one blank line before the section
    ],
)
def test_append_preamble_and_separator(existing: str, content: str) -> None:
    assert budgeted_memory_append(existing, "\nS\n", 10_000, 0.25) == (content, [])


def test_blank_first_line_rehydrates_to_the_exact_window_at_distance_zero() -> None:
    assert relocate_candidate_range(["# Notes", "", "Text here", ""], "Text here", 2, 2) == (2, 3, "Text here")


def test_blank_first_line_through_the_sweep_keeps_the_key(workspace: Workspace) -> None:
    note(workspace, PATH, ["# Notes", "Text here"])
    rec(workspace, "q", PATH, 2, 2, 0.9, "Text here", NOW)
    note(workspace, PATH, ["# Notes", "", "Text here"])  # a blank line was inserted above the text
    (applied,) = deep_sleep_recall(workspace, DreamingConfig(deep=ZERO), now=NOW).applied
    assert (applied.key, applied.start_line, applied.end_line) == (f"memory:{PATH}:2:2", 2, 3)
    assert f"source={PATH}:2-3]" in workspace.memory_md.read_text(encoding="utf-8")
    (entry,) = entries(workspace)
    assert (entry["key"], entry["startLine"], entry["endLine"], entry["snippet"]) == (
        f"memory:{PATH}:2:2",
        2,
        3,
        "Text here",
    )
    assert entry["promotedAt"] == "2026-04-11T09:00:00.000Z"


def test_new_memory_file_bytes(workspace: Workspace) -> None:
    note(workspace, PATH, ["- Gateway listens on port 18789."])
    rec(workspace, "q", PATH, 1, 1, 0.9, "- Gateway listens on port 18789.", NOW)
    summary = deep_sleep_recall(workspace, DreamingConfig(deep=ZERO), now=NOW)
    (c,) = summary.ranking.candidates
    tags = ", ".join(c.concept_tags[:3])
    importance = min(10, max(3, js_round(c.score * 10)))
    from dreaming.memory.recall._js import to_fixed

    assert workspace.memory_md.read_text(encoding="utf-8") == (
        "# Long-Term Memory\n\n\n## Promoted From Short-Term Memory (2026-04-11)\n\n"
        f"<!-- openclaw-memory-promotion:memory:{PATH}:1:1 -->\n"
        f"- Gateway listens on port 18789. [score={to_fixed(c.score, 3)} signals=1 recalls=1 "
        f"avg={to_fixed(c.avg_score, 3)} source={PATH}:1-1] <!-- trigger: {tags} --> "
        f"<!-- importance: {importance} -->\n"
    )


def test_compaction_keeps_crlf_user_text(workspace: Workspace) -> None:
    old = "\r\n".join(
        ["# Long-Term Memory", "", "Mine.", "", "## Promoted From Short-Term Memory (2026-04-01)",
         "<!-- openclaw-memory-promotion:a -->", "- " + "x" * 300, "", "## Promoted From Short-Term Memory (2026-04-02)",
         "<!-- openclaw-memory-promotion:b -->", "- y", "", "## Promoted From Short-Term Memory (2026-04-03)",
         "<!-- openclaw-memory-promotion:c -->", "- z", "", "## Promoted From Short-Term Memory (2026-04-04)",
         "<!-- openclaw-memory-promotion:d -->", "- w", ""]
    )  # fmt: skip
    content, dropped = budgeted_memory_append(old, "\nS\n", 400, 0.25)
    assert dropped == ["2026-04-01"]
    assert content.startswith(
        "# Long-Term Memory\r\n\r\nMine.\r\n\r\n## Promoted From Short-Term Memory (2026-04-02)\r\n"
    )
    assert "x" * 300 not in content and content.endswith("- w\r\n\nS\n")


def _seed(ws: Workspace) -> None:
    """Three entries: a note that is gone, a legacy entry without provenance, an agent's recall."""
    for name, text in (("2026-04-08", "Legacy fact without provenance."), ("2026-04-09", "Agent fact to keep.")):
        note(ws, f"memory/{name}.md", [text])
    entries_: dict[str, Any] = {}
    for name, text, provenance in (
        ("2026-04-07", "Fact whose note is gone.", {"originClass": "agent", "sessionKind": "unknown", "observedAt": 1}),
        ("2026-04-08", "Legacy fact without provenance.", None),
        ("2026-04-09", "Agent fact to keep.", {"originClass": "agent", "sessionKind": "unknown", "observedAt": 1}),
    ):
        key = f"memory:memory/{name}.md:1:1"
        entries_[key] = {
            "key": key, "path": f"memory/{name}.md", "startLine": 1, "endLine": 1, "source": "memory",
            "snippet": text, "recallCount": 3, "dailyCount": 0, "groundedCount": 0, "totalScore": 2.7,
            "maxScore": 0.9, "firstRecalledAt": "2026-04-10T09:00:00.000Z", "lastRecalledAt": "2026-04-10T09:00:00.000Z",
            "queryHashes": ["a", "b", "c"], "userQueryHashes": ["a", "b", "c"], "recallDays": ["2026-04-10"],
            "conceptTags": ["fact"], **({"provenance": provenance} if provenance else {}),
        }  # fmt: skip
    ws.state_dir.mkdir(parents=True, exist_ok=True)
    doc = {"version": 1, "updatedAt": "2026-04-10T09:00:00.000Z", "entries": entries_}
    ws.recall_store.write_text(json.dumps(doc), encoding="utf-8")


def test_sweep_repairs_then_ranks_then_applies_with_the_consolidation_filter(workspace: Workspace) -> None:
    _seed(workspace)
    summary = deep_sleep_recall(workspace, DreamingConfig(deep=ZERO), now=NOW)
    assert summary.removed_dangling_entries == 1  # repaired before ranking: never a candidate
    assert "memory:memory/2026-04-07.md:1:1" not in {c.key for c in summary.ranking.candidates}
    assert [a.key for a in summary.applied] == ["memory:memory/2026-04-09.md:1:1"]
    assert summary.refused == (("memory:memory/2026-04-08.md:1:1", "consolidation origin/session filter"),)


def test_sweep_promotes_legacy_entries_with_the_project_rules(workspace: Workspace) -> None:
    _seed(workspace)
    config = DreamingConfig(deep=ZERO, recall=RecallConfig(openclaw_compat=False))
    summary = deep_sleep_recall(workspace, config, now=NOW)
    assert {a.key for a in summary.applied} == {"memory:memory/2026-04-08.md:1:1", "memory:memory/2026-04-09.md:1:1"}


def test_promote_skips_repair_and_the_consolidation_filter_and_applies_the_gates(workspace: Workspace) -> None:
    _seed(workspace)
    summary = promote_short_term_recalls(workspace, DreamingConfig(deep=ZERO), now=NOW)
    assert {a.key for a in summary.applied} == {"memory:memory/2026-04-08.md:1:1", "memory:memory/2026-04-09.md:1:1"}
    assert ("memory:memory/2026-04-07.md:1:1", "source rehydration failed") in summary.refused
    assert len(entries(workspace)) == 3  # no repair: the dangling entry stays
    assert summary.report_path is None


def test_promote_limit_and_gates_at_apply(workspace: Workspace) -> None:
    _seed(workspace)
    # the limit counts eligible candidates before rehydration: the one whose note is gone takes a place and fails
    limited = promote_short_term_recalls(workspace, DreamingConfig(deep=ZERO), now=NOW, limit=2)
    assert [a.key for a in limited.applied] == ["memory:memory/2026-04-08.md:1:1"]
    assert set(limited.refused) == {
        ("memory:memory/2026-04-09.md:1:1", "selection limit (2)"),
        ("memory:memory/2026-04-07.md:1:1", "source rehydration failed"),
    }
    strict = DeepConfig(min_score=0, min_unique_queries=0, min_recall_count=4)
    gated = promote_short_term_recalls(workspace, DreamingConfig(deep=strict), now=NOW)
    assert gated.applied == () and {r for _, r in gated.refused} == {"signal threshold (3 < 4)"}
    assert ("memory:memory/2026-04-08.md:1:1", "promoted") in gated.ranking.skipped  # promoted: not ranked again
