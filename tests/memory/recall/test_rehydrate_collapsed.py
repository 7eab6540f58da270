"""A snippet recorded from a multi-line chunk is whitespace-collapsed; rehydration must still find the whole chunk."""

from __future__ import annotations

from dreaming.memory.recall import note_snippet, rehydrate

NOTE = [
    "# 2018-12-31",
    "",
    "## Year end",
    "- Risk officer repeated: single-name position limit is 5% of the book.",
    "- Price files are refreshed at 06:00 UTC.",
    "",
]
COLLAPSED = "## Year end - Risk officer repeated: single-name position limit is 5% of the book. - Price files are refreshed at 06:00 UTC."


def test_collapsed_chunk_rehydrates_to_its_full_range_not_its_heading() -> None:
    assert rehydrate(NOTE, COLLAPSED, 3, 5) == (3, 5)


def test_collapsed_chunk_that_moved_is_found_whole() -> None:
    moved = ["# 2018-12-31", "", "A new first paragraph.", "", *NOTE[2:]]
    assert rehydrate(moved, COLLAPSED, 3, 5) == (5, 7)


def test_a_one_line_snippet_is_still_narrowed_to_its_line() -> None:
    assert rehydrate(NOTE, "Price files are refreshed at 06:00 UTC.", 2, 2) == (5, 5)


SNIPPET = "Year end: Risk officer repeated: single-name position limit is 5% of the book.; Price files are refreshed at 06:00 UTC."
"""The same chunk as a search now records it: one snippet line, its heading as context (memory.recall.note_snippet)."""


def test_a_chunk_read_as_a_snippet_line_keeps_its_heading_as_context_and_no_marks() -> None:
    assert note_snippet(NOTE[2:5]) == SNIPPET
    assert note_snippet(NOTE[3:4], heading="Year end") == f"Year end: {NOTE[3][2:]}"
    assert note_snippet(["# 2018-12-31", "- a", "- b"]) == "a; b"  # a date heading is no context
    assert note_snippet(["## Notes", "", "First line", "- an item"]) == "Notes: First line an item"
    assert note_snippet(["## Only a heading", ""]) == ""


def test_a_snippet_line_rehydrates_to_its_whole_range_and_when_moved() -> None:
    assert rehydrate(NOTE, SNIPPET, 3, 5) == (3, 5)
    moved = ["# 2018-12-31", "", "A new first paragraph.", "", *NOTE[2:]]
    assert rehydrate(moved, SNIPPET, 3, 5) == (5, 7)


def test_an_ingested_line_with_its_heading_prefix_rehydrates_to_its_line() -> None:
    assert rehydrate(NOTE, "Year end: Price files are refreshed at 06:00 UTC.", 5, 5) == (5, 5)
    assert rehydrate(NOTE, "Year end: Price files are refreshed at 06:00 UTC.", 2, 2) == (5, 5)
