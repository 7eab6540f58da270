"""Path rules, contamination, fences and concept tags (B1.2 tables)."""

from __future__ import annotations

import pytest

from dreaming.memory.recall import (
    derive_concept_tags,
    is_contaminated_snippet,
    is_short_term_path,
    line_range_overlaps_dreaming_fence,
)


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


def test_concept_tags_latin() -> None:
    tags = derive_concept_tags("memory/2026-04-03.md", "Move backups to S3 Glacier and sync QMD router notes.")
    assert set(tags) == {"backup", "backups", "glacier", "qmd", "router", "sync"}


def test_concept_tags_accented_latin_superset() -> None:
    tags = derive_concept_tags("memory/2026-04-03.md", "Configuración du routeur et sauvegarde Glacier.")
    assert {"glacier", "sauvegarde", "routeur", "configuración"} <= set(tags)


def test_concept_tags_cjk_salient_tokens() -> None:
    tags = derive_concept_tags("memory/2026-04-03.md", "障害対応ルーター設定とバックアップ確認。路由器备份与网关同步。")
    assert {"バックアップ", "ルーター", "障害対応", "障害", "対応"} <= set(tags)
    assert len(tags) <= 8
    assert "設定" not in tags


def test_concept_tags_capped_at_eight() -> None:
    snippet = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo"
    assert len(derive_concept_tags("memory/2026-04-03.md", snippet)) == 8
