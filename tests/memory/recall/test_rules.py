"""Path rules, contamination and fences (B1.2 tables); concept tags are in test_concepts.py."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dreaming.memory.recall import _contamination as contamination
from dreaming.memory.recall import (
    is_contaminated_snippet,
    is_short_term_path,
    line_range_overlaps_dreaming_fence,
)
from dreaming.memory.recall._js import js_collapse_whitespace


@pytest.mark.parametrize(
    "path",
    [
        "memory/2026-04-03.md",
        "2026-04-03.md",
        "memory/.dreams/session-corpus/2026-04-03.txt",
        "memory/daily/2026-04-03.md",
        "memory/daily notes/2026-04-03.md",
        "memory/日记/2026-04-03.md",
        "memory/notes/2026-04-03.md",
        "memory/nested/deep/2026-04-03.md",
        # OpenClaw's rule: a memory/ segment anywhere, a dated name with an optional -suffix, one ./ removed.
        "notes/memory/2026-04-03.md",
        "memory/2026-04-03-standup.md",
        "./memory/2026-04-03.md",
        "memory\\2026-04-03.md",
    ],
)
def test_short_term_paths(path: str) -> None:
    assert is_short_term_path(path)


@pytest.mark.parametrize(
    "path",
    [
        "notes/2026-04-03.md",
        "MEMORY.md",
        "memory/network.md",
        "memory/dreaming/2026-04-03.md",
        "memory/dreaming/deep/2026-04-03.md",
        "../../vault/memory/dreaming/deep/2026-04-03.md",
        "notes/daily/2026-04-03.md",
        "DREAMS.md",
        "memory/.dreams/short-term-recall.json",
        "memory/2026-04-03x.md",
        "memory/2026-04-03.md.bak",
        "memory/٢٠٢٦-٠٤-٠٣.md",
        "memory/2026-04-03.md\n",
    ],
)
def test_not_short_term_paths(path: str) -> None:
    assert not is_short_term_path(path)


STAGED = "confidence: 0.76 evidence: memory/.dreams/session-corpus/2026-04-08.txt:1-1 recalls: 3 status: staged"


@pytest.mark.parametrize(
    ("snippet", "expected"),
    [
        (f"@@ -1,1 - Candidate: Default to action. {STAGED}", True),
        (f"([ Candidate: Default to action. {STAGED}", True),
        ("Candidate: move backups weekly. confidence: 0.76 evidence: memory/2026-04-08.md:1-1", False),
        ("[main/dreaming-narrative-light.jsonl#L1] User: Write a dream diary entry from these memory fragments:", True),
        (
            "- - status: staged - Candidate: User: [cron:26fb656d] run thing - confidence: 0.00 - evidence: "
            "memory/.dreams/session-corpus/2026-04-12.txt:25-25 - recalls: 0 - status: staged",
            True,
        ),
        (
            "confidence: 0.58 - Candidate: Assistant: Mason shipped the enforcement pass. - evidence: "
            "memory/2026-04-12.md:1-1 - recalls: 0 - status: staged",
            True,
        ),
        ("The Candidate profile for Josh Rhoden shows he runs SEU's network admin team; confidence: 2", False),
        ("Debug note: quote Write a dream diary entry from these memory fragments for docs.", False),
        ("<!-- openclaw-memory-promotion:memory:memory/2026-04-01.md:1:1 --> kept", True),
        (
            "Reflections: Theme: assistant. confidence: 1.00 evidence: memory/2026-04-01.md:1-1 recalls: 4 status: staged",
            True,
        ),
    ],
)
def test_contamination(snippet: str, expected: bool) -> None:
    assert is_contaminated_snippet(snippet) is expected


@pytest.mark.parametrize(
    ("snippet", "expected"),
    [
        # 2026.9's raw-transcript patterns, matched case-insensitively as OpenClaw's /i regexes are.
        ("User: what port does the gateway use?", True),
        ("- assistant: it binds 18789", True),
        ("The user: field holds the owner", False),
        ("Session Key agent:main Session ID 7f3a", True),
        ("session id 7f3a for session key agent:main", True),
        ("* Conversation Summary: we agreed on VLAN 10", True),
        ("Save important context from this session to the daily memory file.  STRICT RULES: no secrets", True),
        ("- Gateway binds loopback [score=0.812 signals=4 recalls=3 avg=0.900 source=memory/2026-04-01.md:1-1]", True),
        # A reflection block counts with its note instead of status and recalls; a "## Reflections" head leads too.
        ("## Reflections - Theme: `router` confidence: 0.80 evidence: memory/2026-04-01.md:1-1 note: reflection", True),
        ("CANDIDATE: x CONFIDENCE: 0.7 EVIDENCE: MEMORY/2026-04-01.md:1-1 STATUS: STAGED RECALLS: 2", True),
        # The diary prompt counts only as a narrative transcript line, not quoted in an ordinary note.
        ("Write a dream diary entry from these memory fragments: the old prompt", False),
        # JS counts UTF-16 units in ``.{0,260}``: 128 emoji (256 units) between the two fields match, 130 do not.
        ("Session Key " + "😀" * 128 + " Session ID", True),
        ("Session Key " + "😀" * 130 + " Session ID", False),
    ],
)
def test_contamination_2026_9_patterns(snippet: str, expected: bool) -> None:
    assert is_contaminated_snippet(snippet) is expected


def test_session_corpus_snippets_may_be_transcript_turns() -> None:
    assert is_contaminated_snippet("User: rotate the keys", allow_transcript_turn=True) is False
    assert is_contaminated_snippet("Conversation Summary: x", allow_transcript_turn=True) is True


def _every_pattern_tried(snippet: str, *, allow_transcript_turn: bool) -> bool:
    """``is_contaminated_snippet`` with no word gate: every pattern is run."""
    text = js_collapse_whitespace(snippet)
    if not text:
        return False
    units = contamination._as_utf16_units(text)
    if not allow_transcript_turn and contamination._TRANSCRIPT_TURN.match(units):
        return True
    if contamination._ANYWHERE.search(units):
        return True
    if not contamination._CONFIDENCE.search(units) or not contamination._EVIDENCE.search(units):
        return False
    if not contamination._has_narrative_lead(text):
        return False
    return bool(
        (contamination._STAGED.search(units) and contamination._RECALLS.search(units))
        or contamination._REFLECTION_NOTE.search(units)
    )


_FRAGMENTS = st.sampled_from(
    ["Session Key", "session id", "SESSİON KEY", "Session\u00a0ID", "<!--", "< !--", "openclaw-memory-promotion:",
     "[main/dreaming-narrative-light.jsonl#L1]", "DREAMING-NARRATIVE", "User:", "assistant:",
     "Write a dream diary entry from these memory fragments:", "Conversation Summary:", "conversation summary",
     "Save important context from this session to the daily memory file.", "STRICT RULES:", "strict rules",
     "[score=0.812 signals=4 recalls=3 avg=0.900 source=memory/", "score=", "Candidate:", "Reflections:",
     "## Reflections", "confidence: 0.7", "CONFIDENCE:1", "evidence: memory/2026-04-01.md", "status: staged",
     "recalls: 3", "note: reflection", "-", "*", "@@ -1,1 -", "(", "[", ":", "=", "<", "K", "😀", "router vlan"]
)  # fmt: skip


@settings(max_examples=400, derandomize=True, database=None)
@given(st.lists(st.tuples(_FRAGMENTS, st.sampled_from(["", " ", "  ", "\n"])), max_size=8), st.booleans())
def test_the_word_gates_only_skip_patterns_that_cannot_match(pieces: list[tuple[str, str]], allow: bool) -> None:
    snippet = "".join(fragment + gap for fragment, gap in pieces)
    expected = _every_pattern_tried(snippet, allow_transcript_turn=allow)
    assert is_contaminated_snippet(snippet, allow_transcript_turn=allow) is expected


FENCED = [
    "Intro",  # 1
    "<!-- openclaw:dreaming:light:start -->",  # 2
    "- Candidate: staged",  # 3
    "<!-- openclaw:dreaming:light:end -->",  # 4
    "Between",  # 5
    "<!-- openclaw:dreaming:diary:start -->",  # 6
    "dream",  # 7
    "<!-- openclaw:dreaming:diary:end -->",  # 8
    "After",  # 9
]


@pytest.mark.parametrize(
    ("start", "end", "expected"),
    [(3, 3, True), (1, 1, False), (5, 6, True), (4, 5, True), (5, 5, False), (7, 7, True), (9, 9, False)],
)
def test_fence_overlap(start: int, end: int, expected: bool) -> None:
    assert line_range_overlaps_dreaming_fence(FENCED, start, end) is expected
