"""Kept findings become ``memory/insights/research-<slug>.md``; a contradiction never overwrites silently.

Related insights: an active research insight is related to a new finding when it has the same slug, or when their
questions share at least ``RELATED_TERM_FRACTION`` (0.5) of their salient terms (intersection over union). A related
insight with the same claim (whitespace and case aside) is confirmed: its ``last_confirmed`` moves, the rest stays.
A related insight with a different claim is superseded only when the new finding has at least
``SUPERSEDE_MIN_SOURCES`` (2) independent sources *and* strictly better support (:func:`support_quality`: enough
sources, a re-verified code line, more sources, and only then confidence, so a wrong finding kept at 1.00 on one
source never blocks a right one), and the old one is not the user's own word: the old file moves to
``insights/archive/`` with ``status: superseded`` and ``superseded_by``, and the new one says ``supersedes``.
Otherwise nothing is written and a :class:`Conflict`, with both claims, is returned for DREAMS.md. Nothing is ever
deleted; every write is atomic; the same inputs on the same date give the same bytes. The front matter is read and
written by the one insight-file codec (``memory/insights.py``), in the research value style.

An insight's id is its file's name without ``.md``, as for verdict insights: what DREAMS.md names is the file to open.
A superseded insight is archived as ``insights/archive/research-<slug>--<claim hash>.md`` and its id becomes that
name, so ``supersedes`` names the archived file and ``superseded_by`` the active one.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from dreaming.memory._terms import stemmed_salient_terms
from dreaming.memory.files import atomic_write_text
from dreaming.memory.insights import (
    FrontValue,
    Scalar,
    insight_paths,
    read_front_matter,
    render_front_matter,
    unquote,
)
from dreaming.memory.research._evidence import content_hash, redact_secrets
from dreaming.memory.research._records import ResearchFinding
from dreaming.memory.workspace import Workspace

__all__ = [
    "RELATED_TERM_FRACTION",
    "SUPERSEDE_MIN_SOURCES",
    "Conflict",
    "InsightWrite",
    "ResearchInsight",
    "read_research_insights",
    "research_slug",
    "support_quality",
    "write_research_insight",
]

RELATED_TERM_FRACTION = 0.5
"""Jaccard overlap of two questions' salient terms from which their insights are about the same thing."""
SUPERSEDE_MIN_SOURCES = 2
"""Independent sources a finding needs to supersede a conflicting insight."""

_MAX_SLUG = 60
# Values that are ids, dates or enums are written bare; free text is JSON-quoted (valid YAML).
_BARE_KEYS = frozenset(
    {"id", "kind", "status", "validation_method", "first_promoted", "last_confirmed", "supersedes", "superseded_by",
     "independent_sources", "user_stated"}
)  # fmt: skip


def research_slug(question: str) -> str:
    """Return the file slug of a question: lowercase ASCII words joined by ``-``, at most 60 characters."""
    words = re.findall(r"[a-z0-9]+", question.lower())
    slug = ""
    for word in words:
        candidate = f"{slug}-{word}" if slug else word
        if len(candidate) > _MAX_SLUG:
            break
        slug = candidate
    return slug or "question"


@dataclass(frozen=True, kw_only=True, slots=True)
class ResearchInsight:
    """An insight file as read back: its front matter and where it is."""

    path: Path
    """The file."""
    meta: dict[str, Any]
    """The front matter (``id``, ``question``, ``claim``, ``confidence``, ``status`` ...)."""
    body: str
    """Everything after the front matter."""

    @property
    def id(self) -> str:
        """Return the insight id: the file's name without ``.md`` (an older file's ``id`` field may differ)."""
        return self.path.stem

    @property
    def question(self) -> str:
        """Return the question it answers."""
        return str(self.meta.get("question", ""))

    @property
    def claim(self) -> str:
        """Return the finding's claim."""
        return str(self.meta.get("claim", ""))

    @property
    def confidence(self) -> float:
        """Return its confidence (0 when unreadable)."""
        try:
            return float(self.meta.get("confidence", 0.0))
        except (TypeError, ValueError):
            return 0.0

    @property
    def independent_sources(self) -> int:
        """Return how many independent sources supported it (older files: read from the body, else 1)."""
        value = self.meta.get("independent_sources")
        if value is None:
            found = re.search(r"(?m)^- Independent sources: (\d+)$", self.body)
            value = found.group(1) if found else 1
        try:
            return int(value)
        except (TypeError, ValueError):
            return 1

    @property
    def user_stated(self) -> bool:
        """Return whether it rests on the user's own notes."""
        return str(self.meta.get("user_stated", "")).lower() == "true"

    @property
    def quality(self) -> tuple[bool, bool, int, float]:
        """Return its support quality (see :func:`support_quality`)."""
        return support_quality(self.independent_sources, str(self.meta.get("validation_method", "")), self.confidence)


