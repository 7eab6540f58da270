"""A snippet recorded from a multi-line chunk is whitespace-collapsed; rehydration must still find the whole chunk."""

from __future__ import annotations

from dreaming.memory.recall import rehydrate

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
