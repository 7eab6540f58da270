"""The research eval's cases and its scoring: a kept finding counts only when what it says is right.

A case is one recorded knowledge gap over real third-party code (``data/research/cases/*.jsonl``)::

    {"id", "category", "query", "expect": "keep" | "not_keep",
     "answer": [tokens a correct claim must contain], "path", "lines": [first, last], "also": [[path, a, b], ...]}

A ``keep`` case is answered correctly when the gap is kept, its claim contains **every** answer token (the value and
the name it is bound to; case-insensitive, at word boundaries) and one of its cited locators points inside the
expected ``path:lines`` range (or an ``also`` range). A ``not_keep`` case is right when nothing is kept. Any other
keep is a false keep: the costly error, since the agent would believe it tomorrow.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dreaming.memory import InputReport, iter_jsonl

__all__ = [
    "CALIBRATION_BINS",
    "CATEGORIES",
    "CaseResult",
    "EvalCase",
    "Scores",
    "load_cases",
    "render_table",
    "score_case",
]

CATEGORIES = (
    "definition",
    "exception",
    "prose",
    "paraphrase",
    "memory",
    "near_match",
    "boilerplate",
    "usage_example",
    "injected",
    "unanswerable",
)
"""Every category a case may have, in the order the table shows them."""

CALIBRATION_BINS = ((0.7, 0.8), (0.8, 0.9), (0.9, 1.01))
"""Confidence groups of kept findings for the calibration rows (lower bound inclusive)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class EvalCase:
    """One recorded gap and what a good research night does with it."""

    id: str
    """Case identifier."""
    query: str
    """The gap's query, as the agent searched it."""
    expect: str
    """``keep`` or ``not_keep``."""
    category: str = "definition"
    """One of :data:`CATEGORIES`."""
    answer: tuple[str, ...] = ()
    """For ``keep``: tokens a correct claim contains (the value and the name it is bound to)."""
    places: tuple[tuple[str, int, int], ...] = ()
    """For ``keep``: ``(path, first, last)`` ranges a correct citation points into."""


def load_cases(paths: Iterable[Path]) -> list[EvalCase]:
    """Read cases from JSONL files; malformed rows are skipped (and counted by :func:`iter_jsonl`'s report)."""
    cases: list[EvalCase] = []
    report = InputReport()
    for path in paths:
        for _, row in iter_jsonl(path, report):
            if not isinstance(row.get("query"), str) or row.get("expect") not in ("keep", "not_keep"):
                continue
            places: list[tuple[str, int, int]] = []
            if row.get("path") and isinstance(row.get("lines"), list) and len(row["lines"]) == 2:
                places.append((str(row["path"]), int(row["lines"][0]), int(row["lines"][1])))
            for extra in row.get("also") or ():
                places.append((str(extra[0]), int(extra[1]), int(extra[2])))
            category = str(row.get("category") or "definition")
            cases.append(
                EvalCase(
                    id=str(row.get("id") or row["query"]),
                    query=row["query"],
                    expect=row["expect"],
                    category=category if category in CATEGORIES else "definition",
                    answer=tuple(str(t) for t in row.get("answer") or ()),
                    places=tuple(places),
                )
            )
    return cases


def _has_token(text: str, token: str) -> bool:
    pattern = rf"(?<![A-Za-z0-9_]){re.escape(token)}(?![A-Za-z0-9_]|\.\d)"
    return re.search(pattern, text, flags=re.IGNORECASE) is not None


_LOCATOR = re.compile(r"^(?P<path>.+?):(?P<start>\d+)(?:-(?P<end>\d+))?$")


def _cites(locators: Sequence[str], places: Sequence[tuple[str, int, int]]) -> bool:
    for locator in locators:
        match = _LOCATOR.match(locator)
        if match is None:
            continue
        path, start = match.group("path"), int(match.group("start"))
        end = int(match.group("end") or start)
        for want, first, last in places:
            if (path == want or path.endswith("/" + want)) and start <= last and end >= first:
                return True
    return False


