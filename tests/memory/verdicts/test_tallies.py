"""Incremental nights: continuing the stored tallies gives the bytes and reports of a full recomputation.

Two copies of one workspace live through the same nights (the same appends to verdicts.jsonl, the same price edits
and config changes, the same dates); one keeps its tallies, the other has them deleted before each night. Every
file they write, every step's summary and every reported line must be the same. Offline and seeded: no timing.
"""

from __future__ import annotations

import json
import random
import shutil
import tempfile
from dataclasses import replace
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dreaming.config import VerdictsConfig
from dreaming.memory import InputReport, Workspace
from dreaming.memory.verdicts import _prices as price_files
from dreaming.memory.verdicts import (
    deep_sleep_verdicts,
    light_sleep_verdicts,
    rem_sleep_verdicts,
    review_verdicts,
)
from dreaming.memory.verdicts._handoff import drop
from dreaming.memory.verdicts._review import PRICE_SERIES_FILE
from dreaming.memory.verdicts._tallies import tallies_path

from ._helpers import snapshot, weekdays, write_prices
from .test_handoff import ODD_LINES

DAYS = weekdays(date(2024, 1, 1), 130)
ASSETS = ("AAA", "BBB", "a%s", "a-s")  # "a%s" and "a-s" share their slugs: bucket order decides ties
PROPERTY = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _prices(ws: Workspace, rnd: random.Random, rows: int = len(DAYS)) -> None:
    for asset in ASSETS:
        closes = [100.0]
        for _ in DAYS[1:rows]:
            closes.append(round(closes[-1] * (1 + rnd.gauss(0.001, 0.02)), 4))
        high_low = [(round(c * 1.01, 4), round(c * 0.99, 4)) for c in closes]
        write_prices(ws, asset, DAYS[:rows], closes, high_low=None if asset == "BBB" else high_low)


def _verdict_lines(rnd: random.Random, count: int) -> list[str]:
    lines = []
    for i in range(count):
        # Some decided after the last price (never matured), some on weekends, some after the nights' dates.
        day = DAYS[rnd.randrange(len(DAYS))] + timedelta(days=40 if rnd.random() < 0.03 else rnd.choice((0, 0, 1)))
        row: dict[str, Any] = {
            "decision_date": day.isoformat(),
            "asset": rnd.choice((*ASSETS, "NOPE")),
            "verdict": rnd.choice(("BUY", "ACCUMULATE", "HOLD", "hold", "TRIM", "SELL")),
        }
        if rnd.random() < 0.8:
            row["macro_shock"] = i % 11 == 0
        extra = rnd.random()
        if extra < 0.5:
            row["role"] = rnd.choice(("quant", "cio"))
        elif extra < 0.6:
            row.update(id=i, note="n", regime=rnd.choice(("uptrend", "x")))
        elif extra < 0.65:
            row["weight"] = 0.5  # a float: read the general way
        lines.append(json.dumps(row))
    for odd in ODD_LINES:
        if rnd.random() < 0.5:
            lines.insert(rnd.randrange(len(lines) + 1), odd)
    return lines


def _night(ws: Workspace, now: datetime, config: VerdictsConfig) -> tuple[list[Any], list[str]]:
    """Run the four steps as the night's nodes do; return their summaries and the reported lines."""
    report = InputReport()
    summaries: list[Any] = [review_verdicts(ws, now=now, report=report)]
    summaries.append(light_sleep_verdicts(ws, now=now, report=report))
    summaries.append(rem_sleep_verdicts(ws, config, now=now, report=report))
    summaries.append(deep_sleep_verdicts(ws, config, now=now, report=report))
    drop()
    return summaries, [b.describe() for b in report.bad] + [str(report.count)]


def _comparable(summaries: list[Any]) -> list[Any]:
    review = replace(summaries[0], read_lines=0, recomputed=None) if hasattr(summaries[0], "read_lines") else None
    return [review, *summaries[1:]]


def _outputs(ws: Workspace) -> dict[str, bytes]:
    return {k: v for k, v in snapshot(ws.root).items() if "verdict-tallies" not in k and PRICE_SERIES_FILE not in k}


