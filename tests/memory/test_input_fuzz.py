"""Property-based fuzzing of every input parser (issue 9): bad bytes and bad text are reported, never raised.

Each parser gets arbitrary bytes, and mutations of a valid file (a stray byte, an encoded or escaped surrogate, a
torn line): it must return normally (or raise only its documented error), every string it hands on must be
writable as UTF-8, and the valid lines next to a bad one must survive. Deterministic: derandomized, no database.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dreaming.config import DreamingConfig, load_config
from dreaming.errors import ConfigError
from dreaming.memory import DiaryEntry, InputReport, Workspace, append_diary_entry, iter_jsonl, read_state
from dreaming.memory._decode import decode_keeping_bytes, encode_keeping_bytes, read_user_text
from dreaming.memory.gaps import list_gaps
from dreaming.memory.insights import Scalar, read_insight, write_insight, write_memory_index
from dreaming.memory.recall import chunk_daily_note
from dreaming.memory.recall._phase_signals import read_phase_signals
from dreaming.memory.recall._store import read_store, render_store
from dreaming.memory.research import read_research_insights
from dreaming.memory.search._chunks import chunk_markdown
from dreaming.memory.verdicts._light import read_reviewed_lines
from dreaming.memory.verdicts._prices import load_prices
from dreaming.memory.verdicts._rem import read_signal_lines
from dreaming.memory.verdicts._stream import VerdictLine, VerdictLines, read_objects

NOW = datetime(2026, 9, 1, 3, tzinfo=UTC)
TODAY = NOW.date()

FUZZ = settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# Bytes a corrupted or foreign file is likely to hold: invalid UTF-8 lead and continuation bytes, an encoded
# surrogate, an overlong encoding, a BOM, NUL, Latin-1 text, escaped lone surrogates, CR and quotes.
NASTY = [
    b"\xff",
    b"\xfe",
    b"\x80",
    b"\xc3",
    b"\xed\xa0\x80",
    b"\xc0\xaf",
    b"\xef\xbb\xbf",
    b"\x00",
    b"caf\xe9",
    b"\\ud800",
    b"\\udfff",
    b"\r",
    b'"',
    b"\n",
    b",",
    b"[" * 5000,
]


def mutated(valid: bytes) -> st.SearchStrategy[bytes]:
    """Insert or overwrite a few nasty (or arbitrary) byte runs at arbitrary places of a valid file."""
    piece = st.one_of(st.sampled_from(NASTY), st.binary(min_size=1, max_size=8))

    @st.composite
    def build(draw: st.DrawFn) -> bytes:
        data = bytearray(valid)
        for _ in range(draw(st.integers(1, 4))):
            at = draw(st.integers(0, len(data)))
            chunk = draw(piece)
            if draw(st.booleans()):
                data[at:at] = chunk
            else:
                data[at : at + len(chunk)] = chunk
        return bytes(data)

    return build()


def inputs(valid: bytes) -> st.SearchStrategy[bytes]:
    """Arbitrary bytes, arbitrary text, or a mutation of ``valid``."""
    return st.one_of(
        st.binary(max_size=2000),
        st.text(max_size=500).map(lambda t: t.encode("utf-8", "surrogatepass")),
        mutated(valid),
    )


@contextmanager
def workspace() -> Iterator[Workspace]:
    with tempfile.TemporaryDirectory() as folder:
        ws = Workspace(Path(folder))
        ws.state_dir.mkdir(parents=True)
        yield ws


def writable(value: Any) -> None:
    """Every string a parser hands on must be writable as UTF-8 (a lone surrogate would fail a later write)."""
    json.dumps(value, ensure_ascii=False, default=str).encode("utf-8")


def assert_lines_in_range(report: InputReport, data: bytes) -> None:
    last = data.count(b"\n") + 1
    for bad in report.bad:
        assert 0 <= bad.line <= last, bad
        assert bad.describe().encode("utf-8")


# --- price CSVs --------------------------------------------------------------------------------------------------

PRICE_ROWS = [f"2026-01-{day:02d},{100 + day}.5" for day in range(5, 25)]
VALID_PRICES = ("date,close\n" + "\n".join(PRICE_ROWS) + "\n").encode()


@FUZZ
@given(inputs(VALID_PRICES))
def test_price_parser_never_raises(data: bytes) -> None:
    with workspace() as ws:
        path = ws.root / "X.csv"
        path.write_bytes(data)
        report = InputReport()
        series = load_prices(path, report)
        assert series is None or len(series.ordinals) == len(series.closes)
        assert_lines_in_range(report, data)


@FUZZ
@given(st.integers(0, len(PRICE_ROWS) - 1), st.sampled_from(NASTY[:9]), st.integers(0, 10))
def test_a_bad_byte_in_one_price_row_skips_that_row_only(row: int, nasty: bytes, at: int) -> None:
    lines = VALID_PRICES.split(b"\n")
    text = lines[row + 1]
    lines[row + 1] = text[:at] + nasty + text[at:]
    data = b"\n".join(lines)
    with workspace() as ws:
        path = ws.root / "X.csv"
        path.write_bytes(data)
        report = InputReport()
        series = load_prices(path, report)
        assert series is not None
        assert len(series.ordinals) == len(PRICE_ROWS) - report.count  # the other rows survive
        assert report.count <= 1
        if nasty not in (b"\x00", b"\xef\xbb\xbf"):  # valid UTF-8, caught as a bad date or close instead
            assert [b.describe() for b in report.bad] == [f"X.csv:{row + 2}: not UTF-8"]


# --- JSONL (verdicts, verdict review and signals, events, research log) -------------------------------------------

ROWS = [{"decision_date": f"2026-03-{day:02d}", "asset": "NDQ", "verdict": "BUY"} for day in range(2, 22)]
VALID_JSONL = "".join(json.dumps(r) + "\n" for r in ROWS).encode()


def _typed(path: Path, report: InputReport) -> Iterator[tuple[int, dict[str, Any]]]:
    """The review's typed reader, each line as the dict json reads from it."""
    for number, line in VerdictLines(path, report, "x.jsonl", end=path.stat().st_size):
        yield number, _as_dict(line) if isinstance(line, VerdictLine) else line


