"""Read normalization: the recall store as OpenClaw 2026.9.6 reads it, and why each entry it leaves out is left out."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dreaming.memory.recall import _normalize as normalize
from dreaming.memory.recall._js import locale_compare_key
from dreaming.memory.recall._normalize import (
    DROP_CONTAMINATED,
    DROP_NOT_AN_INTEGER_LINE,
    DROP_NOT_MEMORY,
    DROP_OVER_CAP,
    DroppedEntry,
    js_object_order,
    normalize_phase_signals,
    normalize_recall_store,
)

from .helpers import at

NOW = at("2026-04-05T00:00:00")

STORED = json.loads(
    r"""
{
  "10": {"path": "memory/2026-04-02.md", "startLine": "3", "endLine": 3.0, "source": "memory", "snippet": "  Gateway\u00a0binds\n\tloopback  ", "recallCount": "2", "dailyCount": -1, "groundedCount": 1.9, "totalScore": "1.5", "maxScore": 1.7, "queryHashes": [" a ", "a", "", 7, "b"], "recallDays": ["2026-04-01T23:00:00Z", "2026-04-01", "x", " 2026-04-03"], "conceptTags": [" Router ", "router", "", 5, "VLAN"], "provenance": {"originClass": "root", "sessionKind": "cron", "supersedesKey": "  old  "}, "claimHash": "  abc  ", "projectKey": "Acme/Repo; acme/Repo ;path:X/Y; a<b", "promotedAt": "", "lastRecalledAt": "2026-04-03T10:00:00.000Z", "futureField": 1},
  "2": {"path": ".\\memory\\2026-04-01.md", "startLine": 1, "endLine": 1, "source": "memory", "snippet": "Daily and grounded only", "dailyCount": 2, "queryHashes": ["q1"]},
  "memory:memory/2026-04-01.md:5:5": {"path": "./memory/2026-04-01.md", "startLine": 5, "endLine": 5, "source": "memory", "snippet": "Recall only, old entry", "recallCount": 3, "queryHashes": ["q1", "q2", "q3"], "provenance": []},
  "memory:memory/2026-04-01.md:6:6": {"path": "memory/2026-04-01.md", "startLine": 6, "endLine": 6, "source": "memory", "snippet": "Stored empty lists", "recallCount": 3, "queryHashes": ["q1"], "userQueryHashes": [], "conceptTags": []},
  "lines-null": {"path": "memory/2026-04-01.md", "startLine": null, "endLine": [7], "source": "memory", "snippet": "null is zero"},
  "lines-float": {"path": "memory/2026-04-01.md", "startLine": 1.5, "endLine": 2, "source": "memory", "snippet": "x"},
  "no-source": {"path": "memory/2026-04-01.md", "startLine": 1, "endLine": 1, "snippet": "x"},
  "contaminated": {"path": "memory/2026-04-01.md", "startLine": 1, "endLine": 1, "source": "memory", "snippet": "User: hello there"},
  "corpus-turn": {"path": "memory/.dreams/session-corpus/2026-04-01.txt", "startLine": 1, "endLine": 1, "source": "memory", "snippet": "User: hello there"},
  "": {"path": "memory/2026-04-04.md", "startLine": 2, "endLine": 4, "source": "memory", "snippet": "blank key", "claimHash": "ff"}
}
"""
)
# What OpenClaw 2026.9.6's normalizeShortTermRecallStore and its cap returned for it (Node 24, now 2026-04-05).
READ_BY_OPENCLAW = json.loads(
    r"""
{
  "2": {"key": "2", "path": "memory/2026-04-01.md", "startLine": 1, "endLine": 1, "source": "memory", "snippet": "Daily and grounded only", "recallCount": 0, "dailyCount": 2, "groundedCount": 0, "totalScore": 0, "maxScore": 0, "firstRecalledAt": "2026-04-05T00:00:00.000Z", "lastRecalledAt": "2026-04-05T00:00:00.000Z", "queryHashes": ["q1"], "recallDays": [], "conceptTags": ["grounded", "only"]},
  "10": {"key": "10", "path": "memory/2026-04-02.md", "startLine": 3, "endLine": 3, "source": "memory", "snippet": "Gateway binds loopback", "recallCount": 2, "dailyCount": 0, "groundedCount": 1, "totalScore": 1.5, "maxScore": 1, "firstRecalledAt": "2026-04-05T00:00:00.000Z", "lastRecalledAt": "2026-04-03T10:00:00.000Z", "queryHashes": ["a", "b"], "recallDays": ["2026-04-01", "2026-04-01", "2026-04-03"], "conceptTags": ["router", "vlan"], "provenance": {"originClass": "untrusted", "sessionKind": "cron", "observedAt": 1775210400000, "supersedesKey": "old"}, "claimHash": "abc", "projectKey": "acme/Repo; path:X/Y"},
  "memory:memory/2026-04-01.md:5:5": {"key": "memory:memory/2026-04-01.md:5:5", "path": "memory/2026-04-01.md", "startLine": 5, "endLine": 5, "source": "memory", "snippet": "Recall only, old entry", "recallCount": 3, "dailyCount": 0, "groundedCount": 0, "totalScore": 0, "maxScore": 0, "firstRecalledAt": "2026-04-05T00:00:00.000Z", "lastRecalledAt": "2026-04-05T00:00:00.000Z", "queryHashes": ["q1", "q2", "q3"], "userQueryHashes": ["q1", "q2", "q3"], "recallDays": [], "conceptTags": ["recall", "only", "old", "entry"], "provenance": {"originClass": "untrusted", "sessionKind": "unknown", "observedAt": 1775347200000}},
  "memory:memory/2026-04-01.md:6:6": {"key": "memory:memory/2026-04-01.md:6:6", "path": "memory/2026-04-01.md", "startLine": 6, "endLine": 6, "source": "memory", "snippet": "Stored empty lists", "recallCount": 3, "dailyCount": 0, "groundedCount": 0, "totalScore": 0, "maxScore": 0, "firstRecalledAt": "2026-04-05T00:00:00.000Z", "lastRecalledAt": "2026-04-05T00:00:00.000Z", "queryHashes": ["q1"], "userQueryHashes": [], "recallDays": [], "conceptTags": []},
  "lines-null": {"key": "lines-null", "path": "memory/2026-04-01.md", "startLine": 0, "endLine": 7, "source": "memory", "snippet": "null is zero", "recallCount": 0, "dailyCount": 0, "groundedCount": 0, "totalScore": 0, "maxScore": 0, "firstRecalledAt": "2026-04-05T00:00:00.000Z", "lastRecalledAt": "2026-04-05T00:00:00.000Z", "queryHashes": [], "userQueryHashes": [], "recallDays": [], "conceptTags": ["null", "zero"]},
  "corpus-turn": {"key": "corpus-turn", "path": "memory/.dreams/session-corpus/2026-04-01.txt", "startLine": 1, "endLine": 1, "source": "memory", "snippet": "User: hello there", "recallCount": 0, "dailyCount": 0, "groundedCount": 0, "totalScore": 0, "maxScore": 0, "firstRecalledAt": "2026-04-05T00:00:00.000Z", "lastRecalledAt": "2026-04-05T00:00:00.000Z", "queryHashes": [], "userQueryHashes": [], "recallDays": [], "conceptTags": ["hello"]},
  "memory:memory/2026-04-04.md:2:4:ff": {"key": "memory:memory/2026-04-04.md:2:4:ff", "path": "memory/2026-04-04.md", "startLine": 2, "endLine": 4, "source": "memory", "snippet": "blank key", "recallCount": 0, "dailyCount": 0, "groundedCount": 0, "totalScore": 0, "maxScore": 0, "firstRecalledAt": "2026-04-05T00:00:00.000Z", "lastRecalledAt": "2026-04-05T00:00:00.000Z", "queryHashes": [], "userQueryHashes": [], "recallDays": [], "conceptTags": ["blank", "key"], "claimHash": "ff"}
}
"""
)


def _entry(**fields: Any) -> dict[str, Any]:
    base = {"path": "memory/2026-04-01.md", "startLine": 1, "endLine": 1, "source": "memory", "snippet": "Fact."}
    return {**base, **fields}


def test_reads_a_store_exactly_as_openclaw_does() -> None:
    read = normalize_recall_store(STORED, now=NOW)
    without_unknown = {k: {f: v for f, v in e.items() if f != "futureField"} for k, e in read.entries.items()}
    assert list(without_unknown) == list(READ_BY_OPENCLAW)  # array-index keys first, as a JS object orders them
    assert without_unknown == READ_BY_OPENCLAW
    assert read.dropped == (
        DroppedEntry(key="lines-float", reason=DROP_NOT_AN_INTEGER_LINE),
        DroppedEntry(key="no-source", reason=DROP_NOT_MEMORY),
        DroppedEntry(key="contaminated", reason=DROP_CONTAMINATED),
    )


def test_unknown_fields_are_kept_after_the_known_ones() -> None:
    entry = normalize_recall_store(STORED, now=NOW).entries["10"]
    assert entry["futureField"] == 1 and list(entry)[-1] == "futureField"
    assert "promotedAt" not in entry  # a blank promotedAt is dropped, not kept as unknown


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"dailyCount": 0, "groundedCount": 0}, ["a", "b"]),  # recalls only: the old queries were user queries
        ({"dailyCount": 1, "groundedCount": 0}, None),  # ingestion mixed in: unknown, so absent
        ({"dailyCount": 0, "groundedCount": 2}, None),
        ({"dailyCount": 1, "userQueryHashes": []}, []),  # a stored [] stays []
        ({"dailyCount": 0, "userQueryHashes": []}, []),
        ({"dailyCount": 1, "userQueryHashes": ["b", " b ", ""]}, ["b"]),
    ],
)
def test_user_query_hashes_fallback(fields: dict[str, Any], expected: list[str] | None) -> None:
    stored = {"k": _entry(recallCount=2, queryHashes=["a", "b"], **fields)}
    (entry,) = normalize_recall_store(stored, now=NOW).entries.values()
    assert entry.get("userQueryHashes") == expected


def test_hash_lists_keep_their_first_32_distinct() -> None:
    hashes = [f"h{i}" for i in range(40)]
    (entry,) = normalize_recall_store({"k": _entry(queryHashes=["h0", *hashes])}, now=NOW).entries.values()
    assert entry["queryHashes"] == hashes[:32] and entry["userQueryHashes"] == hashes[:32]


def test_recall_days_keep_duplicates_and_the_last_16() -> None:
    days = ["2026-04-01", "2026-04-01T22:00:00.000Z", *(f"2026-03-{d:02d}" for d in range(1, 20))]
    (entry,) = normalize_recall_store({"k": _entry(recallDays=days)}, now=NOW).entries.values()
    assert entry["recallDays"] == [f"2026-03-{d:02d}" for d in range(4, 20)]
    (short,) = normalize_recall_store({"k": _entry(recallDays=days[:2])}, now=NOW).entries.values()
    assert short["recallDays"] == ["2026-04-01", "2026-04-01"]


def test_stored_concept_tags_are_kept_and_missing_ones_derived_from_the_full_snippet() -> None:
    long = "word " * 170 + "router vlan"  # the tags' words lie past the 800-unit cut
    stored = {"kept": _entry(conceptTags=[]), "derived": _entry(snippet=long, startLine=2, endLine=2)}
    read = normalize_recall_store(stored, now=NOW).entries
    assert read["kept"]["conceptTags"] == []
    assert read["derived"]["conceptTags"] == ["router", "vlan", "word"]
    assert "router" not in read["derived"]["snippet"]


def test_snippet_is_cut_at_800_utf16_units_without_splitting_a_pair() -> None:
    snippet = "a" * 799 + "😀tail"
    (entry,) = normalize_recall_store({"k": _entry(snippet=snippet)}, now=NOW).entries.values()
    assert entry["snippet"] == "a" * 799
    spaced = "a" * 795 + "     bcdef"  # collapsed to one space first: 801 units, cut after "bcde"
    (cut,) = normalize_recall_store({"k": _entry(snippet=spaced)}, now=NOW).entries.values()
    assert cut["snippet"] == "a" * 795 + " bcde"
    trailing = "a" * 799 + " b"
    (trimmed,) = normalize_recall_store({"k": _entry(snippet=trailing)}, now=NOW).entries.values()
    assert trimmed["snippet"] == "a" * 799


def test_session_corpus_turns_are_kept_and_daily_note_turns_dropped() -> None:
    corpus = _entry(path="memory/.dreams/session-corpus/2026-04-01.txt", snippet="User: hi")
    read = normalize_recall_store({"corpus": corpus, "note": _entry(snippet="User: hi")}, now=NOW)
    assert list(read.entries) == ["corpus"]
    assert read.dropped == (DroppedEntry(key="note", reason=DROP_CONTAMINATED),)


def test_js_object_order() -> None:
    assert js_object_order(["b", "10", "a", "2", "01", "4294967295", "0"]) == [
        "0", "2", "10", "b", "a", "01", "4294967295",
    ]  # fmt: skip


# --- the 512 cap ----------------------------------------------------------------------------------------------------


def _capped_store() -> dict[str, Any]:
    # 515 entries: 3 must go. Keys are mixed-case so code-point order and localeCompare disagree.
    store: dict[str, Any] = {}
    for i in range(508):
        store[f"memory:memory/2026-04-01.md:{i + 10}:{i + 10}"] = _entry(
            startLine=i + 10, endLine=i + 10, recallCount=1, totalScore=0.5, lastRecalledAt="2026-04-03T00:00:00.000Z"
        )
    tie = {"recallCount": 1, "totalScore": 0.5, "lastRecalledAt": "2026-04-02T00:00:00.000Z"}
    store["Tie-B"] = _entry(startLine=1, endLine=1, **tie)
    store["tie-a"] = _entry(startLine=2, endLine=2, **tie)
    store["tie-c"] = _entry(startLine=3, endLine=3, **tie)
    store["tie-promoted"] = _entry(startLine=4, endLine=4, promotedAt="2026-04-02T00:00:00.000Z", **tie)
    store["tie-max"] = _entry(startLine=5, endLine=5, maxScore=0.9, **tie)
    # Only ingestion signals, but the newest: OpenClaw keeps it and evicts a real recall (#150635).
    store["ingested"] = _entry(startLine=6, endLine=6, dailyCount=1, lastRecalledAt="2026-04-04T00:00:00.000Z")
    store["bad-date"] = _entry(startLine=7, endLine=7, recallCount=9, totalScore=9, lastRecalledAt="not-a-date")
    return store


def test_cap_keeps_512_in_openclaws_order_then_sorts_them_by_locale_compare() -> None:
    store = _capped_store()
    read = normalize_recall_store(store, now=NOW)
    # Unparsable last; then, among equal dates, signals, total, max score, promotion, and key by localeCompare:
    # "tie-a" < "Tie-B" < "tie-c", so the two evicted ties are "Tie-B" and "tie-c" (code points would keep "Tie-B").
    assert [(d.key, d.reason) for d in read.dropped] == [
        ("Tie-B", DROP_OVER_CAP), ("tie-c", DROP_OVER_CAP), ("bad-date", DROP_OVER_CAP),
    ]  # fmt: skip
    assert len(read.entries) == 512 and "ingested" in read.entries
    keys = list(read.entries)
    assert keys[:3] == ["ingested", "memory:memory/2026-04-01.md:10:10", "memory:memory/2026-04-01.md:100:100"]
    assert keys[-3:] == ["tie-a", "tie-max", "tie-promoted"]


def test_cap_without_compat_keeps_real_recalls_first() -> None:
    read = normalize_recall_store(_capped_store(), now=NOW, openclaw_compat=False)
    assert [d.key for d in read.dropped] == ["tie-c", "bad-date", "ingested"]
    assert "Tie-B" in read.entries


def test_at_or_under_the_cap_nothing_moves() -> None:
    stored = {"b": _entry(startLine=2, endLine=2), "a": _entry()}
    assert list(normalize_recall_store(stored, now=NOW).entries) == ["b", "a"]


def test_phase_signals_are_read_as_openclaw_reads_them() -> None:
    raw = {
        "k1": {
            "key": "k1",
            "lightHits": "2",
            "remHits": -3,
            "lastLightAt": "2026-04-01T00:00:00.000Z",
            "lastRemAt": " ",
        },
        "k2": {"lightHits": 0, "remHits": 0},
        "k3": {"key": "  ", "remHits": 1.9},
        "k4": [1],
    }
    assert normalize_phase_signals(raw) == {
        "k1": {"key": "k1", "lightHits": 2, "remHits": 0, "lastLightAt": "2026-04-01T00:00:00.000Z"},
        "k3": {"key": "k3", "lightHits": 0, "remHits": 1},
    }


def _retention_key_as_the_normalizer_reads(key: str, entry: dict[str, Any], now_iso: str) -> tuple[Any, ...]:
    """The retention order through the normalizer's own coercions, field by field (no shortcut for plain values)."""
    signals = sum(normalize._count(entry, name) for name in ("recallCount", "dailyCount", "groundedCount"))
    max_score = normalize._score(entry, "maxScore")
    last = entry.get("lastRecalledAt")
    return (
        -normalize._timestamp(last if isinstance(last, str) else now_iso),
        -signals,
        -max(0, normalize._score(entry, "totalScore")),
        -(min(1, max(0, max_score)) if math.isfinite(max_score) else 0),
        -normalize._timestamp(entry.get("promotedAt")),
        locale_compare_key(key),
    )


_STORED_NUMBERS = st.one_of(
    st.integers(-3, 3), st.floats(allow_nan=True), st.sampled_from(["2", " 1.5 ", "x", "", "0x10", True, None, [1]])
)


@settings(max_examples=300, derandomize=True, database=None)
@given(
    st.dictionaries(
        st.sampled_from(["recallCount", "dailyCount", "groundedCount", "totalScore", "maxScore"]), _STORED_NUMBERS
    ),
    st.sampled_from([None, "2026-04-01T00:00:00.000Z", "soon", 5]),
)
def test_the_cap_reads_counts_and_scores_as_the_normalizer_does(fields: dict[str, Any], last: object) -> None:
    entry = {**fields, "lastRecalledAt": last}
    got = normalize._retention_key("k", entry, "2026-04-05T00:00:00.000Z")
    assert got == _retention_key_as_the_normalizer_reads("k", entry, "2026-04-05T00:00:00.000Z")