class Pair:
    """A workspace that keeps its tallies and a copy that recomputes every night."""

    def __init__(self, root: Path, rnd: random.Random) -> None:
        self.kept = Workspace.at(root / "kept")
        self.full = Workspace.at(root / "full")
        self.kept.root.mkdir(parents=True)
        _prices(self.kept, rnd)
        self.kept.state_dir.mkdir(parents=True)
        self.kept.verdicts.write_bytes(b"")
        shutil.copytree(self.kept.root, self.full.root)

    def each(self) -> tuple[Workspace, Workspace]:
        return self.kept, self.full

    def append(self, data: bytes) -> None:
        for ws in self.each():
            with ws.verdicts.open("ab") as handle:
                handle.write(data)

    def night(self, now: datetime, config: VerdictsConfig | None = None) -> Any:
        """Dream on both; check they agree; return the kept workspace's review summary."""
        config = config or VerdictsConfig()
        tallies_path(self.full).unlink(missing_ok=True)
        (self.full.state_dir / PRICE_SERIES_FILE).unlink(missing_ok=True)  # the full night parses every price file
        price_files._parsed.clear()  # each night is a new process: the kept one starts from the stored price series
        kept, kept_report = _night(self.kept, now, config)
        price_files._parsed.clear()
        full, full_report = _night(self.full, now, config)
        assert full[0].recomputed in (None, "no tallies yet") or not hasattr(full[0], "recomputed")
        assert _comparable(kept) == _comparable(full)
        assert kept_report == full_report
        assert _outputs(self.kept) == _outputs(self.full)
        return kept[0]


@PROPERTY
@given(st.integers(0, 2**32 - 1))
def test_incremental_nights_write_what_a_full_recomputation_writes(seed: int) -> None:
    rnd = random.Random(seed)
    root = Path(tempfile.mkdtemp(prefix="tallies-"))
    try:
        pair = Pair(root, rnd)
        data = ("\n".join(_verdict_lines(rnd, rnd.randrange(20, 250))) + "\n").encode()
        nights = rnd.randrange(1, 6)
        # Mostly whole lines per night; sometimes a night sees a line its writer has not finished.
        cuts = sorted(rnd.randrange(len(data) + 1) for _ in range(nights - 1))
        cuts = [c if rnd.random() < 0.2 else data.find(b"\n", c) + 1 or len(data) for c in cuts] + [len(data)]
        now = datetime(2024, 6, 20, 3)
        config = VerdictsConfig()
        rows = len(DAYS) - 10
        _prices(pair.kept, random.Random(1), rows)
        _prices(pair.full, random.Random(1), rows)
        done = 0
        for cut in cuts:
            pair.append(data[done:cut])
            done = max(done, cut)
            pair.night(now, config)
            now += timedelta(days=rnd.choice((0, 0, 1, 1, 3, 30, -1)))
            event = rnd.random()
            if event < 0.15:  # new prices: outcomes mature
                rows = min(len(DAYS), rows + 5)
                _prices(pair.kept, random.Random(1), rows)
                _prices(pair.full, random.Random(1), rows)
            elif event < 0.25:
                config = VerdictsConfig(gate_min_count=rnd.randrange(1, 6), insight_max_age_days=rnd.randrange(1, 99))
    finally:
        shutil.rmtree(root)


# --- each invalidation, and the incremental path itself ----------------------------------------------------------

NOW = datetime(2024, 7, 1, 3)


@pytest.fixture
def pair(tmp_path: Path) -> Pair:
    rnd = random.Random(5)
    pair = Pair(tmp_path, rnd)
    pair.append(("\n".join(_verdict_lines(rnd, 300)) + "\n").encode())
    assert pair.night(NOW).recomputed == "no tallies yet"
    return pair


def _more(count: int = 40, seed: int = 6) -> bytes:
    return ("\n".join(_verdict_lines(random.Random(seed), count)) + "\n").encode()


def test_a_night_reads_only_the_new_lines(pair: Pair) -> None:
    before = pair.kept.verdicts.read_bytes().count(b"\n")
    pair.append(_more(40))
    summary = pair.night(NOW)
    assert summary.recomputed is None
    assert summary.read_lines == pair.kept.verdicts.read_bytes().count(b"\n") - before


