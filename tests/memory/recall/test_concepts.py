"""Concept tags exactly as OpenClaw 2026.9.6's deriveConceptTags gives them (outputs run under Node 24, ICU 78.3)."""

from __future__ import annotations

import pytest

from dreaming.memory.recall import _concepts
from dreaming.memory.recall._concepts import (
    CONCEPT_STOP_WORDS,
    PROTECTED_GLOSSARY,
    classify_concept_tag_script,
    derive_concept_tags,
    normalize_concept_token,
    word_segments,
)

pytest.importorskip("icu", reason="the worked CJK outputs need ICU word segmentation (the icu extra)")

PATH = "memory/2026-04-03.md"


@pytest.mark.parametrize(
    ("snippet", "expected"),
    [
        (
            "障害対応ルーター設定とバックアップ確認。路由器备份与网关同步。",
            ["バックアップ", "ルーター", "障害対応", "路由器", "备份", "网关", "障害", "対応"],
        ),
        (
            "本番サーバーの証明書を更新した。期限は来年三月。",
            ["本番", "サーバー", "証明書", "更新", "期限", "来年", "三月"],
        ),
        (
            "数据库迁移已经完成，明天检查备份任务。",
            ["备份", "数据", "迁移", "已经", "完成", "明天", "检查", "任务"],
        ),
        (
            "api_key rotation for v2.3 build/deploy pipeline",
            ["api-key", "v2.3", "build/deploy", "rotation", "pipeline"],
        ),
        (
            "Move backups to S3 Glacier and sync QMD router notes.",
            ["backup", "backups", "glacier", "router", "s3", "sync", "qmd"],
        ),
    ],
)
def test_worked_outputs(snippet: str, expected: list[str]) -> None:
    assert derive_concept_tags(PATH, snippet) == expected


def test_glossary_terms_come_first_in_list_order_and_short_ones_match_whole_words() -> None:
    # "routers" holds "router"; "kv" inside "kvm" and "s3" inside "s3x" are not whole words.
    assert derive_concept_tags(PATH, "kvm s3x routers") == ["router", "kvm", "s3x", "routers"]
    assert derive_concept_tags(PATH, "the kv store, s3!") == ["kv", "s3", "store"]


def test_file_name_counts_but_a_dated_name_does_not() -> None:
    assert derive_concept_tags("memory/projects/omada-router.md", "Changed nothing.") == [
        "router", "omada-router.md", "omada", "router.md", "changed", "nothing",
    ]  # fmt: skip
    assert derive_concept_tags(PATH, "") == []


def test_html_comments_are_blanked_and_the_limit_holds() -> None:
    assert derive_concept_tags(PATH, "vlan<!-- secret router -->tagging") == ["vlan", "tagging"]
    snippet = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo"
    assert len(derive_concept_tags(PATH, snippet)) == 8
    assert derive_concept_tags(PATH, snippet, limit=2) == ["alpha", "bravo"]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("__Deploy_Key__", "deploy-key"),  # edges stripped, _ to -, lowercased
        ("Ｒｏｕｔｅｒ", "router"),  # NFKC
        ("2026", None),  # digits only
        ("1.2-3", None),  # digits joined by ./-
        ("2026-04-03.md", None),  # a dated file name
        ("ab", None),  # Latin under 3
        ("kv", "kv"),  # ... unless a glossary term
        ("数据", "数据"),  # CJK from 2
        ("した", None),  # kana-only under 3 (and a stop word)
        ("ルー", None),  # kana-only under 3
        ("memory", None),  # stop words
        ("für", None),
        ("a" * 33, None),  # over 32 UTF-16 units
        ("𠀀" * 16, "𠀀" * 16),  # 16 characters outside the BMP: 32 units
        ("𠀀" * 17, None),  # 17 of them: 34 units
    ],
)
def test_token_normalization(raw: str, expected: str | None) -> None:
    assert normalize_concept_token(raw) == expected


def test_scripts() -> None:
    assert [classify_concept_tag_script(t) for t in ("router", "备份", "v2备份", "2.0", "ルーター", "백업")] == [
        "latin", "cjk", "mixed", "other", "cjk", "cjk",
    ]  # fmt: skip


def test_lists_are_openclaws() -> None:
    assert len(PROTECTED_GLOSSARY) == 41 and PROTECTED_GLOSSARY[:3] == ("backup", "backups", "embedding")
    assert {"port", "move", "notes", "memory", "md", "json", "した", "的", "는"} <= CONCEPT_STOP_WORDS


def test_icu_segments_as_openclaws_icu_does() -> None:
    """ICU 72's root rules joined "a@b" and split "a:b"; OpenClaw's ICU 78 does the opposite."""
    assert word_segments("mail ops@example now: router:main") == ["mail", "ops", "example", "now", "router:main"]


def test_without_icu_words_are_runs_of_letters_and_digits(monkeypatch: pytest.MonkeyPatch) -> None:
    """What OpenClaw does without Intl.Segmenter: Han runs stay whole."""
    monkeypatch.setattr(_concepts, "_icu_word_iterator", lambda: None)
    assert word_segments("障害対応ルーター設定 v2.3 ok") == ["障害対応ルーター設定", "v2", "3", "ok"]
    assert derive_concept_tags(PATH, "数据库迁移已经完成，明天检查备份任务。") == [
        "备份", "数据库迁移已经完成", "明天检查备份任务",
    ]  # fmt: skip
