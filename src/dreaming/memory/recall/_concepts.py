"""Concept tags: the salient words of a recall, used for the conceptual signal and REM themes.

Exactly OpenClaw 2026.9.6's ``deriveConceptTags`` (``short-term-promotion-store-*.mjs``). The source is the note's
file name and the snippet (HTML comments blanked). Three token streams are walked in order, each token normalized and
kept if new, up to eight:

1. the glossary: 41 fixed terms in list order, each a substring of the NFKC-normalized, lowercased source (``kv``
   and ``s3``, shorter than their script's minimum, only as whole words);
2. compound tokens (``api_key``, ``v2.3``, ``build/deploy``): letters and digits joined by ``.``, ``_``, ``/``, ``-``;
3. word segments: ICU's word break iterator for the root locale, word-like segments only (what ``Intl.Segmenter``
   gives OpenClaw), or, without PyICU, runs of letters and digits (what OpenClaw does without ``Intl.Segmenter``).

A token is NFKC-normalized, stripped of leading and trailing characters that are neither letters nor digits, ``_``
becomes ``-``, trimmed and lowercased; it is rejected when empty, longer than 32 UTF-16 units, numeric (``1.2-3``), a
dated file name (``2026-04-03.md``), shorter than its script's minimum (2 for CJK, else 3) unless a glossary term,
kana-only and shorter than 3, or a stop word.

Remaining differences from OpenClaw, by cause: Han and kana runs are split by ICU's dictionary, so PyICU built on
another ICU (72.1 here, 78.3 in OpenClaw's Node) may split a compound whose dictionary entry changed (none found in
8,000 Chinese, Japanese, Korean and Thai samples); ICU 72's root rules differ on ``@`` and ``:`` and are corrected
below; NFKC and lowercasing use Python's Unicode
database (14.0; Node's is 17.0), so a character added since can normalize differently. Letter, digit and script
classes come from the ``regex`` module, at Unicode 17 like Node.
"""

from __future__ import annotations

import threading
import unicodedata
from typing import Any, Literal

import regex

from dreaming.memory.recall._js import js_trim, utf16_len

__all__ = [
    "CONCEPT_STOP_WORDS",
    "MAX_CONCEPT_TAGS",
    "PROTECTED_GLOSSARY",
    "ScriptFamily",
    "classify_concept_tag_script",
    "derive_concept_tags",
    "normalize_concept_token",
    "script_of",
    "word_segments",
]

MAX_CONCEPT_TAGS = 8
_MAX_TOKEN_UNITS = 32

ScriptFamily = Literal["latin", "cjk", "mixed", "other"]


def _lower(text: str) -> str:
    # OpenClaw's ``normalizeLowercaseStringOrEmpty``: trimmed, then lowercased.
    return js_trim(text).lower()


# Copied verbatim from openclaw@2026.9.6 dist/short-term-promotion-store-CMmsbVWh.mjs (CONCEPT_STOP_WORDS), list by
# list: shared, english, spanish, french, german, cjk, pathNoise.
_STOP_WORD_LISTS: tuple[tuple[str, ...], ...] = (
    (
        "about", "after", "agent", "again", "also", "assistant", "because", "before", "being", "between", "build",
        "called", "could", "daily", "default", "deploy", "during", "every", "file", "files", "from", "have", "into",
        "just", "line", "lines", "long", "main", "make", "memory", "month", "more", "most", "move", "much", "next",
        "note", "notes", "over", "part", "past", "port", "same", "score", "search", "session", "sessions", "short",
        "should", "since", "some", "subagent", "system", "than", "that", "their", "there", "these", "they", "this",
        "through", "today", "user", "using", "with", "work", "workspace", "year",
    ),
    ("and", "are", "for", "into", "its", "our", "the", "then", "were", "you", "your"),
    (
        "al", "con", "como", "de", "del", "el", "en", "es", "la", "las", "los", "para", "por", "que", "se", "sin",
        "su", "sus", "una", "uno", "unos", "unas", "y",
    ),
    (
        "au", "aux", "avec", "dans", "de", "des", "du", "en", "est", "et", "la", "le", "les", "ou", "pour", "que",
        "qui", "sans", "ses", "son", "sur", "une", "un",
    ),
    (
        "auf", "aus", "bei", "das", "dem", "den", "der", "des", "die", "ein", "eine", "einem", "einen", "einer",
        "für", "im", "in", "mit", "nach", "oder", "ohne", "über", "und", "von", "zu", "zum", "zur",
    ),
    (
        "が", "から", "する", "して", "した", "で", "と", "に", "の", "は", "へ", "まで", "も", "や", "を", "与", "为",
        "了", "及", "和", "在", "将", "或", "把", "是", "用", "的", "과", "는", "도", "로", "를", "에", "에서", "와",
        "은", "으로", "을", "이", "하다", "한", "할", "해", "했다",
    ),
    ("cjs", "cpp", "cts", "jsx", "json", "md", "mjs", "mts", "text", "toml", "ts", "tsx", "txt", "yaml", "yml"),
)  # fmt: skip
CONCEPT_STOP_WORDS = frozenset(_lower(word) for words in _STOP_WORD_LISTS for word in words)
"""Words never kept as tags (OpenClaw's lists, normalized as OpenClaw normalizes them)."""