def test_an_idle_night_reads_nothing_and_rewrites_nothing(pair: Pair) -> None:
    outputs = {p: p.stat().st_mtime_ns for p in (pair.kept.verdict_review, pair.kept.verdict_signals)}
    summary = pair.night(NOW + timedelta(days=1))
    assert (summary.recomputed, summary.read_lines, summary.changed) == (None, 0, False)
    assert {p: p.stat().st_mtime_ns for p in outputs} == outputs


def test_a_changed_price_file_recomputes(pair: Pair) -> None:
    for ws in pair.each():
        path = ws.prices_dir / "BBB.csv"
        path.write_text(path.read_text().replace(",100.0\n", ",101.0\n"))
    pair.append(_more())
    assert pair.night(NOW).recomputed == "price files changed: BBB.csv"


def test_new_prices_mature_outcomes_by_recomputing(pair: Pair) -> None:
    late = json.dumps({"decision_date": DAYS[-3].isoformat(), "asset": "AAA", "verdict": "BUY"}) + "\n"
    for ws in pair.each():
        _prices(ws, random.Random(1), len(DAYS) - 10)  # the late verdict has no outcome yet
    pair.append(late.encode())
    later = NOW + timedelta(days=60)  # after every decision date of the fixture
    assert pair.night(later).recomputed is not None
    assert pair.night(later + timedelta(days=90)).recomputed is None  # no new prices: nothing can mature
    for ws in pair.each():
        _prices(ws, random.Random(1))
    assert (
        pair.night(later + timedelta(days=90)).recomputed == "price files changed: AAA.csv, BBB.csv, a%s.csv, a-s.csv"
    )


def test_a_changed_config_needs_no_recomputation(pair: Pair) -> None:
    pair.append(_more())
    summary = pair.night(NOW, VerdictsConfig(gate_min_score=0.5, gate_min_count=1, insight_max_age_days=10))
    assert summary.recomputed is None  # the gate and aging are applied to the tallies every night


def test_changed_constants_recompute(pair: Pair, monkeypatch: pytest.MonkeyPatch) -> None:
    from dreaming.memory.verdicts import _tallies

    monkeypatch.setattr(_tallies, "constants", lambda: "another version")
    assert pair.night(NOW).recomputed == "the verdict path's constants changed"


def test_a_rewritten_prefix_recomputes(pair: Pair) -> None:
    for ws in pair.each():
        data = ws.verdicts.read_bytes()
        ws.verdicts.write_bytes(data.replace(b'"BUY"', b'"SELL"', 1) + _more())
    assert "was rewritten within the" in pair.night(NOW).recomputed


