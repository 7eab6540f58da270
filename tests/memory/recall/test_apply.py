"""Apply: rehydration, fences, markers, idempotence, timezone, size budget (B1.2 apply cases)."""

from __future__ import annotations

import json

import pytest

from dreaming.config import DeepConfig, DreamingConfig, RecallConfig
from dreaming.memory import Workspace
from dreaming.memory.recall import deep_sleep_recall, rank_short_term_candidates

from .helpers import at, entries, note, rec

NOW = at("2026-04-01T12:00:00")
ZERO_CFG = DreamingConfig(deep=DeepConfig(min_score=0, min_recall_count=0, min_unique_queries=0))
OURS_CFG = DreamingConfig(deep=ZERO_CFG.deep, recall=RecallConfig(openclaw_compat=False))
PATH = "memory/2026-04-01.md"
GATEWAY = "Gateway binds loopback and port 18789"
GREEK = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota"]


def _memory(ws: Workspace) -> str:
    return ws.memory_md.read_text(encoding="utf-8") if ws.memory_md.exists() else ""


def test_default_gates_hold_back_a_single_recall(workspace: Workspace) -> None:
    note(workspace, PATH, [GATEWAY])
    rec(workspace, "q", PATH, 1, 1, 0.99, GATEWAY, NOW)
    assert deep_sleep_recall(workspace, DreamingConfig(), now=NOW).applied == ()
    assert not workspace.memory_md.exists()


def test_max_age_holds_back_old_entries(workspace: Workspace) -> None:
    note(workspace, PATH, [GATEWAY])
    rec(workspace, "q", PATH, 1, 1, 0.99, GATEWAY, NOW)
    config = DreamingConfig(deep=DeepConfig(min_score=0, min_recall_count=0, min_unique_queries=0, max_age_days=7))
    assert deep_sleep_recall(workspace, config, now=at("2026-04-11T12:00:00")).applied == ()
    assert not workspace.memory_md.exists()


@pytest.mark.parametrize(("config", "end"), [(ZERO_CFG, 12), (OURS_CFG, 10)])
def test_happy_path_marks_promoted(workspace: Workspace, config: DreamingConfig, end: int) -> None:
    """OpenClaw keeps a recorded range whose lines (past the end of the note) still read as the snippet; this
    project's rehydration narrows it to the line that holds the text."""
    note(workspace, PATH, [*GREEK, GATEWAY])
    rec(workspace, "q", PATH, 10, 12, 0.92, GATEWAY, NOW)
    summary = deep_sleep_recall(workspace, config, now=NOW)
    assert len(summary.applied) == 1 and (summary.applied[0].start_line, summary.applied[0].end_line) == (10, end)
    text = _memory(workspace)
    assert text.startswith("# Long-Term Memory\n")
    assert "## Promoted From Short-Term Memory (2026-04-01)" in text
    assert f"- {GATEWAY} [score=" in text and f"source=memory/2026-04-01.md:10-{end}]" in text
    assert "<!-- openclaw-memory-promotion:memory:memory/2026-04-01.md:10:12 -->" in text
    assert rank_short_term_candidates(workspace, ZERO_CFG.deep, now=NOW).candidates == ()
    (again,) = rank_short_term_candidates(workspace, ZERO_CFG.deep, now=NOW, include_promoted=True).candidates
    assert again.promoted_at == "2026-04-01T12:00:00.000Z"
    assert (workspace.reports_dir / "deep" / "2026-04-01.md").exists()


def test_bullet_is_not_doubled(workspace: Workspace) -> None:
    note(workspace, PATH, [f"- {GATEWAY}"])
    rec(workspace, "q", PATH, 1, 1, 0.9, f"- {GATEWAY}", NOW)
    deep_sleep_recall(workspace, ZERO_CFG, now=NOW)
    assert f"- {GATEWAY}" in _memory(workspace) and "- - " not in _memory(workspace)


