"""MEMORY.md's managed block: any marker layout is repaired to exactly one block, user lines kept, as a fixed point."""

from __future__ import annotations

import re
from datetime import datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from dreaming.memory import InputReport, Workspace
from dreaming.memory._managed_block import rewrite_managed_block
from dreaming.memory.insights import INDEX_END, INDEX_START, write_insight, write_memory_index

BODY = ["## Insights", "", "- [A finding](memory/insights/a.md) — confidence 0.9"]
MARKER = re.compile(r"<!--\s*dreaming:insights:(start|end)\s*-->")
SPELLINGS = {
    "start": [INDEX_START, "<!--dreaming:insights:start-->", "<!--   dreaming:insights:start -->"],
    "end": [INDEX_END, "<!--dreaming:insights:end-->", "<!-- dreaming:insights:end     -->"],
}

user_text = st.text(alphabet="abcxyz019 #-*>é\t", max_size=12)
"""Text a person writes: never a marker (no ``<``)."""


@st.composite
def layouts(draw: st.DrawFn) -> tuple[str, list[str], str]:
    """Return a MEMORY.md with random marker lines and user text, its lines as written, and its line ending."""
    lines: list[str] = []
    for n in range(draw(st.integers(min_value=0, max_value=14))):
        kind = draw(st.sampled_from(["user", "user", "start", "end", "two"]))
        if kind == "user":
            lines.append(f"{draw(user_text)}u{n}")
            continue
        kinds = ["start", "end"] if kind == "two" else [kind]
        if kind == "two" and draw(st.booleans()):
            kinds.reverse()
        parts = [draw(user_text)]
        for k in kinds:
            parts += [draw(st.sampled_from(SPELLINGS[k])), draw(user_text)]
        lines.append("".join(parts))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    bom = "\ufeff" if draw(st.booleans()) else ""
    ending = newline if draw(st.booleans()) and lines else ""
    return bom + newline.join(lines) + ending, lines, newline


def expected_user_text(lines: list[str]) -> list[str]:
    """The user's text in order, by the rule: a line is dreaming's when a start marker is the last marker before it
    and an end marker follows it; text sharing a line with a marker is always the user's."""
    events = [(i, m.group(1)) for i, line in enumerate(lines) for m in MARKER.finditer(line)]
    kept: list[str] = []
    for i, line in enumerate(lines):
        if MARKER.search(line):
            kept += [part.strip() for part in MARKER.split(line)[::2] if part.strip()]
            continue
        before = [kind for at, kind in events if at < i]
        managed = bool(before) and before[-1] == "start" and any(at > i and kind == "end" for at, kind in events)
        if not managed and line.strip():
            kept.append(line)
    return kept


def outside_block(text: str) -> list[str]:
    lines = text.removeprefix("\ufeff").replace("\r\n", "\n").split("\n")
    start, end = lines.index(INDEX_START), lines.index(INDEX_END)
    return [line for line in lines[:start] + lines[end + 1 :] if line.strip()]


@settings(max_examples=400, deadline=None)
@given(layouts(), st.booleans())
def test_any_layout_becomes_one_block_keeping_user_lines_in_order(
    layout: tuple[str, list[str], str], add: bool
) -> None:
    text, lines, newline = layout
    rewrite = rewrite_managed_block(text, "insights", BODY, add=add)
    if not MARKER.search(text) and not add:
        assert rewrite.text == text
        return
    out = rewrite.text
    assert [m.group(0) for m in MARKER.finditer(out)] == [INDEX_START, INDEX_END]
    assert outside_block(out) == expected_user_text(lines)
    assert out.startswith("\ufeff") == text.startswith("\ufeff")
    if "\n" in text:  # the file's line ending is kept, and used for the lines dreaming adds
        assert ("\n" in out.replace("\r\n", "")) == (newline == "\n")
        assert ("\r\n" in out) == (newline == "\r\n")
    again = rewrite_managed_block(out, "insights", BODY, add=add)
    assert again.text == out and again.repairs == ()


@settings(max_examples=200, deadline=None)
@given(
    st.lists(user_text, max_size=6),
    st.lists(user_text, max_size=6),
    st.lists(user_text, max_size=4),
    st.sampled_from(["\n", "\r\n"]),
)
def test_a_well_formed_file_changes_only_inside_its_block(
    top: list[str], bottom: list[str], old: list[str], newline: str
) -> None:
    head = "".join(line + newline for line in top)
    tail = "".join(newline + line for line in bottom)
    text = head + newline.join([INDEX_START, *old, INDEX_END]) + tail
    rewrite = rewrite_managed_block(text, "insights", BODY)
    assert rewrite.repairs == ()
    assert rewrite.text == head + newline.join([INDEX_START, *BODY, INDEX_END]) + tail


def test_an_end_before_the_start_no_longer_adds_a_block_every_run(workspace: Workspace, now: datetime) -> None:
    write_insight(
        workspace.insights_dir / "research-a.md",
        {"id": "research-a", "kind": "research", "title": "A finding", "confidence": 0.9},
        "The finding.\n",
    )
    workspace.memory_md.write_text(f"# Memory\n{INDEX_END}\nmy notes\n{INDEX_START}\nold\n{INDEX_END}\n")
    report = InputReport()
    for _ in range(3):
        write_memory_index(workspace, now=now, report=report)
    text = workspace.memory_md.read_text()
    assert text.count(INDEX_START) == 1 and text.count(INDEX_END) == 1
    assert text.startswith(f"# Memory\nmy notes\n{INDEX_START}\n## Insights\n")
    assert [b.describe() for b in report.bad] == ["MEMORY.md:2: an end marker with no start marker before it; removed"]
    assert "memory.markers_repaired" in workspace.events.read_text()


def test_user_text_on_a_marker_line_is_kept(workspace: Workspace) -> None:
    workspace.memory_md.write_bytes(
        f"\ufeff# Memory\r\nbefore {INDEX_START} after\r\nold\r\nmine {INDEX_END} too\r\nlast\r\n".encode()
    )
    report = InputReport()
    assert write_memory_index(workspace, report=report)
    assert workspace.memory_md.read_bytes().decode() == (
        f"\ufeff# Memory\r\nbefore\r\nafter\r\n{INDEX_START}\r\n## Insights\r\n\r\n_No active insights._\r\n"
        f"{INDEX_END}\r\nmine\r\ntoo\r\nlast\r\n"
    )
    assert [b.line for b in report.bad] == [2, 4]
    assert not write_memory_index(workspace)


def test_a_body_line_cannot_close_the_block_early() -> None:
    body = ["- [Sneaky <!-- dreaming:insights:end --> title](x.md)"]
    out = rewrite_managed_block("", "insights", body).text
    assert [m.group(0) for m in MARKER.finditer(out)] == [INDEX_START, INDEX_END]
    assert rewrite_managed_block(out, "insights", body).text == out
