"""The seed's insight body for a promoted verdict pattern: title, statistics, interpretation, action suggestion."""

from __future__ import annotations

from dreaming.memory.verdicts._candidates import VerdictCandidate

__all__ = ["insight_body", "insight_title"]

_REGIME_PHRASE = {"uptrend": "an uptrend", "downtrend": "a downtrend", "range_bound": "a range-bound market"}
_BULLISH = ("BUY", "ACCUMULATE")


def _pct(rate: float | None) -> str:
    return f"{(rate or 0.0) * 100:.1f}%"


def insight_title(c: VerdictCandidate) -> str:
    """Return the title line without the leading ``# ``."""
    where = f"{c.verdict} on {c.asset} in {_REGIME_PHRASE.get(c.regime, c.regime)} ({c.window})"
    if c.kind == "caution":
        if c.verdict == "HOLD":
            return f"⚠️ Admonition: {where} frequently misses opportunities"
        return f"⚠️ Admonition: {where} often goes the wrong way"
    return f"✅ Reliable: {where} is usually right"


def _interpretation(c: VerdictCandidate) -> tuple[str, str]:
    days = c.window.removesuffix("d")
    lead = (
        f"Historically, when the market was in {_REGIME_PHRASE.get(c.regime, c.regime)}, the committee issued "
        f"{c.verdict} for {c.asset}. {days} days later,"
    )
    tail = f"(average {c.avg_change_pct:+.2f}%, n={c.n})"
    if c.verdict == "HOLD":
        if c.kind == "caution":
            return (
                f"{lead} the market clearly rose in {_pct(c.missed_up_rate)} of cases {tail}: cash was held, "
                "missing the rally.",
                "In this regime, the tendency to HOLD should be reduced, and BUY/ACCUMULATE should be considered "
                "more actively.",
            )
        return (
            f"{lead} the market stayed within its normal range in {_pct(c.hit_rate)} of cases {tail}.",
            f"In this regime, HOLD on {c.asset} has been a sound default; keep it unless the evidence is strong.",
        )
    bullish = c.verdict in _BULLISH
    if c.kind == "caution":
        moved = "fell" if bullish else "rose"
        advice = (
            f"be more skeptical of {c.verdict} on {c.asset}; consider HOLD or a smaller position."
            if bullish
            else f"reconsider {c.verdict} on {c.asset}; selling has often been premature."
        )
        return (
            f"{lead} the market {moved} instead in {_pct(c.wrong_way_rate)} of cases {tail}.",
            f"In this regime, {advice}",
        )
    moved = "rose" if bullish else "fell"
    return (
        f"{lead} the market {moved} as expected in {_pct(c.hit_rate)} of cases {tail}.",
        f"In this regime, {c.verdict} on {c.asset} has usually been right and can be given more weight.",
    )


def insight_body(c: VerdictCandidate) -> str:
    """Return the markdown body of an insight file (everything after the front matter)."""
    days = c.window.removesuffix("d")
    stats = [
        f"- Sample Count: {c.n}",
        f"- {days}-day Hit Rate: {_pct(c.hit_rate)}",
        f"- Average {days}-day Actual Change: {c.avg_change_pct:+.2f}%",
    ]
    if c.verdict == "HOLD":
        stats.append(
            f"- Missed Opportunity Rate (HOLD but market rose): {_pct(c.missed_up_rate)} / "
            f"Avoided Decline Rate: {_pct(c.avoided_down_rate)}"
        )
    else:
        stats.append(f"- Wrong-Way Rate: {_pct(c.wrong_way_rate)}")
    stats.append(f"- Score: {c.score} / Last seen: {c.last_seen}")
    interpretation, action = _interpretation(c)
    return (
        f"# {insight_title(c)}\n\n## Statistics\n" + "\n".join(stats) + "\n\n## Interpretation\n"
        f"{interpretation}\n\n> Action suggestion: {action}\n"
    )