def test_second_apply_is_idempotent(workspace: Workspace) -> None:
    note(workspace, PATH, [GATEWAY])
    rec(workspace, "q", PATH, 1, 1, 0.9, GATEWAY, NOW)
    deep_sleep_recall(workspace, ZERO_CFG, now=NOW)
    second = deep_sleep_recall(workspace, ZERO_CFG, now=NOW)
    assert second.applied == () and _memory(workspace).count("Promoted From Short-Term Memory") == 1


def test_marker_reconciliation(workspace: Workspace) -> None:
    note(workspace, PATH, [GATEWAY])
    rec(workspace, "q", PATH, 1, 1, 0.9, GATEWAY, NOW)
    first = deep_sleep_recall(workspace, ZERO_CFG, now=NOW)
    assert (len(first.applied), first.appended, first.reconciled_existing) == (1, 1, 0)
    doc = json.loads(workspace.recall_store.read_text())
    for entry in doc["entries"].values():
        del entry["promotedAt"]
    workspace.recall_store.write_text(json.dumps(doc))
    second = deep_sleep_recall(workspace, ZERO_CFG, now=NOW)
    assert (len(second.applied), second.appended, second.reconciled_existing) == (1, 0, 1)
    assert _memory(workspace).count("openclaw-memory-promotion:") == 1 and _memory(workspace).count(GATEWAY) == 1
    assert entries(workspace)[0]["promotedAt"]


def test_rehydrates_moved_snippet(workspace: Workspace) -> None:
    note(workspace, PATH, ["New first line", "Another new line", GATEWAY])
    rec(workspace, "q", PATH, 1, 1, 0.9, GATEWAY, NOW)
    (applied,) = deep_sleep_recall(workspace, ZERO_CFG, now=NOW).applied
    assert (applied.start_line, applied.end_line) == (3, 3) and ":3-3]" in _memory(workspace)


def test_duplicate_text_picks_nearest_window_with_recorded_span(workspace: Workspace) -> None:
    lines = ["one", "dup fact", "three", "four", "five", "six", "seven", "eight", "dup fact"]
    note(workspace, PATH, lines)  # 9 lines and a trailing newline: a 10th, empty line
    rec(workspace, "q", PATH, 8, 9, 0.9, "dup fact", NOW)
    (applied,) = deep_sleep_recall(workspace, ZERO_CFG, now=NOW).applied
    assert (applied.start_line, applied.end_line) == (9, 10)


COMMITTEE = ["# 2026-04-01", "", "## Committee", "- The CIO asked about cash.", "- Risk officer: limits stay at 5%."]


@pytest.mark.parametrize(
    "snippet",
    [
        "Committee: The CIO asked about cash.; Risk officer: limits stay at 5%.",  # as a search records it now
        "## Committee - The CIO asked about cash. - Risk officer: limits stay at 5%.",  # as it did before
    ],
)
def test_a_promoted_chunk_keeps_its_heading_as_context_without_a_stray_mark(workspace: Workspace, snippet: str) -> None:
    """This project's rehydration (``openclaw_compat = false``): both recorded forms show the heading as context."""
    note(workspace, PATH, COMMITTEE)
    rec(workspace, "q", PATH, 3, 5, 0.9, snippet, NOW)
    (applied,) = deep_sleep_recall(workspace, OURS_CFG, now=NOW).applied
    shown = "Committee: The CIO asked about cash.; Risk officer: limits stay at 5%."
    assert (applied.start_line, applied.end_line, applied.text) == (3, 5, shown)
    assert f"\n- {shown} [score=" in _memory(workspace) and "- ## " not in _memory(workspace)
    report = (workspace.reports_dir / "deep" / "2026-04-01.md").read_text(encoding="utf-8")
    assert f"- {shown} [promoted" in report


