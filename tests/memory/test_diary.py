from __future__ import annotations

from datetime import UTC, datetime
from itertools import pairwise

import pytest

from dreaming.memory import Workspace, diary, readable_markdown
from dreaming.memory.diary import DiaryEntry, DiarySection, append_diary_entry, night_entry, render_diary_entry
from dreaming.memory.research import ResearchFinding, render_rem_research_section

NOW = datetime(2026, 4, 15, 3, 0, tzinfo=UTC)


def test_entry_renders_sections_and_cuts_long_lists() -> None:
    entry = DiaryEntry(
        run_id="r1", now=NOW, sections=[DiarySection(title="Verdicts", lines=[f"line {i}" for i in range(15)])]
    )
    text = render_diary_entry(entry)
    assert text.startswith("## 2026-04-15 (run, 03:00 UTC)\n<!-- dreaming:run:r1 -->\n")
    assert "- line 11\n- ... and 3 more\n" in text and "line 12" not in text


def test_append_is_idempotent_per_run(workspace: Workspace) -> None:
    entry = DiaryEntry(run_id="r1", now=NOW, sections=[DiarySection(title="Budget", lines=["none"])])
    assert append_diary_entry(workspace, entry) is True
    assert append_diary_entry(workspace, entry) is False
    assert workspace.dreams_md.read_text().count("dreaming:run:r1") == 1


def test_a_full_diary_is_kept_whole_in_the_archive_and_a_new_one_begins(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(diary, "DIARY_MAX_BYTES", 300)
    for i in range(4):
        append_diary_entry(
            workspace, DiaryEntry(run_id=f"r{i}", now=NOW, sections=[DiarySection(title="X", lines=["y" * 80])])
        )
    archived = sorted((workspace.reports_dir / "diary").glob("*.md"))
    assert archived, "the diary never rotated"
    everything = "".join(p.read_text() for p in archived) + workspace.dreams_md.read_text()
    assert [everything.count(f"dreaming:run:r{i}") for i in range(4)] == [1, 1, 1, 1]  # nothing lost
    assert "Earlier entries: `memory/dreaming/diary/" in workspace.dreams_md.read_text()


def _heading_levels(markdown: str) -> list[int]:
    return [len(line) - len(line.lstrip("#")) for line in markdown.splitlines() if line.startswith("#")]


def test_the_rem_research_body_nests_under_its_section_in_the_entry() -> None:
    findings = [ResearchFinding(gap="what is X", decision="abstain", reason="no evidence found")]
    body = render_rem_research_section(findings, backlog=["ancillary pricing connections"])
    state = {
        "run_id": "r1",
        "now": NOW.isoformat(),
        "summaries": {"research": {"lines": ["Researched 1 knowledge gaps: 1 abstained."], "markdown": body}},
    }
    text = render_diary_entry(night_entry(state, trigger="run"))
    assert "### REM Research\n- Researched 1 knowledge gaps" in text
    assert "\n#### Investigated 1 knowledge gap\n" in text and "\n#### Research backlog: needs you\n" in text
    levels = _heading_levels(text)
    assert levels[0] == 2 and all(level > 2 for level in levels[1:])
    assert all(b <= a + 1 for a, b in pairwise(levels)), levels  # no level skipped going down


@pytest.mark.parametrize(
    ("markdown", "readable"),
    [
        ("## Entry\n<!-- dreaming:run:r1 -->\n\n### Verdicts\n", "## Entry\n\n### Verdicts\n"),  # the marker line goes
        ("a\n\n\nb\n", "a\n\n\nb\n"),  # no comment: byte for byte, blank lines kept
        ("- x <!-- importance: 3 --> [score=1]\n", "- x  [score=1]\n"),  # inline: only the comment goes
        ("a\n<!--\nmany\nlines\n-->\nb\n", "a\nb\n"),
        ("keep <!-- from here\nto here --> and this\n", "keep  and this\n"),
        ("a <!-- to the line's end\n-->\nb\n", "a \nb\n"),  # the line keeps its break
        ("a\r\n<!-- m -->\r\nb\r\n", "a\r\nb\r\n"),
        ("a\n<!-- never closed\nb\n", "a\n"),  # as a renderer reads it: hidden to the end
        ("<!-- only -->", ""),
    ],
)
def test_readable_markdown_removes_html_comments_and_nothing_else(markdown: str, readable: str) -> None:
    assert readable_markdown(markdown) == readable
    assert "<!--" not in readable_markdown(render_diary_entry(DiaryEntry(run_id="r1", now=NOW)))