# Copied verbatim from the same file (PROTECTED_GLOSSARY), in its order: the order tags come out in.
PROTECTED_GLOSSARY: tuple[str, ...] = tuple(
    _lower(unicodedata.normalize("NFKC", word))
    for word in (
        "backup", "backups", "embedding", "embeddings", "failover", "gateway", "glacier", "gpt", "kv", "network",
        "openai", "router", "s3", "vlan",
        "sauvegarde", "routeur", "passerelle", "konfiguration", "sicherung", "überwachung", "configuración",
        "respaldo", "enrutador", "puerta-de-enlace",
        "バックアップ", "フェイルオーバー", "ルーター", "ネットワーク", "ゲートウェイ", "障害対応",
        "路由器", "备份", "故障转移", "网络", "网关",
        "라우터", "백업", "페일오버", "네트워크", "게이트웨이", "장애대응",
    )
)  # fmt: skip
"""Terms always looked for, and kept even when shorter than their script's minimum."""

_COMPOUND = regex.compile(r"[\p{L}\p{N}]+(?:[._/-][\p{L}\p{N}]+)+")
_LETTER_OR_DIGIT = regex.compile(r"[\p{L}\p{N}]")
_NOT_LETTER_OR_DIGIT_RUN = regex.compile(r"[^\p{L}\p{N}]+")
_EDGES = regex.compile(r"^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+\Z")
_NUMERIC = regex.compile(r"\p{N}+(?:[./-]\p{N}+)*")
_DATED_FILE = regex.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}\.[\p{L}\p{N}]+")
_HTML_COMMENT = regex.compile(r"<!--[\s\S]*?-->")
_LATIN = regex.compile(r"\p{Script=Latin}")
_HAN = regex.compile(r"\p{Script=Han}")
_HANGUL = regex.compile(r"\p{Script=Hangul}")
_KANA = regex.compile(r"[\p{Script=Hiragana}\p{Script=Katakana}]")


def classify_concept_tag_script(tag: str) -> ScriptFamily:
    """Return ``mixed`` (Latin and CJK), ``cjk`` (Han, kana or Hangul), ``latin`` or ``other`` for one tag."""
    text = unicodedata.normalize("NFKC", tag)
    latin = bool(_LATIN.search(text))
    cjk = bool(_HAN.search(text) or _KANA.search(text) or _HANGUL.search(text))
    if latin and cjk:
        return "mixed"
    return "cjk" if cjk else ("latin" if latin else "other")


def script_of(char: str) -> str:
    """Return ``han``, ``kana``, ``hangul``, ``latin`` or ``other`` for one character (Unicode script property)."""
    for name, pattern in (("han", _HAN), ("kana", _KANA), ("hangul", _HANGUL), ("latin", _LATIN)):
        if pattern.match(char):
            return name
    return "other"


def _min_length(family: ScriptFamily) -> int:
    return 2 if family == "cjk" else 3


# A glossary term shorter than its script's minimum matches only with no letter or digit on either side.
_GLOSSARY_MATCHERS = tuple(
    (
        term,
        regex.compile(rf"(?<![\p{{L}}\p{{N}}]){regex.escape(term)}(?![\p{{L}}\p{{N}}])")
        if utf16_len(term) < _min_length(classify_concept_tag_script(term))
        else None,
    )
    for term in PROTECTED_GLOSSARY
)