@pytest.mark.parametrize(
    ("snippet", "expected"),
    [
        # the list items under their heading match at 4-5 (distance 1): 3-5 holds the heading line itself
        ("Committee: The CIO asked about cash.; Risk officer: limits stay at 5%.",
         (4, 5, "Committee: The CIO asked about cash.; Risk officer: limits stay at 5%.")),
        # the older recorded form is exactly lines 3-5 joined: kept as it reads
        ("## Committee - The CIO asked about cash. - Risk officer: limits stay at 5%.",
         (3, 5, "## Committee - The CIO asked about cash. - Risk officer: limits stay at 5%.")),
    ],
)  # fmt: skip
def test_openclaw_rehydration_of_a_chunk_under_a_heading(
    workspace: Workspace, snippet: str, expected: tuple[int, int, str]
) -> None:
    note(workspace, PATH, COMMITTEE)
    rec(workspace, "q", PATH, 3, 5, 0.9, snippet, NOW)
    (applied,) = deep_sleep_recall(workspace, ZERO_CFG, now=NOW).applied
    assert (applied.start_line, applied.end_line, applied.text) == expected
    assert entries(workspace)[0]["snippet"] == expected[2]


def test_an_ingested_line_is_shown_with_the_heading_it_sits_under(workspace: Workspace) -> None:
    note(workspace, PATH, COMMITTEE)
    rec(workspace, "q", PATH, 5, 5, 0.9, "Committee: Risk officer: limits stay at 5%.", NOW)
    (applied,) = deep_sleep_recall(workspace, ZERO_CFG, now=NOW).applied
    assert (applied.start_line, applied.end_line, applied.text) == (5, 5, "Committee: Risk officer: limits stay at 5%.")


def test_legacy_basename_path(workspace: Workspace) -> None:
    note(workspace, PATH, [GATEWAY])
    rec(workspace, "q", "2026-04-01.md", 1, 1, 0.9, GATEWAY, NOW)
    assert len(deep_sleep_recall(workspace, ZERO_CFG, now=NOW).applied) == 1
    assert "source=2026-04-01.md:1-1]" in _memory(workspace)


def test_snippet_gone_from_note_is_refused(workspace: Workspace) -> None:
    note(workspace, PATH, ["Something else entirely"])
    rec(workspace, "q", PATH, 1, 1, 0.9, GATEWAY, NOW)
    summary = deep_sleep_recall(workspace, ZERO_CFG, now=NOW)
    assert summary.applied == () and summary.refused[0][1] == "source rehydration failed"
    assert not workspace.memory_md.exists()


def test_fenced_range_is_refused(workspace: Workspace) -> None:
    lines = ["Intro", "", "## Light Sleep", "<!-- openclaw:dreaming:light:start -->", "", "", "",
             "- Candidate: staged dream scratchwork", "<!-- openclaw:dreaming:light:end -->"]  # fmt: skip
    note(workspace, PATH, lines)
    rec(workspace, "q", PATH, 8, 8, 0.9, "- Candidate: staged dream scratchwork", NOW)
    summary = deep_sleep_recall(workspace, ZERO_CFG, now=NOW)
    assert summary.applied == () and summary.refused[0][1] == "source rehydration failed"
    assert deep_sleep_recall(workspace, OURS_CFG, now=NOW).refused[0][1] == "fenced"
    assert "Promoted From" not in _memory(workspace) and "scratchwork" not in _memory(workspace)


def test_timezone_header(workspace: Workspace) -> None:
    config = DreamingConfig(timezone="America/Los_Angeles", deep=ZERO_CFG.deep)
    note(workspace, PATH, [GATEWAY])
    rec(workspace, "q", PATH, 1, 1, 0.9, GATEWAY, at("2026-04-01T23:30:00"), timezone="America/Los_Angeles")
    assert entries(workspace)[0]["recallDays"] == ["2026-04-01"]
    deep_sleep_recall(workspace, config, now=at("2026-04-02T06:30:00"))
    assert "## Promoted From Short-Term Memory (2026-04-01)" in _memory(workspace)


def _seed_budget(ws: Workspace) -> str:
    old = "\n".join(
        [
            "# Long-Term Memory",
            "",
            "User wrote this and it stays.",
            "",
            "## Promoted From Short-Term Memory (2026-04-10)",
            "<!-- openclaw-memory-promotion:legacy-old -->",
            "- " + "x" * 600,
            "",
            "## Promoted From Short-Term Memory (2026-04-20)",
            "<!-- openclaw-memory-promotion:legacy-new -->",
            "- " + "x" * 600,
            "",
        ]
    )
    ws.memory_md.write_text(old, encoding="utf-8")
    return old