def test_a_truncated_file_recomputes(pair: Pair) -> None:
    for ws in pair.each():
        data = ws.verdicts.read_bytes()
        ws.verdicts.write_bytes(data[: data.rfind(b"\n", 0, len(data) // 2) + 1])
    assert "is shorter than the" in pair.night(NOW).recomputed


def test_an_open_last_line_that_grows_recomputes(pair: Pair) -> None:
    line = json.dumps({"decision_date": "2024-03-04", "asset": "AAA", "verdict": "BUY"}).encode()
    pair.append(line[:20])
    assert pair.night(NOW).recomputed is None  # the torn line is read and reported, as a full review would
    pair.append(line[20:] + b"\n")
    assert "last line read was still open" in pair.night(NOW).recomputed


def test_a_verdict_crossing_the_date_recomputes(pair: Pair) -> None:
    future = json.dumps({"decision_date": "2024-07-05", "asset": "AAA", "verdict": "BUY"}) + "\n"
    pair.append(future.encode())
    assert pair.night(NOW).recomputed is None  # refused as dated after now, the date remembered
    assert pair.night(NOW + timedelta(days=3)).recomputed is None
    assert "dated after now" in pair.night(NOW + timedelta(days=4)).recomputed
    assert "dated after now" in pair.night(NOW - timedelta(days=30)).recomputed  # back in time: accepted ones too


@pytest.mark.parametrize("garbage", [b"{not json", b'{"version": 7}', b'{"version": 1, "keep": "x"}', b"\xff"])
def test_an_unusable_tallies_file_is_moved_aside_and_the_night_recomputes(pair: Pair, garbage: bytes) -> None:
    tallies_path(pair.kept).write_bytes(garbage)
    pair.append(_more())
    summary = pair.night(NOW)
    assert "moved aside to" in summary.recomputed
    assert len(list(pair.kept.state_dir.glob("verdict-tallies.json.corrupt-*"))) == 1
    assert pair.night(NOW).recomputed is None  # written anew


@pytest.mark.parametrize("edit", ["review", "signals"])
def test_an_edited_output_recomputes(pair: Pair, edit: str) -> None:
    for ws in pair.each():
        path = ws.verdict_review if edit == "review" else ws.verdict_signals
        path.write_bytes(path.read_bytes()[:-1])
    assert pair.night(NOW).recomputed == f"{path.name} is not as the last night left it"


def test_a_crash_before_the_tallies_are_written_recomputes_the_next_night(pair: Pair) -> None:
    pair.append(_more())
    for ws in pair.each():
        report = InputReport()
        review_verdicts(ws, now=NOW, report=report)
        light_sleep_verdicts(ws, now=NOW, report=report)  # lines appended; REM and the tallies never come
        drop()
    assert pair.night(NOW).recomputed == "verdict_review.jsonl is not as the last night left it"


def test_a_resumed_chain_in_a_new_process_stores_no_tallies(pair: Pair) -> None:
    pair.append(_more())
    before = tallies_path(pair.kept).read_bytes()
    for ws in pair.each():
        report = InputReport()
        review_verdicts(ws, now=NOW, report=report)
        drop()  # light runs in another process: it parses the review file and cannot vouch for the tallies
        light_sleep_verdicts(ws, now=NOW, report=report)
        rem_sleep_verdicts(ws, VerdictsConfig(), now=NOW, report=report)
    assert tallies_path(pair.kept).read_bytes() == before
    assert pair.night(NOW).recomputed is not None


@pytest.mark.parametrize("damage", ["garbage", "short", "unordered", "version"])
def test_a_damaged_price_series_store_is_ignored(pair: Pair, damage: str) -> None:
    store = pair.kept.state_dir / PRICE_SERIES_FILE
    data = json.loads(store.read_text())
    entry = data["files"]["AAA.csv"]
    if damage == "garbage":
        store.write_bytes(b"{not json")
    else:
        if damage == "short":
            entry["closes"].pop()
        elif damage == "unordered":
            entry["ordinals"][3], entry["ordinals"][4] = entry["ordinals"][4], entry["ordinals"][3]
        else:
            data["version"] = 99
        store.write_text(json.dumps(data))
    pair.append(_more())
    assert pair.night(NOW).recomputed is None  # the prices are parsed again, with the same outcome
    assert (
        json.loads(store.read_text())["files"]["AAA.csv"]
        == json.loads((pair.full.state_dir / PRICE_SERIES_FILE).read_text())["files"]["AAA.csv"]
    )


def test_the_stored_price_series_are_what_parsing_gives(pair: Pair) -> None:
    for ws in pair.each():  # bad rows, kept and reported again from the store
        with (ws.prices_dir / "BBB.csv").open("a") as handle:
            handle.write("2024-13-01,5\n2024-07-01,-1\n")
    pair.append(_more())
    assert pair.night(NOW).recomputed == "price files changed: BBB.csv"
    stored = json.loads((pair.kept.state_dir / PRICE_SERIES_FILE).read_text())
    assert len(stored["files"]["BBB.csv"]["problems"]) == 2
    assert sorted(stored["files"]) == ["AAA.csv", "BBB.csv", "a%s.csv", "a-s.csv"]
    price_files._parsed.clear()
    taken = price_files.recall_parsed_prices(
        pair.kept.state_dir / PRICE_SERIES_FILE,
        pair.kept.prices_dir,
        price_files.price_fingerprints(pair.kept.prices_dir),
    )
    assert taken == set(stored["files"])
    recalled = {name: price_files._parsed[str(pair.kept.prices_dir / name)] for name in taken}
    for name, (_, series, problems) in recalled.items():
        price_files._parsed.clear()
        report = InputReport()
        assert price_files.load_prices(pair.kept.prices_dir / name, report) == series
        assert [(b.line, b.reason) for b in report.bad] == problems