@dataclass(frozen=True, kw_only=True, slots=True)
class CaseResult:
    """How one case came out."""

    case: EvalCase
    """The case."""
    decision: str
    """The gap's decision in research.jsonl (``missing`` when it has no row)."""
    confidence: float
    """The finding's confidence."""
    claim: str
    """The kept or best claim, empty without one."""
    locators: tuple[str, ...]
    """The finding's cited locators."""
    duration_s: float = 0.0
    """Wall time the gap took."""
    tokens: int = 0
    """Model tokens the gap used."""
    cost_usd: float = 0.0
    """What the gap cost."""
    has_answer: bool = False
    """The claim contains every answer token."""
    cites_place: bool = False
    """A cited locator lies in an expected range."""

    @property
    def kept(self) -> bool:
        """Return whether the gap's finding is in memory: kept, or kept already by another gap of the night."""
        return self.decision == "keep" or (self.decision == "skipped_duplicate" and bool(self.claim))

    @property
    def correct(self) -> bool:
        """Return whether the case came out as expected (for a keep: the right content at the right place)."""
        if self.case.expect == "keep":
            return self.kept and self.has_answer and self.cites_place
        return not self.kept

    @property
    def false_keep(self) -> bool:
        """Return whether something was kept that should not have been (wrong, or nothing to keep)."""
        return self.kept and not self.correct

    def to_json(self) -> dict[str, Any]:
        """Return the result as JSON-able data."""
        return {
            "id": self.case.id,
            "category": self.case.category,
            "query": self.case.query,
            "expected": self.case.expect,
            "decision": self.decision,
            "confidence": self.confidence,
            "correct": self.correct,
            "claim": self.claim,
            "locators": list(self.locators[:3]),
        }


def score_case(case: EvalCase, row: Mapping[str, Any] | None) -> CaseResult:
    """Score one case against its research.jsonl row (None when the gap has no row)."""
    row = row or {}
    claim = str(row.get("claim") or "")
    locators = tuple(str(loc) for loc in row.get("locators") or ())
    return CaseResult(
        case=case,
        decision=str(row.get("decision") or "missing"),
        confidence=float(row.get("confidence") or 0.0),
        claim=claim,
        locators=locators,
        duration_s=float(row.get("duration_s") or 0.0),
        tokens=int(row.get("tokens") or 0),
        cost_usd=float(row.get("cost_usd") or 0.0),
        has_answer=bool(case.answer) and all(_has_token(claim, t) for t in case.answer),
        cites_place=_cites(locators, case.places),
    )


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


