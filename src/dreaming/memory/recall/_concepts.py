"""Concept tags: the salient words of a recall, used for the conceptual signal and REM themes.

Latin words are lower-cased, stop words and short or numeric tokens dropped, and a plural also yields its singular.
CJK text is split at script changes and common particles; a four-character Han compound also yields its two halves.
At most eight tags are kept, compounds before their parts.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["MAX_CONCEPT_TAGS", "derive_concept_tags", "script_of"]

MAX_CONCEPT_TAGS = 8

_STOP = frozenset(
    """
    a about above after again against all also am an and any are as at be because been before being below between
    both but by can could did do does doing done down during each few for from further had has have having he her
    here hers him his how i if in into is it its itself just like made make me more most move moved my no nor not
    now of off on once only or other our out over own same she should so some such than that the their them then
    there these they this those through to too under until up very was we were what when where which while who whom
    why will with would you your yours
    md memory memories note notes daily today yesterday tomorrow use used using via per new old get got set
    thing things stuff item items entry entries line lines file files
    """.split()  # noqa: SIM905
)
_CJK_STOP = frozenset({"設定", "确认", "確認", "设置", "同步", "问题", "問題", "今日", "今天"})
_WORD = re.compile(r"[^\W\d_][\w'-]*", re.UNICODE)
_CJK_SPLIT = re.compile(r"[とのをはがにでへもや与和的及、。，！？・\s]+")


def script_of(char: str) -> str:
    """Return ``han``, ``kana``, ``hangul``, ``latin`` or ``other`` for one character."""
    name = unicodedata.name(char, "")
    if name.startswith("CJK UNIFIED") or name.startswith("CJK COMPATIBILITY IDEOGRAPH"):
        return "han"
    if name.startswith(("KATAKANA", "HIRAGANA")) or char == "ー":
        return "kana"
    if name.startswith("HANGUL"):
        return "hangul"
    if name.startswith("LATIN") or (char.isascii() and char.isalpha()):
        return "latin"
    return "other"


def _latin_tags(text: str) -> list[str]:
    tags: list[str] = []
    for match in _WORD.finditer(text):
        word = match.group(0).strip("'-").lower()
        if any(script_of(c) in {"han", "kana", "hangul"} for c in word):
            continue
        if len(word) < 3 or word in _STOP:
            continue
        if len(word) > 4 and word.endswith("s") and not word.endswith("ss") and word[:-1] not in _STOP:
            tags.append(word[:-1])
        tags.append(word)
    return tags


def _cjk_runs(text: str) -> list[str]:
    runs: list[str] = []
    for piece in _CJK_SPLIT.split(text):
        current = ""
        kind = ""
        for char in piece:
            script = script_of(char)
            if script not in {"han", "kana", "hangul"}:
                script = ""
            if script != kind and current:
                if kind:
                    runs.append(current)
                current = ""
            kind = script
            current += char
        if current and kind:
            runs.append(current)
    return runs


def _cjk_tags(text: str) -> tuple[list[str], list[str]]:
    compounds: list[str] = []
    parts: list[str] = []
    for run in _cjk_runs(text):
        if len(run) < 2 or run in _CJK_STOP:
            continue
        compounds.append(run)
        if len(run) == 4 and all(script_of(c) == "han" for c in run):
            parts.extend([run[:2], run[2:]])
    return compounds, parts


def derive_concept_tags(path: str, snippet: str) -> list[str]:
    """Return up to eight distinct concept tags for a recall of ``snippet`` in ``path``.

    Path words count too (``memory/projects/router/2026-04-01.md`` yields ``projects``, ``router``); dates do not.
    """
    folder = path.replace("\\", "/").rsplit("/", 1)[0] if "/" in path else ""
    text = f"{folder.replace('/', ' ')} {snippet}"
    compounds, parts = _cjk_tags(text)
    ordered = compounds + _latin_tags(text) + parts
    seen: set[str] = set()
    tags: list[str] = []
    for tag in ordered:
        if tag not in seen:
            seen.add(tag)
            tags.append(tag)
        if len(tags) == MAX_CONCEPT_TAGS:
            break
    return tags
