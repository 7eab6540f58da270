"""Morphological terms: stems, CJK bigrams and harder folding, for the search's second table (memory/_terms.py)."""

from __future__ import annotations

import pytest

from dreaming.memory._terms import morph_salient_terms, morph_term_coverage, morph_tokens, query_coverage


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("The rate limits", ["rate", "limit"]),  # no stop words
        ("requests per minute", ["request", "per", "minut"]),
        ("Zürich office café", ["zurich", "offic", "cafe"]),
        ("Zu\u0308rich", ["zurich"]),  # decomposed, as some editors save it
        ("Straße Łódź København Æsir", ["strass", "lodz", "kobenhavn", "aesir"]),
        ("ＡＰＩ gateway", ["api", "gateway"]),  # full-width Latin
        ("备份任务", ["备份", "份任", "任务"]),
        ("数据库，备份。", ["数据", "据库", "备份"]),  # punctuation ends a run
        ("証明書の更新", ["証明", "明書", "更新"]),  # a run of one script ends where another begins; no particle
        ("サーバー", ["サー", "ーバ", "バー"]),
        ("ｻｰﾊﾞｰ", ["サー", "ーバ", "バー"]),  # half-width katakana, voicing mark kept
        ("서버를 재시작", ["서버", "버를", "재시", "시작"]),  # Hangul syllables stay whole
        ("v2 api版本", ["v2", "api", "版本"]),
        ("字", ["字"]),
    ],
)
def test_morph_tokens(text: str, tokens: list[str]) -> None:
    assert morph_tokens(text) == tokens


def test_query_terms_are_distinct_tokens() -> None:
    assert morph_salient_terms("what are the rate limits") == ("rate", "limit")
    assert morph_salient_terms("証明書の更新") == ("証明", "明書", "更新")
    assert morph_salient_terms("the") == morph_salient_terms("の") == ()  # the exact search answers those
    assert morph_salient_terms("limits limit LIMITING") == ("limit",)
    assert morph_salient_terms("!!!") == ()


def test_coverage_is_exact_or_morphological_whichever_is_higher() -> None:
    note = "The rate limit is 100 requests per minute"
    assert morph_term_coverage(morph_salient_terms("rate limits"), note) == 1.0
    assert query_coverage("rate limits", note) == 1.0
    assert query_coverage("deploy", "Deployments go out on Monday") == 1.0  # the exact prefix rule, not a stem
    assert query_coverage("备份 任务 检查 网关", "明天检查备份任务。") == 0.75
    assert query_coverage("kubernetes ingress", note) == 0.0