def _as_dict(line: VerdictLine) -> dict[str, Any]:
    return {k: v for k in line.__struct_fields__ if (v := getattr(line, k)) is not msgspec.UNSET}


def _readers(path: Path) -> list[Callable[[InputReport], Iterator[tuple[int, dict[str, Any]]]]]:
    return [lambda r: iter_jsonl(path, r), lambda r: read_objects(path, r, "x.jsonl"), lambda r: _typed(path, r)]


@FUZZ
@given(inputs(VALID_JSONL))
def test_jsonl_readers_never_raise_and_hand_on_writable_objects(data: bytes) -> None:
    with workspace() as ws:
        path = ws.state_dir / "x.jsonl"
        path.write_bytes(data)
        for read in _readers(path):
            report = InputReport()
            rows = list(read(report))
            writable([obj for _, obj in rows])
            assert_lines_in_range(report, data)


@FUZZ
@given(st.integers(0, len(ROWS) - 1), st.sampled_from(NASTY[:10]))
def test_a_bad_jsonl_line_skips_that_line_only(row: int, nasty: bytes) -> None:
    lines = VALID_JSONL.split(b"\n")
    lines[row] = lines[row].replace(b"NDQ", b"N" + nasty + b"Q")
    data = b"\n".join(lines)
    with workspace() as ws:
        path = ws.state_dir / "x.jsonl"
        path.write_bytes(data)
        for read in _readers(path):
            report = InputReport()
            numbers = [n for n, _ in read(report)]
            assert set(numbers) >= set(range(1, len(ROWS) + 1)) - {row + 1}  # the other rows survive
            assert numbers.count(row + 1) + report.count == 1  # the touched row is read or reported, once


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
VERDICT_FIELDS = st.fixed_dictionaries(
    {},
    optional={
        "decision_date": st.one_of(st.sampled_from(["2026-03-02", "2030-01-01", "3/2/2026", ""]), JSON_VALUES),
        "asset": st.one_of(st.just("NDQ"), JSON_VALUES),
        "verdict": st.one_of(st.sampled_from(["BUY", "SELL", "HOLD", "PANIC"]), JSON_VALUES),
        "regime": st.one_of(st.sampled_from(["uptrend", "downtrend", "range_bound", "unknown"]), JSON_VALUES),
        "outcomes": st.one_of(st.dictionaries(st.sampled_from(["7d", "30d", "90d", "x"]), JSON_VALUES), JSON_VALUES),
        "atr_pct": JSON_VALUES,
        "shock": JSON_VALUES,
    },
)