def support_quality(sources: int, method: str, confidence: float) -> tuple[bool, bool, int, float]:
    """Return how well a finding is supported, as a tuple compared in order.

    Enough independent sources to supersede, a re-verified code line (``code-crossref``), the number of sources (up
    to four), then the confidence. Confidence comes last: a wrong finding kept at 1.00 on one source never blocks a
    right one on two.
    """
    return (sources >= SUPERSEDE_MIN_SOURCES, method == "code-crossref", min(sources, 4), round(confidence, 4))


def _describe(quality: tuple[bool, bool, int, float]) -> str:
    _, code, sources, confidence = quality
    return f"{sources} source(s){', code re-verified' if code else ''}, confidence {confidence:.2f}"


@dataclass(frozen=True, kw_only=True, slots=True)
class InsightWrite:
    """A finding written to memory."""

    path: Path
    """The insight file."""
    insight_id: str
    """Its id: the file's name without ``.md``."""
    action: Literal["created", "confirmed", "superseded", "unchanged"]
    """What happened: new file, an existing one re-confirmed, older ones superseded, or the bytes were already there."""
    superseded: tuple[str, ...] = ()
    """Ids of the insights moved to the archive: their names there, without ``.md``."""
    archived_to: tuple[Path, ...] = ()
    """Where they went."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Conflict:
    """A kept finding that contradicts an active insight and may not supersede it: for the user to settle."""

    finding: ResearchFinding
    """The new, kept finding (its question is ``gap``, its sources its ``locators``)."""
    existing: ResearchInsight
    """The active insight it contradicts."""
    reason: str
    """Why it was not superseded."""


def _research_value(key: str, value: Scalar) -> str:
    """Write one research-insight value: floats with two decimals, ids/dates/enums bare, free text JSON-quoted."""
    if isinstance(value, float):
        return f"{value:.2f}"
    if key in _BARE_KEYS:
        return f"{value}"
    return json.dumps(str(value), ensure_ascii=False)


def _parse(path: Path) -> ResearchInsight | None:
    split = read_front_matter(path, unquote)
    if split is None:
        return None
    meta, body = split
    return ResearchInsight(path=path, meta=meta, body=body)


def read_research_insights(ws: Workspace) -> list[ResearchInsight]:
    """Return the active research insights of the workspace, by file name."""
    found = []
    for path in insight_paths(ws, ws.insights_dir, "research-*.md"):
        insight = _parse(path)
        if insight is not None and insight.meta.get("status", "active") == "active":
            found.append(insight)
    return found


def _related(question: str, slug: str, insight: ResearchInsight) -> bool:
    if insight.path.stem == f"research-{slug}":
        return True
    a, b = set(stemmed_salient_terms(question)), set(stemmed_salient_terms(insight.question))
    return bool(a | b) and len(a & b) / len(a | b) >= RELATED_TERM_FRACTION


def _same_claim(a: str, b: str) -> bool:
    return " ".join(a.lower().split()) == " ".join(b.lower().split())


def _render(finding: ResearchFinding, insight_id: str, first_promoted: str, today: str, supersedes: list[str]) -> str:
    assert finding.claim is not None
    gap = " ".join(redact_secrets(finding.gap).split())
    claim = " ".join(redact_secrets(finding.claim.text).split())
    meta: list[tuple[str, FrontValue]] = [
        ("id", insight_id),
        ("kind", "research"),
        ("title", gap),
        ("question", gap),
        ("claim", claim),
        ("confidence", float(finding.confidence)),
        ("validation_method", finding.method or "single-source"),
        ("independent_sources", finding.independent_sources),
        ("sources", list(finding.locators)),
        ("first_promoted", first_promoted),
        ("last_confirmed", today),
        ("status", "active"),
    ]
    if finding.user_stated:
        meta.append(("user_stated", "true"))
    meta.extend(("supersedes", old) for old in supersedes)
    sources = "\n".join(f"- [{item.id}] {item.source_type}: {item.locator}" for item in finding.evidence)
    return (
        render_front_matter(meta, _research_value)
        + f"\n# 🔎 Research: {gap}\n\n## Finding\n\n{claim}\n\n## Sources\n\n{sources}\n\n"
        + f"## Validation\n\n- Method: {finding.method}\n- Confidence: {finding.confidence:.2f}\n"
        + f"- Independent sources: {finding.independent_sources}\n- Reason: {redact_secrets(finding.reason)}\n"
    )


def _archive_path(ws: Workspace, old: ResearchInsight) -> Path:
    """Return where a superseded insight goes: ``archive/<stem>--<claim hash>[-N].md``, a name not yet taken."""
    name = f"{old.path.stem}--{content_hash(old.claim.lower())[:8]}"
    target = ws.archive_dir / f"{name}.md"
    counter = 1
    while target.exists():
        target = ws.archive_dir / f"{name}-{counter}.md"
        counter += 1
    return target


def _archive(old: ResearchInsight, target: Path, new_id: str) -> None:
    text = old.path.read_text(encoding="utf-8")
    end = text.find("\n---\n", 4)  # the closing fence: _parse has read this file, so it is there
    head, body = text[:end], text[end:]
    head = re.sub(r"(?m)^id: .*$", f"id: {target.stem}", head)
    head = re.sub(r"(?m)^status: .*$", "status: superseded", head) + f"\nsuperseded_by: {new_id}"
    atomic_write_text(target, head + body)


def write_research_insight(
    ws: Workspace, finding: ResearchFinding, now: datetime, *, dry_run: bool = False
) -> InsightWrite | Conflict:
    """Write a kept finding as ``memory/insights/research-<slug>.md``, or return the conflict that stops it.

    See the module docstring for the related / confirm / supersede / conflict rules. With ``dry_run``, nothing is
    written and the result says what the write would do now (``archived_to`` left empty).

    Raises:
        ValueError: the finding is not kept or has no claim.
    """
    if not finding.kept or finding.claim is None:
        raise ValueError("only kept findings with a claim become insights")
    today = now.date().isoformat()
    slug = research_slug(finding.gap)
    path = ws.insights_dir / f"research-{slug}.md"

    related = [i for i in read_research_insights(ws) if _related(finding.gap, slug, i)]
    same = [i for i in related if _same_claim(i.claim, finding.claim.text)]
    different = [i for i in related if not _same_claim(i.claim, finding.claim.text)]

    new_quality = support_quality(finding.independent_sources, finding.method or "", finding.confidence)
    for old in different:
        better = new_quality > old.quality
        if better and finding.independent_sources >= SUPERSEDE_MIN_SOURCES and not old.user_stated:
            continue
        why = []
        if old.user_stated:
            why.append("the existing insight is the user's own word")
        if not better:
            why.append(
                f"its support ({_describe(new_quality)}) is not better than the existing ({_describe(old.quality)})"
            )
        if finding.independent_sources < SUPERSEDE_MIN_SOURCES:
            why.append(f"{finding.independent_sources} independent source(s), {SUPERSEDE_MIN_SOURCES} needed")
        return Conflict(finding=finding, existing=old, reason="; ".join(why))

    first_promoted = today
    for old in same:
        first_promoted = min(first_promoted, str(old.meta.get("first_promoted", today)))
    if same:
        # Confirmed, maybe under a related question: keep writing to the file that already holds it.
        path = same[0].path
    insight_id = path.stem
    targets = [_archive_path(ws, old) for old in different]

    text = _render(finding, insight_id, first_promoted, today, [target.stem for target in targets])
    archived: tuple[Path, ...] = ()
    if dry_run:
        try:
            changed = path.read_bytes() != text.encode("utf-8")
        except FileNotFoundError:
            changed = True
    else:
        for old, target in zip(different, targets, strict=True):
            _archive(old, target, insight_id)
        archived = tuple(targets)
        for old in different:
            if old.path != path:
                # The content is safe in the archive; moving it out of the active folder is not a deletion.
                old.path.unlink()
        changed = atomic_write_text(path, text)
    action: Literal["created", "confirmed", "superseded", "unchanged"]
    if different:
        action = "superseded"
    elif not changed:
        action = "unchanged"
    else:
        action = "confirmed" if same else "created"
    return InsightWrite(
        path=path,
        insight_id=insight_id,
        action=action,
        superseded=tuple(target.stem for target in targets),
        archived_to=archived,
    )