def normalize_concept_token(raw: str) -> str | None:
    """Return ``raw`` as a concept tag, or None when it is not one (see the module docstring for the rules)."""
    token = _lower(_EDGES.sub("", unicodedata.normalize("NFKC", raw)).replace("_", "-"))
    if not token or not _LETTER_OR_DIGIT.search(token) or utf16_len(token) > _MAX_TOKEN_UNITS:
        return None
    if _NUMERIC.fullmatch(token) or _DATED_FILE.fullmatch(token):
        return None
    size = utf16_len(token)
    if size < _min_length(classify_concept_tag_script(token)) and token not in PROTECTED_GLOSSARY:
        return None
    if size < 3 and _KANA.search(token) and not _HAN.search(token) and not _HANGUL.search(token):
        return None
    return None if token in CONCEPT_STOP_WORDS else token


_icu_state = threading.local()

# ICU 72's root word rules (CLDR 42) count "@" as a letter ("a@b" is one word) and take the colons out of MidLetter
# ("a:b" is two); later ICU, as in OpenClaw's Node, undid both. Removing the two tailorings from the rules makes ICU 72
# split as ICU 78 does (checked on 28,000 strings against Node's Intl.Segmenter, CJK dictionary splits included).
_ICU72_TAILORINGS = (
    (r"$ALetter=[\p{Word_Break=ALetter}@];", r"$ALetter=[\p{Word_Break=ALetter}];"),
    (r"$MidLetter=[\p{Word_Break=MidLetter}-[\:\uFE55\uFF1A]];", r"$MidLetter=[\p{Word_Break=MidLetter}];"),
)


def _icu_word_iterator() -> Any | None:
    # One ICU word break iterator per thread (an iterator holds its text), or None without PyICU.
    if not hasattr(_icu_state, "iterator"):
        try:
            import icu
        except ImportError:
            _icu_state.iterator = None
        else:
            iterator = icu.BreakIterator.createWordInstance(icu.Locale.getRoot())
            rules = original = iterator.getRules()
            for tailored, plain in _ICU72_TAILORINGS:
                rules = rules.replace(tailored, plain)
            _icu_state.iterator = iterator if rules == original else icu.RuleBasedBreakIterator(rules)
    return _icu_state.iterator


def word_segments(source: str) -> list[str]:
    """Return the word-like segments of ``source``: ICU root-locale word breaks, else runs of letters and digits.

    A segment is word-like when its rule status is at least 100 (``UBRK_WORD_NONE_LIMIT``): a number, a word, kana
    or ideographs, as ``Intl.Segmenter``'s ``isWordLike`` says.
    """
    iterator = _icu_word_iterator()
    if iterator is None:
        return [part for part in _NOT_LETTER_OR_DIGIT_RUN.split(source) if part]
    import icu

    text = icu.UnicodeString(source)  # ICU's offsets are UTF-16 units: slice its own string
    iterator.setText(text)
    segments: list[str] = []
    start = iterator.first()
    for end in iterator:
        if iterator.getRuleStatus() >= 100:
            segments.append(str(text[start:end]))
        start = end
    return segments


def _basename(path: str) -> str:
    # Node's posix ``path.basename``: the last segment, trailing slashes ignored.
    trimmed = path.rstrip("/")
    return trimmed.rsplit("/", 1)[-1] if trimmed else ""


def _glossary_matches(source: str) -> list[str]:
    text = _lower(unicodedata.normalize("NFKC", source))
    return [term for term, whole in _GLOSSARY_MATCHERS if (whole.search(text) if whole else term in text)]


def derive_concept_tags(path: str, snippet: str, *, limit: int = MAX_CONCEPT_TAGS) -> list[str]:
    """Return up to ``limit`` distinct concept tags for a recall of ``snippet`` in the note at ``path``.

    The note's file name counts as text too; a dated name (``2026-04-03.md``) yields nothing.
    """
    source = f"{_basename(path)} {_HTML_COMMENT.sub(' ', snippet)}"
    if limit <= 0:
        return []
    tags: list[str] = []
    for stream in (_glossary_matches, _COMPOUND.findall, word_segments):
        for raw in stream(source):
            token = normalize_concept_token(raw)
            if token is None or token in tags:
                continue
            tags.append(token)
            if len(tags) >= limit:
                return tags
    return tags
