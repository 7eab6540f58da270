"""The backtest's SVG: both committees' lines where their numbers put them, every text escaped, damage tolerated."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

from dreaming.backtest._plot import plot_svg

NS = {"svg": "http://www.w3.org/2000/svg"}


def _report(**extra: Any) -> dict[str, Any]:
    return {
        "version": 1,
        "from": "2010-01-01",
        "to": "2012-12-31",
        "series": [
            {"date": "2010-01-08", "baseline_cum_opportunity_cost_pct": 1.0, "dreaming_cum_opportunity_cost_pct": 1.0},
            {"date": "2011-01-07", "baseline_cum_opportunity_cost_pct": 6.0, "dreaming_cum_opportunity_cost_pct": 3.5},
            {
                "date": "2012-12-28",
                "baseline_cum_opportunity_cost_pct": 12.0,
                "dreaming_cum_opportunity_cost_pct": 7.25,
            },
        ],
        **extra,
    }


def _line(svg: str, cls: str) -> list[tuple[float, float]]:
    path = ET.fromstring(svg).find(f"svg:path[@class='{cls}']", NS)
    assert path is not None, cls
    return [(float(x), float(y)) for x, y in re.findall(r"[ML](-?[\d.]+),(-?[\d.]+)", path.attrib["d"])]


def test_both_lines_follow_their_numbers() -> None:
    svg = plot_svg(_report())
    base, dream = _line(svg, "baseline"), _line(svg, "dreaming")
    assert len(base) == len(dream) == 3
    assert [x for x, _ in base] == [x for x, _ in dream] and base[0][0] < base[1][0] < base[2][0]
    assert base[0][1] == dream[0][1]  # the same cost at the start
    assert base[2][1] < dream[2][1]  # the baseline's larger cost is drawn higher
    assert base[0][1] > base[1][1] > base[2][1]  # a growing cost climbs
    assert "baseline committee: 12.00%" in svg and "dreaming committee: 7.25%" in svg
    # equal lines both show: the baseline is dashed and drawn over the dreaming line
    paths = ET.fromstring(svg).findall("svg:path", NS)
    assert [p.attrib["class"] for p in paths] == ["dreaming", "baseline"] and "stroke-dasharray" in paths[1].attrib
    assert ">2011<" in svg and ">2012<" in svg  # the years along the x axis
    assert "2010-01-01 to 2012-12-31" in ET.fromstring(svg).findtext("svg:title", namespaces=NS, default="")


def test_negative_costs_and_zero_get_a_scale_that_holds_them() -> None:
    report = _report()
    report["series"][1]["dreaming_cum_opportunity_cost_pct"] = -4.0
    svg = plot_svg(report)
    ys = [y for _, y in _line(svg, "dreaming")]
    assert all(14 <= y <= 14 + 176 for y in ys)  # inside the plot area
    assert ">-5%<" in svg or ">-4%<" in svg


def test_text_is_escaped_and_damaged_rows_are_left_out() -> None:
    report = _report(**{"from": "<script>alert(1)</script>", "to": '"><b>x</b>'})
    report["series"] += [
        {"date": "not a date", "baseline_cum_opportunity_cost_pct": 1, "dreaming_cum_opportunity_cost_pct": 1},
        {"date": "2013-01-04", "baseline_cum_opportunity_cost_pct": "NaN", "dreaming_cum_opportunity_cost_pct": 1},
        {
            "date": "2013-01-11",
            "baseline_cum_opportunity_cost_pct": float("inf"),
            "dreaming_cum_opportunity_cost_pct": 1,
        },
        "not a row",
    ]
    svg = plot_svg(report)
    ET.fromstring(svg)  # still well-formed
    assert "<script" not in svg and "<b>" not in svg and "&lt;script&gt;" in svg
    assert len(_line(svg, "baseline")) == 3


def test_an_empty_or_damaged_report_draws_an_empty_frame() -> None:
    reports: list[dict[str, Any]] = [{}, {"series": "nope"}, {"series": []}, {"series": [{"date": "2010-01-01"}]}]
    for report in reports:
        svg = plot_svg(report)
        ET.fromstring(svg)
        assert "no decisions to plot" in svg and "<path" not in svg
