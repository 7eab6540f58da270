from __future__ import annotations

import math
import os
import random
from datetime import date

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dreaming.memory import InputReport, Workspace
from dreaming.memory.verdicts import ATR_DAYS, SMA_DAYS, PriceBook, load_prices, parse_date
from dreaming.memory.verdicts._prices import window_sums

from ._helpers import weekdays, write_prices


def test_parse_date_iso_and_us() -> None:
    assert parse_date("2008-10-06") == date(2008, 10, 6)
    assert parse_date("10/6/2008") == date(2008, 10, 6)
    assert parse_date(" 01/02/2020 ") == date(2020, 1, 2)  # US: month first
    assert parse_date("2008-13-01") is None
    assert parse_date("6.10.2008") is None


def _alternating(count: int) -> list[float]:
    return [100.0 if i % 2 == 0 else 102.0 for i in range(count)]


def test_atr_close_only_needs_fifteen_rows(workspace: Workspace) -> None:
    days = weekdays(date(2024, 1, 1), 16)
    path = write_prices(workspace, "A", days, _alternating(16))
    series = load_prices(path, InputReport())
    assert series is not None and not series.has_high_low
    # Every true range is |102 - 100| = 2; ATR 2 over a close of 100 at row 14 -> 2%; at row 15 (close 102) 2/102.
    assert series.atr_pct[13] is None
    assert series.atr_pct[14] == 2.0
    assert series.atr_pct[15] == round(2 / 102 * 100, 4) == 1.9608


def test_atr_with_high_low(workspace: Workspace) -> None:
    days = weekdays(date(2024, 1, 1), 15)
    closes = _alternating(15)
    path = write_prices(workspace, "A", days, closes, high_low=[(c + 3, c - 1) for c in closes])
    series = load_prices(path, InputReport())
    assert series is not None and series.has_high_low
    # Rows closing at 102 (prev 100): max(4, |105-100|, |101-100|) = 5; rows closing at 100 (prev 102):
    # max(4, |103-102|, |99-102|) = 4. Rows 1..14: seven of each -> mean 4.5, over close 100 -> 4.5%.
    assert series.atr_pct[14] == 4.5


def test_unsorted_duplicated_case_insensitive_extra_columns_us_dates(workspace: Workspace) -> None:
    workspace.prices_dir.mkdir()
    path = workspace.prices_dir / "X.csv"
    path.write_text(
        "Volume, DATE ,Close,Adj Close\n"
        "5,10/8/2008,30,0\n"
        "5,2008-10-06,10,0\n"
        "5,10/7/2008,999,0\n"
        "5,2008-10-07,20,0\n"  # duplicate of 10/7/2008: the last row wins
    )
    series = load_prices(path, InputReport())
    assert series is not None
    assert series.ordinals == [date(2008, 10, d).toordinal() for d in (6, 7, 8)]
    assert series.closes == [10.0, 20.0, 30.0]


def test_missing_close_column_is_refused_and_bad_rows_reported(workspace: Workspace) -> None:
    workspace.prices_dir.mkdir()
    (workspace.prices_dir / "A.csv").write_text("date,open\n2024-01-01,1\n")
    (workspace.prices_dir / "B.csv").write_text(
        "date,close\n2024-01-01,1\nnot a date,2\n2024-01-03,NaN\n2024-01-04,4\n"
    )
    report = InputReport()
    book = PriceBook(workspace.prices_dir, report)
    assert book.get("A") is None
    b = book.get("b")  # case-insensitive file lookup
    assert b is not None and b.closes == [1.0, 4.0]
    assert [x.describe() for x in report.bad] == [
        "prices/A.csv:1: price file refused: no 'close' column",
        "prices/B.csv:3: unreadable date",
        "prices/B.csv:4: close is missing, not a number or not positive",
    ]


@pytest.mark.parametrize(
    ("closes", "expected"),
    [
        ([100.0 + i for i in range(60)], "uptrend"),
        ([200.0 - i for i in range(60)], "downtrend"),
        ([100.0] * 60, "range_bound"),
        # Falling SMA (175.5 -> 166.08) but the last close 170 is above it: neither rule holds.
        ([200.0 - i for i in range(59)] + [170.0], "range_bound"),
        # Same falling SMA, last close 150 below SMA(t0) = (sum(190..142) + 150) / 50 = 165.68: downtrend.
        ([200.0 - i for i in range(59)] + [150.0], "downtrend"),
    ],
)
def test_regime_rules(workspace: Workspace, closes: list[float], expected: str) -> None:
    path = write_prices(workspace, "A", weekdays(date(2020, 1, 1), len(closes)), closes)
    series = load_prices(path, InputReport())
    assert series is not None
    assert series.regimes[58] == "unknown"  # 59 rows up to t0: fewer than MIN_REGIME_ROWS
    assert series.regimes[59] == expected


def test_no_look_ahead(workspace: Workspace) -> None:
    rnd = random.Random(7)
    days = weekdays(date(2020, 1, 1), 200)
    closes = [100.0]
    for _ in range(199):
        closes.append(closes[-1] * (1 + rnd.gauss(0, 0.02)))
    hl = [(c * 1.02, c * 0.97) for c in closes]
    before = load_prices(write_prices(workspace, "A", days, closes, high_low=hl), InputReport())
    changed = closes[:121] + [c * 3 for c in closes[121:]]
    hl2 = hl[:121] + [(c * 1.5, c * 0.5) for c in changed[121:]]
    after = load_prices(write_prices(workspace, "A", days, changed, high_low=hl2), InputReport())
    assert before is not None and after is not None
    assert before.regimes[:121] == after.regimes[:121]
    assert before.atr_pct[:121] == after.atr_pct[:121]
    assert before.atr_pct[121:] != after.atr_pct[121:]  # the change is real


def test_a_file_parsed_before_is_reused_with_its_bad_rows_and_an_edit_in_place_is_seen(workspace: Workspace) -> None:
    workspace.prices_dir.mkdir()
    path = workspace.prices_dir / "A.csv"
    path.write_text("date,close\n2024-01-01,1\nnot a date,2\n2024-01-03,3\n")
    first, second = InputReport(), InputReport()
    series = load_prices(path, first, label="prices/A.csv")
    assert load_prices(path, second, label="p/A.csv") is series  # same bytes: not parsed again
    assert [x.describe() for x in first.bad] == ["prices/A.csv:3: unreadable date"]
    assert [x.describe() for x in second.bad] == ["p/A.csv:3: unreadable date"]
    stat = path.stat()
    with path.open("r+") as handle:  # same size, same inode, same mtime: only the bytes tell
        handle.write("date,close\n2024-01-01,1\n2024-01-02,2\n2024-01-03,3\n")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size
    third = InputReport()
    edited = load_prices(path, third)
    assert edited is not None and edited.closes == [1.0, 2.0, 3.0] and third.count == 0


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(
    st.lists(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300), max_size=80),
    st.sampled_from([1, 2, ATR_DAYS, SMA_DAYS]),
)
def test_window_sums_are_fsum_of_each_window_to_the_last_bit(values: list[float], width: int) -> None:
    expected = [math.fsum(values[i - width + 1 : i + 1]) for i in range(width - 1, len(values))]
    assert [x.hex() for x in window_sums(values, width)] == [x.hex() for x in expected]