@dataclass(frozen=True, kw_only=True, slots=True)
class Scores:
    """The metrics of one evaluation run, from its case results."""

    results: tuple[CaseResult, ...]
    """Every case, in dataset order."""
    label: str = "offline"
    """Which path ran: ``offline``, ``model`` or ``adversarial``."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Path-specific figures (the adversarial model's proposals and rejections)."""

    def _keeps(self) -> list[CaseResult]:
        return [r for r in self.results if r.kept]

    @property
    def precision(self) -> float | None:
        """Correct keeps over all keeps (None without a keep)."""
        keeps = self._keeps()
        return _ratio(sum(r.correct for r in keeps), len(keeps))

    @property
    def recall(self) -> float | None:
        """Correct keeps over answerable (``keep``) cases."""
        answerable = [r for r in self.results if r.case.expect == "keep"]
        return _ratio(sum(r.correct for r in answerable), len(answerable))

    @property
    def false_keeps(self) -> int:
        """Keeps that were wrong or had nothing to keep."""
        return sum(r.false_keep for r in self.results)

    @property
    def citation_accuracy(self) -> float | None:
        """Of the keeps on answerable cases, the share citing the expected place."""
        keeps = [r for r in self._keeps() if r.case.expect == "keep"]
        return _ratio(sum(r.cites_place for r in keeps), len(keeps))

    @property
    def abstain_rate(self) -> float | None:
        """Share of cases abstained (no evidence at all)."""
        return _ratio(sum(r.decision == "abstain" for r in self.results), len(self.results))

    @property
    def seconds_per_gap(self) -> float:
        """Mean wall time per gap."""
        return sum(r.duration_s for r in self.results) / len(self.results) if self.results else 0.0

    @property
    def tokens(self) -> int:
        """Model tokens used in all."""
        return sum(r.tokens for r in self.results)

    @property
    def cost_usd(self) -> float:
        """What the run cost in all."""
        return sum(r.cost_usd for r in self.results)

    def calibration(self) -> list[tuple[str, int, float | None]]:
        """Return ``(group, keeps, correct share)`` per confidence group of :data:`CALIBRATION_BINS`."""
        rows = []
        for low, high in CALIBRATION_BINS:
            group = [r for r in self._keeps() if low <= r.confidence < high]
            label = f"{low:.1f}-{min(high, 1.0):.1f}"
            rows.append((label, len(group), _ratio(sum(r.correct for r in group), len(group))))
        return rows

    def by_category(self) -> dict[str, dict[str, int]]:
        """Return per category: cases, answerable, kept, correct, false keeps, abstained."""
        table: dict[str, Counter[str]] = {}
        for r in self.results:
            row = table.setdefault(r.case.category, Counter())
            row["cases"] += 1
            row["answerable"] += r.case.expect == "keep"
            row["kept"] += r.kept
            row["correct"] += r.correct
            row["right_keeps"] += r.kept and r.correct
            row["false_keeps"] += r.false_keep
            row["abstained"] += r.decision == "abstain"
        order = [c for c in CATEGORIES if c in table]
        return {c: dict(table[c]) for c in order}

    def summary(self) -> dict[str, Any]:
        """Return the headline figures as JSON-able data."""
        keeps = len(self._keeps())
        return {
            "label": self.label,
            "cases": len(self.results),
            "kept": keeps,
            "precision": self.precision,
            "recall": self.recall,
            "false_keeps": self.false_keeps,
            "citation_accuracy": self.citation_accuracy,
            "abstain_rate": self.abstain_rate,
            "seconds_per_gap": round(self.seconds_per_gap, 4),
            "tokens": self.tokens,
            "cost_usd": round(self.cost_usd, 6),
            "tokens_per_keep": self.tokens / keeps if keeps else None,
            "usd_per_keep": self.cost_usd / keeps if keeps else None,
            "calibration": [{"group": g, "keeps": n, "correct": c} for g, n, c in self.calibration()],
            "by_category": self.by_category(),
            **self.extra,
        }


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _cell(value: object) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def render_table(runs: Sequence[Scores]) -> str:
    """Render one table: a block of per-category rows per run, then the headline metrics side by side."""
    lines: list[str] = []
    head = f"{'category':<14}{'cases':>6}{'keep?':>6}{'kept':>6}{'right':>6}{'false':>6}{'abst':>6}{'recall':>8}"
    for run in runs:
        lines += [f"[{run.label}]", head]
        for category, row in run.by_category().items():
            recall = _fmt(_ratio(row.get("right_keeps", 0), row.get("answerable", 0)))
            lines.append(
                f"{category:<14}{row['cases']:>6}{row.get('answerable', 0):>6}{row.get('kept', 0):>6}"
                f"{row.get('right_keeps', 0):>6}{row.get('false_keeps', 0):>6}{row.get('abstained', 0):>6}{recall:>8}"
            )
        lines.append("")
    names = [run.label for run in runs]
    lines.append(f"{'metric':<24}" + "".join(f"{n:>14}" for n in names))
    metrics: list[tuple[str, list[str]]] = [
        ("cases", [str(len(r.results)) for r in runs]),
        ("precision", [_fmt(r.precision) for r in runs]),
        ("recall (answerable)", [_fmt(r.recall) for r in runs]),
        ("false keeps", [str(r.false_keeps) for r in runs]),
        ("citation accuracy", [_fmt(r.citation_accuracy) for r in runs]),
        ("abstain rate", [_fmt(r.abstain_rate) for r in runs]),
        ("seconds per gap", [f"{r.seconds_per_gap:.4f}" for r in runs]),
        ("tokens per keep", [f"{r.summary()['tokens_per_keep'] or 0:.0f}" for r in runs]),
        ("USD per keep", [f"{r.summary()['usd_per_keep'] or 0:.6f}" for r in runs]),
    ]
    for index in range(len(CALIBRATION_BINS)):
        cells = []
        for r in runs:
            _, count, share = r.calibration()[index]
            cells.append(f"{_fmt(share)} of {count}")
        metrics.append((f"correct at conf {r.calibration()[index][0]}", cells))
    extras = sorted({key for r in runs for key in r.extra})
    for key in extras:
        metrics.append((key.replace("_", " "), [_cell(r.extra.get(key)) for r in runs]))
    for name, cells in metrics:
        lines.append(f"{name:<24}" + "".join(f"{c:>14}" for c in cells))
    return "\n".join(lines)