def test_size_budget_holds_back_what_would_lose_too_many_prior_entries(workspace: Workspace) -> None:
    old = _seed_budget(workspace)
    text = "Rotate the staging Postgres credentials"
    note(workspace, "memory/2026-04-25.md", [text])
    rec(workspace, "q", "memory/2026-04-25.md", 1, 1, 0.9, text, at("2026-04-25T10:00:00"))
    config = DreamingConfig(
        deep=DeepConfig(min_score=0, min_recall_count=0, min_unique_queries=0, memory_file_max_chars=1400)
    )
    # dropping one of the two prior entries would lose 50% > 25%: the candidate waits, MEMORY.md is untouched
    summary = deep_sleep_recall(workspace, config, now=at("2026-04-25T10:00:00"))
    assert summary.applied == () and summary.refused[0][1].startswith("MEMORY.md budget exceeded (")
    assert _memory(workspace) == old and "promotedAt" not in entries(workspace)[0]


def test_size_budget_drops_oldest_generated_section_only(workspace: Workspace) -> None:
    _seed_budget(workspace)
    text = "Rotate the staging Postgres credentials"
    note(workspace, "memory/2026-04-25.md", [text])
    rec(workspace, "q", "memory/2026-04-25.md", 1, 1, 0.9, text, at("2026-04-25T10:00:00"))
    config = DreamingConfig(
        deep=DeepConfig(min_score=0, min_recall_count=0, min_unique_queries=0, memory_file_max_chars=1400,
                        max_prior_entry_loss_fraction=0.5)
    )  # fmt: skip
    summary = deep_sleep_recall(workspace, config, now=at("2026-04-25T10:00:00"))
    assert len(summary.applied) == 1 and summary.compacted_dates == ("2026-04-10",)
    result = _memory(workspace)
    assert "(2026-04-10)" not in result and "legacy-old" not in result
    assert text in result and "(2026-04-20)" in result and "User wrote this and it stays." in result
    assert len(result) <= 1400


def test_within_budget_file_is_untouched_except_append(workspace: Workspace) -> None:
    old = _seed_budget(workspace)
    config = DreamingConfig(deep=DeepConfig(min_score=0, min_recall_count=0, min_unique_queries=0))
    summary = deep_sleep_recall(workspace, config, now=at("2026-04-25T10:00:00"))
    assert summary.compacted_dates == () and _memory(workspace) == old


def test_daily_notes_are_never_written(workspace: Workspace) -> None:
    path = note(workspace, PATH, [*GREEK, GATEWAY])
    before = path.read_bytes()
    rec(workspace, "q", PATH, 10, 10, 0.9, GATEWAY, NOW)
    deep_sleep_recall(workspace, ZERO_CFG, now=NOW)
    assert path.read_bytes() == before


def test_dry_run_writes_nothing(workspace: Workspace) -> None:
    note(workspace, PATH, [GATEWAY])
    rec(workspace, "q", PATH, 1, 1, 0.9, GATEWAY, NOW)
    before = workspace.recall_store.read_bytes()
    summary = deep_sleep_recall(workspace, ZERO_CFG, now=NOW, dry_run=True)
    assert len(summary.applied) == 1 and summary.report_path is None
    assert not workspace.memory_md.exists() and workspace.recall_store.read_bytes() == before


def test_limit_zero_and_disabled_are_no_ops(workspace: Workspace) -> None:
    note(workspace, PATH, [GATEWAY])
    rec(workspace, "q", PATH, 1, 1, 0.9, GATEWAY, NOW)
    zero = DreamingConfig.from_mapping({"deep": {"limit": 0, "min_score": 0, "min_recall_count": 0}})
    assert deep_sleep_recall(workspace, zero, now=NOW).disabled_reason == "deep promotion skipped because limit=0"
    off = DreamingConfig.from_mapping({"deep": {"enabled": False}})
    assert deep_sleep_recall(workspace, off, now=NOW).disabled_reason == "deep promotion is disabled"
    assert not workspace.memory_md.exists()