@FUZZ
@given(st.lists(VERDICT_FIELDS, max_size=8), st.lists(st.sampled_from(NASTY), max_size=2), st.randoms())
def test_the_typed_verdict_reader_reads_and_reports_exactly_as_json_does(
    rows: list[dict[str, Any]], nasty: list[bytes], rnd: Any
) -> None:
    lines = [json.dumps(r, allow_nan=True).encode() for r in rows] + [
        b'{"decision_date": "2026-03-02", "asset": "N' + n + b'", "verdict": "BUY", "role": "x"}' for n in nasty
    ]
    rnd.shuffle(lines)
    data = b"\n".join(lines) + rnd.choice([b"", b"\n"])
    with workspace() as ws:
        path = ws.state_dir / "x.jsonl"
        path.write_bytes(data)
        plain, typed = InputReport(), InputReport()
        expected = list(read_objects(path, plain, "x.jsonl"))
        # Read in two parts, the way an incremental night does: the second starts where a line starts.
        cut = data.find(b"\n", len(data) // 2) + 1 or len(data)
        first = VerdictLines(path, typed, "x.jsonl", end=cut)
        got = [(n, _as_dict(x) if isinstance(x, VerdictLine) else x) for n, x in first]
        rest = VerdictLines(path, typed, "x.jsonl", start=cut, end=len(data), first_number=first.numbered + 1)
        got += [(n, _as_dict(x) if isinstance(x, VerdictLine) else x) for n, x in rest]
        for _, obj in got + expected:  # the review reads an absent macro_shock as false, as a typed line holds it
            obj.setdefault("macro_shock", False)
        assert got == expected
        types = [[(k, type(v)) for k, v in sorted(obj.items())] for _, obj in got]  # 1 and True are equal
        assert types == [[(k, type(v)) for k, v in sorted(obj.items())] for _, obj in expected]
        assert typed == plain


@FUZZ
@given(st.lists(VERDICT_FIELDS, max_size=8))
def test_verdict_line_checks_never_raise_on_any_field_values(rows: list[dict[str, Any]]) -> None:
    data = "".join(json.dumps(r, allow_nan=True) + "\n" for r in rows).encode()
    with workspace() as ws:
        path = ws.state_dir / "x.jsonl"
        path.write_bytes(data)
        report = InputReport()
        read_reviewed_lines(path, report, "review", TODAY)
        read_signal_lines(path, report, "signals", TODAY)
        assert_lines_in_range(report, data)


# --- versioned JSON state (recall store, phase signals, gaps, candidates, ...) ------------------------------------

VALID_STORE = json.dumps(
    {"version": 1, "updatedAt": "2026-08-30T00:00:00Z", "entries": {"k": {"path": "memory/2026-08-30.md"}}}
).encode()
VALID_GAPS = json.dumps({"version": 1, "gaps": {"q": {"query": "q", "count": 1}}}).encode()


@FUZZ
@given(inputs(VALID_STORE))
def test_state_readers_never_raise_and_what_they_read_can_be_written(data: bytes) -> None:
    with workspace() as ws:
        path = ws.state_dir / "state.json"
        path.write_bytes(data)
        loaded = read_state(path, versions=(1,), now=NOW)
        assert (loaded.data is None) == (loaded.problem is not None) or not path.exists()
        writable(loaded.data)
        ws.recall_store.write_bytes(data)
        store = read_store(ws, now=NOW, move_unreadable=True)
        render_store(store, updated_at="2026-09-01T03:00:00.000Z")
        ws.phase_signals.write_bytes(data)
        writable(read_phase_signals(ws))


@FUZZ
@given(inputs(VALID_GAPS))
def test_gap_store_never_raises(data: bytes) -> None:
    with workspace() as ws:
        ws.knowledge_gaps.write_bytes(data)
        writable([g.to_json() for g in list_gaps(ws, now=NOW)])


# --- user text: notes, MEMORY.md, DREAMS.md -------------------------------------------------------------------------

VALID_NOTE = "# Notes\n\nThe café opens at nine.\n\n- a list\n- of things\n\n```\ncode\n```\n".encode()


@FUZZ
@given(inputs(VALID_NOTE))
def test_notes_are_read_and_chunked_whatever_their_bytes(data: bytes) -> None:
    with workspace() as ws:
        path = ws.memory_dir / "2026-08-31.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        text, bad = read_user_text(path)
        text.encode("utf-8")  # what a note hands on is always writable
        assert bad == sorted(set(bad)) and all(n >= 1 for n in bad)
        writable([c.snippet for c in chunk_daily_note(text)])
        writable([c.text for c in chunk_markdown(text)])
        assert path.read_bytes() == data  # a note is never rewritten


@FUZZ
@given(st.binary(max_size=2000))
def test_undecodable_bytes_round_trip_exactly(data: bytes) -> None:
    assert encode_keeping_bytes(decode_keeping_bytes(data)) == data


@FUZZ
@given(inputs(b"# My memory\n\nKeep this line.\n"))
def test_memory_md_user_bytes_survive_the_managed_block(data: bytes) -> None:
    with workspace() as ws:
        ws.memory_md.write_bytes(data)
        ws.insights_dir.mkdir(parents=True, exist_ok=True)
        front: dict[str, Scalar] = {"id": "reliable-buy-ndq-uptrend-7d", "kind": "reliable", "status": "active"}
        write_insight(ws.insights_dir / "reliable-buy-ndq-uptrend-7d.md", front, "# Reliable\n")
        write_memory_index(ws)
        after = ws.memory_md.read_bytes()
        if b"<!-- dreaming:insights:" not in data:
            assert after.startswith(data)


@FUZZ
@given(inputs(b"# Dream Diary\n\nAn old entry.\n"))
def test_diary_appends_after_any_bytes(data: bytes) -> None:
    with workspace() as ws:
        ws.dreams_md.write_bytes(data)
        appended = append_diary_entry(ws, DiaryEntry(run_id="r1", now=NOW))
        after = ws.dreams_md.read_bytes()
        assert after.startswith(data) if appended else after == data  # earlier bytes are never rewritten


# --- insight files and config ---------------------------------------------------------------------------------------

VALID_INSIGHT = b'---\nid: research-x\nstatus: active\ngap: "what is x"\nconfidence: 0.80\n---\n# Research\n'


@FUZZ
@given(inputs(VALID_INSIGHT))
def test_insight_readers_never_raise_and_what_they_read_can_be_written(data: bytes) -> None:
    with workspace() as ws:
        ws.insights_dir.mkdir(parents=True, exist_ok=True)
        path = ws.insights_dir / "research-x.md"
        path.write_bytes(data)
        insight = read_insight(path)
        if insight is not None:
            write_insight(ws.root / "copy.md", insight.front, insight.body)
        writable([(i.meta, i.body) for i in read_research_insights(ws)])


VALID_CONFIG = b'timezone = "UTC"\n[deep]\nlimit = 10\nmin_score = 0.75\n[budget]\nmax_cost_usd = 1.0\n'


@FUZZ
@given(inputs(VALID_CONFIG))
def test_config_is_read_or_refused_with_config_error_only(data: bytes) -> None:
    with workspace() as ws:
        path = ws.root / "dreaming.toml"
        path.write_bytes(data)
        try:
            config = load_config(path)
        except ConfigError as exc:
            assert str(exc).encode("utf-8")
            return
        assert isinstance(config, DreamingConfig)
