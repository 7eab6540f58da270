"""The inputs of the OpenClaw 2026.9.6 golden cases: workspace notes, MEMORY.md, recall store, phase signals, now.

Deterministic: no clock, and the one generated case (5,000 entries) draws from ``random.Random`` with a fixed seed.
``compat/openclaw/run.py`` runs OpenClaw on every case and writes the goldens; the test helper
``tests/memory/recall/openclaw_golden.py`` imports this module only to rebuild the generated case.

A promotion case yields ``store-read.json``, ``rank-promote.json``, ``rank-sweep.json``, ``promote/`` and ``sweep/``.
A record case (one with ``steps``) yields ``record/``. The golden README lists each case's purpose.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass, field
from typing import Any

NOW = "2026-04-15T10:00:00.000Z"

Json = dict[str, Any]


class _Missing:
    """Marks a field left out of a stored entry (different from an empty value)."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


@dataclass(frozen=True, kw_only=True)
class Case:
    """One golden case: everything OpenClaw is given."""

    name: str
    """Directory name under the golden root."""
    purpose: str
    """One line: what the case pins down."""
    now: str = NOW
    """The frozen instant (ISO, UTC) every OpenClaw call sees."""
    notes: dict[str, str] = field(default_factory=dict)
    """Workspace files other than MEMORY.md, by workspace-relative path."""
    memory: str | None = None
    """MEMORY.md's text, or None when the file is absent."""
    store: Json | None = None
    """The recall store as a JSON v1 store, imported row by row into the state DB."""
    phase_signals: Json | None = None
    """The phase-signal store, imported the same way."""
    options: Json = field(default_factory=dict)
    """Overrides: ``{"rank": {...}, "apply": {...}}`` merged over the driver's defaults."""
    steps: list[Json] | None = None
    """Record cases only: the recordShortTermRecalls calls, in order."""
    generator: Json | None = None
    """For a generated case: how to rebuild notes and store (``{"name", "seed", "count"}``)."""

    @property
    def kind(self) -> str:
        """``record`` for a recording sequence, else ``promotion``."""
        return "record" if self.steps is not None else "promotion"


def query_hash(query: str) -> str:
    """OpenClaw's hashQuery: sha1 of the trimmed, lowercased query, first 12 hex."""
    return hashlib.sha1(query.strip().lower().encode()).hexdigest()[:12]


def claim_hash(snippet: str) -> str:
    """OpenClaw's buildClaimHash: sha1 of the whitespace-normalized snippet, first 12 hex."""
    return hashlib.sha1(" ".join(snippet.split()).encode()).hexdigest()[:12]


def daily_query(day: str) -> str:
    """The query light-sleep ingestion records daily signals under."""
    return f"__dreaming_daily__:{day}"


def entry(
    path: str,
    start: int,
    end: int,
    snippet: str,
    *,
    recalls: int = 0,
    daily: int = 0,
    grounded: int = 0,
    total: float | None = None,
    max_score: float = 0.9,
    first: str = "2026-04-10T09:00:00.000Z",
    last: str = "2026-04-14T18:00:00.000Z",
    queries: list[str] | None = None,
    user: Any = MISSING,
    days: list[str] | None = None,
    tags: Any = MISSING,
    provenance: Any = MISSING,
    claim: Any = MISSING,
    project: str | None = None,
    promoted: str | None = None,
    key: str | None = None,
) -> Json:
    """A stored recall entry, fields in the order OpenClaw writes them; MISSING leaves a field out.

    ``queries`` are query strings (hashed here); ``user`` is the list of user queries (hashed) or MISSING.
    """
    signals = recalls + daily + grounded
    value: Json = {
        "key": key or f"memory:{path}:{start}:{end}",
        "path": path,
        "startLine": start,
        "endLine": end,
        "source": "memory",
        "snippet": snippet,
        "recallCount": recalls,
        "dailyCount": daily,
        "groundedCount": grounded,
        "totalScore": round(0.8 * signals, 10) if total is None else total,
        "maxScore": max_score,
        "firstRecalledAt": first,
        "lastRecalledAt": last,
        "queryHashes": [query_hash(q) for q in (queries or [])],
    }
    if user is not MISSING:
        value["userQueryHashes"] = [query_hash(q) for q in user]
    value["recallDays"] = days if days is not None else [last[:10]]
    if tags is not MISSING:
        value["conceptTags"] = tags
    if provenance is not MISSING:
        value["provenance"] = provenance
    if claim is not MISSING:
        value["claimHash"] = claim_hash(snippet) if claim is True else claim
    if project is not None:
        value["projectKey"] = project
    if promoted is not None:
        value["promotedAt"] = promoted
    return value


def store(*entries: Json, updated_at: str | None = "2026-04-14T18:00:00.000Z") -> Json:
    """A JSON v1 recall store; ``updated_at=None`` leaves out the meta row."""
    value: Json = {"version": 1}
    if updated_at is not None:
        value["updatedAt"] = updated_at
    value["entries"] = {item["key"]: item for item in entries}
    return value


def without(value: Json, *fields: str) -> Json:
    """A copy of ``value`` without ``fields``."""
    return {k: v for k, v in value.items() if k not in fields}


def prov(origin: str, kind: str = "interactive", observed: int | None = 1776160800000, **extra: Any) -> Json:
    """A provenance object (observedAt in ms; None leaves it out)."""
    value: Json = {"originClass": origin, "sessionKind": kind}
    if observed is not None:
        value["observedAt"] = observed
    value.update(extra)
    return value


AGENT = prov("agent")
OWNER = prov("owner")

USER_QUERIES = ["router vlan", "iot network", "omada setup", "which vlan for cameras", "gateway port"]

NOTE_0410 = """# 2026-04-10

## Network
- Configured VLAN 10 on the Omada router for IoT devices.
- Gateway binds loopback and port 18789.

## Backups
Move backups to S3 Glacier every Sunday night.
The restic repository lives on the NAS under /volume1/restic.
"""

NOTE_0412 = """# Sunday, April 12

Rotated the staging Postgres credentials; the vault path is secret/staging/pg.
Alice prefers async standups on Tuesdays.
"""

NOTE_0414 = """# 2026-04-14

- Deploy freeze starts Friday 18:00 UTC.
- The on-call rotation moves to PagerDuty next week.
"""

BASIC_NOTES = {"memory/2026-04-10.md": NOTE_0410, "memory/2026-04-12.md": NOTE_0412, "memory/2026-04-14.md": NOTE_0414}


def _basic() -> Case:
    days3 = ["2026-04-10", "2026-04-12", "2026-04-14"]
    return Case(
        name="basic-mixed-counters",
        purpose="recall, daily and grounded counters mixed; only user recalls count as unique queries",
        notes=BASIC_NOTES,
        store=store(
            entry(
                "memory/2026-04-10.md",
                4,
                4,
                "- Configured VLAN 10 on the Omada router for IoT devices.",
                recalls=5,
                total=4.6,
                max_score=0.97,
                queries=USER_QUERIES[:4],
                user=USER_QUERIES[:4],
                days=days3,
                provenance=AGENT,
                claim=True,
            ),
            entry(
                "memory/2026-04-10.md",
                5,
                5,
                "- Gateway binds loopback and port 18789.",
                recalls=3,
                daily=2,
                total=3.64,
                queries=[*USER_QUERIES[2:5], daily_query("2026-04-10"), daily_query("2026-04-12")],
                user=USER_QUERIES[2:5],
                days=days3,
                provenance=OWNER,
                claim=True,
            ),
            entry(
                "memory/2026-04-10.md",
                8,
                8,
                "Move backups to S3 Glacier every Sunday night.",
                daily=4,
                total=2.48,
                max_score=0.62,
                queries=[daily_query(d) for d in ["2026-04-10", "2026-04-11", "2026-04-12", "2026-04-13"]],
                days=["2026-04-10", "2026-04-11", "2026-04-12", "2026-04-13"],
                provenance=AGENT,
            ),
            entry(
                "memory/2026-04-10.md",
                9,
                9,
                "The restic repository lives on the NAS under /volume1/restic.",
                grounded=3,
                total=2.76,
                max_score=0.92,
                queries=["restic repository location", "backup target"],
                days=days3,
                provenance=AGENT,
                claim=True,
            ),
            entry(
                "memory/2026-04-12.md",
                3,
                3,
                "Rotated the staging Postgres credentials; the vault path is secret/staging/pg.",
                recalls=3,
                grounded=2,
                total=4.3,
                max_score=0.95,
                first="2026-04-12T08:00:00.000Z",
                last="2026-04-15T08:30:00.000Z",
                queries=["postgres credentials", "staging vault", "pg secret path"],
                user=["postgres credentials", "staging vault", "pg secret path"],
                days=["2026-04-12", "2026-04-13", "2026-04-15"],
                provenance=AGENT,
                claim=True,
            ),
            entry(
                "memory/2026-04-12.md",
                4,
                4,
                "Alice prefers async standups on Tuesdays.",
                recalls=1,
                total=0.55,
                max_score=0.55,
                queries=["standup preference"],
                user=["standup preference"],
                provenance=AGENT,
            ),
            entry(
                "memory/2026-04-14.md",
                3,
                3,
                "- Deploy freeze starts Friday 18:00 UTC.",
                recalls=4,
                total=3.2,
                first="2026-04-14T08:00:00.000Z",
                last="2026-04-14T20:00:00.000Z",
                queries=["deploy freeze", "release window", "friday freeze"],
                days=["2026-04-14"],
                provenance=OWNER,
            ),
        ),
    )


def _user_query_hashes() -> Case:
    many = [f"query number {i}" for i in range(40)]
    note = "# Notes\n\n" + "".join(f"Fact {i}: the {word} service runs on host {i}.\n" for i, word in enumerate(
        ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
    ))
    path = "memory/2026-04-13.md"

    def fact(i: int) -> str:
        word = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"][i]
        return f"Fact {i}: the {word} service runs on host {i}."

    blank_and_dupes = entry(path, 10, 10, fact(7), recalls=4, total=3.6, queries=USER_QUERIES[:4], provenance=AGENT)
    blank_and_dupes["userQueryHashes"] = [" ", query_hash("a"), query_hash("a"), "", 7, f" {query_hash('b')} "]
    return Case(
        name="user-query-hashes",
        purpose="userQueryHashes missing (copied only when daily and grounded are 0), present, empty, over 32",
        notes={path: note},
        store=store(
            entry(path, 3, 3, fact(0), recalls=4, total=3.7, queries=USER_QUERIES[:4], provenance=AGENT),
            entry(
                path, 4, 4, fact(1), recalls=3, daily=1, total=3.2, queries=[*USER_QUERIES[:3], daily_query("2026-04-13")],
                provenance=AGENT,
            ),
            entry(path, 5, 5, fact(2), recalls=3, grounded=1, total=3.3, queries=USER_QUERIES[:4], provenance=AGENT),
            entry(
                path, 6, 6, fact(3), recalls=4, daily=1, total=4.0, queries=USER_QUERIES, user=USER_QUERIES[:3],
                provenance=AGENT,
            ),
            entry(path, 7, 7, fact(4), recalls=4, total=3.7, queries=USER_QUERIES[:4], user=[], provenance=AGENT),
            entry(path, 8, 8, fact(5), recalls=9, total=8.5, queries=many, provenance=AGENT),
            entry(path, 9, 9, fact(6), recalls=9, total=8.5, queries=many[:5], user=many, provenance=AGENT),
            blank_and_dupes,
        ),
    )


def _concept_tags() -> Case:
    path = "memory/2026-04-11.md"
    note = """# 2026-04-11

The Kubernetes ingress-nginx controller terminates TLS for grafana.example.com.
Embedding model switched to text-embedding-3-small via the OpenAI gateway.
Rotate the api_key for the v2.3 build/deploy pipeline monthly.
Nothing here but small words: it is on.
"""
    upper = entry(
        path, 4, 4, "Embedding model switched to text-embedding-3-small via the OpenAI gateway.", recalls=4,
        total=3.6, queries=USER_QUERIES[:3], user=USER_QUERIES[:3], provenance=AGENT,
        tags=["OpenAI", "openai", " Gateway ", "EMBEDDING", "a", "b", "c", "d", "e", "f", 3, ""],
    )
    return Case(
        name="concept-tags-empty",
        purpose="conceptTags stored as [] (kept on read, re-derived by repair), missing (derived), messy lists",
        notes={path: note},
        store=store(
            entry(
                path, 3, 3, "The Kubernetes ingress-nginx controller terminates TLS for grafana.example.com.",
                recalls=4, total=3.6, queries=USER_QUERIES[:3], user=USER_QUERIES[:3], provenance=AGENT, tags=[],
            ),
            upper,
            entry(
                path, 5, 5, "Rotate the api_key for the v2.3 build/deploy pipeline monthly.", recalls=4, total=3.6,
                queries=USER_QUERIES[:3], user=USER_QUERIES[:3], provenance=AGENT,
            ),
            entry(
                path, 6, 6, "Nothing here but small words: it is on.", recalls=4, total=3.6,
                queries=USER_QUERIES[:3], user=USER_QUERIES[:3], provenance=AGENT, tags=[],
            ),
        ),
    )


def _cjk() -> Case:
    snippets = {
        "memory/2026-04-13-ja.md": [
            "障害対応ルーター設定とバックアップ確認。路由器备份与网关同步。",
            "本番サーバーの証明書を更新した。期限は来年三月。",
        ],
        "memory/2026-04-13-zh.md": ["数据库迁移已经完成，明天检查备份任务。", "路由器固件升级到 v2.1，网关重启后正常。"],
        "memory/2026-04-13-ko.md": ["라우터 백업을 매주 일요일에 실행한다.", "게이트웨이 장애대응 절차를 문서화했다."],
        "memory/2026-04-13-mixed.md": ["Grafana 대시보드와 Prometheus 알림을 연결했다 (alertmanager v0.27)."],
    }
    notes = {p: "# Notes\n\n" + "\n".join(lines) + "\n" for p, lines in snippets.items()}
    entries = []
    for p, lines in snippets.items():
        for i, text in enumerate(lines):
            entries.append(
                entry(
                    p, 3 + i, 3 + i, text, recalls=4, total=3.6, queries=USER_QUERIES[:3], user=USER_QUERIES[:3],
                    provenance=AGENT, claim=True,
                )
            )
    return Case(
        name="cjk-snippets",
        purpose="Chinese, Japanese and Korean snippets: derived concept tags (ICU word segmentation), bullets",
        notes=notes,
        store=store(*entries),
    )


def _deleted_note() -> Case:
    return Case(
        name="deleted-note",
        purpose="an entry whose note file is gone: ranked, not promoted (rehydration fails), removed by repair",
        notes={"memory/2026-04-10.md": NOTE_0410},
        store=store(
            entry(
                "memory/2026-04-10.md", 4, 4, "- Configured VLAN 10 on the Omada router for IoT devices.", recalls=5,
                total=4.6, queries=USER_QUERIES[:4], user=USER_QUERIES[:4],
                days=["2026-04-10", "2026-04-12", "2026-04-14"], provenance=AGENT,
            ),
            entry(
                "memory/2026-04-09.md", 3, 3, "The printer on floor 2 needs a new fuser.", recalls=5, total=4.6,
                queries=USER_QUERIES[:4], user=USER_QUERIES[:4], days=["2026-04-09", "2026-04-12", "2026-04-14"],
                provenance=AGENT,
            ),
        ),
        phase_signals={
            "version": 1,
            "updatedAt": "2026-04-14T03:00:00.000Z",
            "entries": {
                "memory:memory/2026-04-09.md:3:3": {
                    "key": "memory:memory/2026-04-09.md:3:3",
                    "lightHits": 2,
                    "remHits": 1,
                    "lastLightAt": "2026-04-14T03:00:00.000Z",
                    "lastRemAt": "2026-04-14T03:00:00.000Z",
                },
                "memory:memory/2026-04-10.md:4:4": {
                    "key": "memory:memory/2026-04-10.md:4:4",
                    "lightHits": 1,
                    "remHits": 0,
                    "lastLightAt": "2026-04-13T03:00:00.000Z",
                },
            },
        },
    )


def _moved_lines() -> Case:
    note = """# 2026-04-08

## Morning
Coffee with the platform team.
Discussed the incident review schedule.

## Decisions
- The billing service moves to Postgres 17 in May.
- Feature flags live in LaunchDarkly, not in config files.

The search cluster has 3 data nodes and 1 coordinator.
"""
    return Case(
        name="moved-lines",
        purpose="text moved in the note since it was recorded: rehydration finds the new range",
        notes={"memory/2026-04-08.md": note},
        store=store(
            entry(
                "memory/2026-04-08.md", 4, 4, "- The billing service moves to Postgres 17 in May.", recalls=5, total=4.6,
                queries=USER_QUERIES[:4], user=USER_QUERIES[:4], days=["2026-04-08", "2026-04-10", "2026-04-14"],
                provenance=AGENT,
            ),
            entry(
                "memory/2026-04-08.md", 2, 3,
                "- Feature flags live in LaunchDarkly, not in config files. The search cluster has 3 data nodes",
                recalls=5, total=4.6, queries=USER_QUERIES[:4], user=USER_QUERIES[:4],
                days=["2026-04-08", "2026-04-10", "2026-04-14"], provenance=AGENT,
            ),
            entry(
                "memory/2026-04-08.md", 12, 12, "The search cluster has 3 data nodes and 1 coordinator.", recalls=5,
                total=4.6, queries=USER_QUERIES[:4], user=USER_QUERIES[:4],
                days=["2026-04-08", "2026-04-10", "2026-04-14"], provenance=AGENT,
            ),
        ),
    )


def _multi_line() -> Case:
    note = """# 2026-04-09

## Vendor call
- Quote is valid until May 31.
- Support tier: gold, 4h response.
- Renewal owner: Priya.

## Capacity plan
Storage grows about 2 TB per month.
We need a second array before Q3.

1. Order disks
2. Schedule the migration window
"""
    path = "memory/2026-04-09.md"
    return Case(
        name="multi-line-snippets",
        purpose="snippets over several lines: plain join, list items joined with '; ', heading context",
        notes={path: note},
        store=store(
            entry(
                path, 4, 6, "- Quote is valid until May 31. - Support tier: gold, 4h response. - Renewal owner: Priya.",
                recalls=4, total=3.6, queries=USER_QUERIES[:3], user=USER_QUERIES[:3], provenance=AGENT,
            ),
            entry(
                path, 4, 6,
                "Vendor call: Quote is valid until May 31.; Support tier: gold, 4h response.; Renewal owner: Priya.",
                recalls=4, total=3.6, queries=USER_QUERIES[1:4], user=USER_QUERIES[1:4], provenance=AGENT,
                key=f"memory:{path}:4:6:ctx",
            ),
            entry(
                path, 9, 10, "Storage grows about 2 TB per month. We need a second array before Q3.", recalls=4,
                total=3.6, queries=USER_QUERIES[:3], user=USER_QUERIES[:3], provenance=AGENT,
            ),
            entry(
                path, 12, 13, "Order disks; Schedule the migration window", recalls=4, total=3.6,
                queries=USER_QUERIES[2:5], user=USER_QUERIES[2:5], provenance=AGENT,
            ),
        ),
    )


def _blank_first_line() -> Case:
    note = "# 2026-04-07\n\nThe VPN concentrator was replaced with a WireGuard gateway.\nUsers must re-import profiles.\n"
    return Case(
        name="blank-first-line",
        purpose="§7.1: recorded at 2:2, line 2 now blank and the text on line 3: the bullet says 2-3",
        notes={"memory/2026-04-07.md": note},
        store=store(
            entry(
                "memory/2026-04-07.md", 2, 2, "The VPN concentrator was replaced with a WireGuard gateway.",
                recalls=5, total=4.6, queries=USER_QUERIES[:4], user=USER_QUERIES[:4],
                days=["2026-04-07", "2026-04-10", "2026-04-14"], provenance=AGENT,
            ),
        ),
    )


def _legacy_paths() -> Case:
    notes = {
        "memory/2026-04-07.md": "# 2026-04-07\n\nThe lab switch uses LACP on ports 47 and 48.\n",
        "memory/2026-04-06.md": "# 2026-04-06\n\nBadge readers on floor 3 are offline until Monday.\n",
        "memory/2026-04-05.md": "# 2026-04-05\n\nThe DNS resolver moved to 10.0.0.53.\n",
    }
    return Case(
        name="legacy-bare-paths",
        purpose="legacy bare '2026-04-07.md', './memory/...' and backslash paths: read, rehydrated, bullet text",
        notes=notes,
        store=store(
            entry(
                "2026-04-07.md", 3, 3, "The lab switch uses LACP on ports 47 and 48.", recalls=5, total=4.6,
                queries=USER_QUERIES[:4], user=USER_QUERIES[:4], days=["2026-04-07", "2026-04-10", "2026-04-14"],
                provenance=AGENT,
            ),
            entry(
                "./memory/2026-04-06.md", 3, 3, "Badge readers on floor 3 are offline until Monday.", recalls=5,
                total=4.6, queries=USER_QUERIES[:4], user=USER_QUERIES[:4],
                days=["2026-04-06", "2026-04-10", "2026-04-14"], provenance=AGENT,
            ),
            entry(
                "memory\\2026-04-05.md", 3, 3, "The DNS resolver moved to 10.0.0.53.", recalls=5, total=4.6,
                queries=USER_QUERIES[:4], user=USER_QUERIES[:4], days=["2026-04-05", "2026-04-10", "2026-04-14"],
                provenance=AGENT,
            ),
        ),
    )


def _already_promoted() -> Case:
    key_reconciled = "memory:memory/2026-04-10.md:5:5"
    memory = (
        "# Long-Term Memory\n\n\n## Promoted From Short-Term Memory (2026-04-12)\n\n"
        f"<!-- openclaw-memory-promotion:{key_reconciled} -->\n"
        "- Gateway binds loopback and port 18789. [score=0.801 signals=4 recalls=4 avg=0.850 "
        "source=memory/2026-04-10.md:5-5] <!-- trigger: gateway, loopback, 18789 --> <!-- importance: 8 -->\n"
    )
    return Case(
        name="already-promoted",
        purpose="promotedAt entries are skipped; an entry already marked in MEMORY.md is reconciled, not appended",
        notes=BASIC_NOTES,
        memory=memory,
        store=store(
            entry(
                "memory/2026-04-10.md", 4, 4, "- Configured VLAN 10 on the Omada router for IoT devices.", recalls=5,
                total=4.6, queries=USER_QUERIES[:4], user=USER_QUERIES[:4],
                days=["2026-04-10", "2026-04-12", "2026-04-14"], provenance=AGENT,
                promoted="2026-04-12T03:00:00.000Z",
            ),
            entry(
                "memory/2026-04-10.md", 5, 5, "- Gateway binds loopback and port 18789.", recalls=5, total=4.6,
                queries=USER_QUERIES[:4], user=USER_QUERIES[:4], days=["2026-04-10", "2026-04-12", "2026-04-14"],
                provenance=AGENT,
            ),
            entry(
                "memory/2026-04-14.md", 3, 3, "- Deploy freeze starts Friday 18:00 UTC.", recalls=5, total=4.6,
                queries=USER_QUERIES[:4], user=USER_QUERIES[:4], days=["2026-04-10", "2026-04-12", "2026-04-14"],
                provenance=AGENT,
            ),
        ),
    )


def _contaminated() -> Case:
    path = "memory/2026-04-12.md"
    bad = [
        "Note <!-- openclaw-memory-promotion:memory:memory/2026-04-01.md:1:1 --> copied",
        "Candidate: Default to action. confidence: 0.76 evidence: memory/2026-04-08.md:1-1 recalls: 3 status: staged",
        "@@ -1,1 - Candidate: move backups weekly. confidence: 0.70 evidence: memory/.dreams/session-corpus/"
        "2026-04-10.txt:1-1 recalls: 2 status: staged",
        "[main/dreaming-narrative-light.jsonl#L1] User: Write a dream diary entry from these memory fragments:",
        "Session Key agent:main:abc then Session ID 1234",
        "Conversation Summary: we talked about routers",
        "User: what is the gateway port?",
        "Save important context from this session to the daily memory file. STRICT RULES: only facts",
        "- Router VLAN fact [score=0.812 signals=4 recalls=4 avg=0.900 source=memory/2026-04-10.md:4-4]",
        "Reflections: Theme: assistant. confidence: 1.00 evidence: memory/2026-04-09.md:2-2 note: reflection",
    ]
    good = [
        "The Candidate profile for Josh Rhoden shows he runs the network admin team.",
        "Candidate: move backups weekly. confidence: 0.76 evidence: memory/2026-04-08.md:1-1",
    ]
    entries = [
        entry(path, 10 + i, 10 + i, text, recalls=5, total=4.6, queries=USER_QUERIES[:4], user=USER_QUERIES[:4],
              provenance=AGENT)
        for i, text in enumerate(bad + good)
    ]
    note = "# Notes\n\n" + "\n" * 7 + "\n".join(bad + good) + "\n"
    return Case(
        name="contaminated-snippets",
        purpose="dreaming output, transcripts, prompts and promotion metadata are dropped on read; look-alikes kept",
        notes={path: note},
        store=store(*entries),
    )


def _duplicate_days() -> Case:
    path = "memory/2026-04-10.md"
    return Case(
        name="duplicate-recall-days",
        purpose="recallDays kept with duplicates on read (ranking counts them), over 16, ISO times and junk",
        notes={path: NOTE_0410},
        store=store(
            entry(
                path, 4, 4, "- Configured VLAN 10 on the Omada router for IoT devices.", recalls=5, total=4.6,
                queries=USER_QUERIES[:4], user=USER_QUERIES[:4], days=["2026-04-10", "2026-04-10", "2026-04-12"],
                provenance=AGENT,
            ),
            entry(
                path, 5, 5, "- Gateway binds loopback and port 18789.", recalls=5, total=4.6, queries=USER_QUERIES[:4],
                user=USER_QUERIES[:4], days=[f"2026-03-{d:02d}" for d in range(1, 21)], provenance=AGENT,
            ),
            entry(
                path, 8, 8, "Move backups to S3 Glacier every Sunday night.", recalls=5, total=4.6,
                queries=USER_QUERIES[:4], user=USER_QUERIES[:4],
                days=["2026-04-11T23:59:59Z", " 2026-04-13 ", "garbage", 20260414, "2026-4-14", "2026-04-14"],
                provenance=AGENT,
            ),
            entry(
                path, 9, 9, "The restic repository lives on the NAS under /volume1/restic.", recalls=5, total=4.6,
                queries=USER_QUERIES[:4], user=USER_QUERIES[:4], days=[], last="2026-04-13T12:00:00.000Z",
                provenance=AGENT,
            ),
        ),
    )


def _provenance() -> Case:
    path = "memory/2026-04-10.md"
    corpus = "memory/.dreams/session-corpus/2026-04-11.txt"
    corpus_note = "User: hello\nAssistant: The staging cluster is in eu-west-1.\nUser: thanks\n"
    lines = NOTE_0410.splitlines()

    def e(line: int, provenance: Any, **kw: Any) -> Json:
        return entry(
            path, line, line, lines[line - 1], recalls=5, total=4.6, queries=USER_QUERIES[:4], user=USER_QUERIES[:4],
            days=["2026-04-10", "2026-04-12", "2026-04-14"], provenance=provenance, **kw,
        )

    return Case(
        name="provenance-variety",
        purpose="owner/agent/system/untrusted, invalid and absent provenance; session kinds; sweep's trust filter",
        notes={path: NOTE_0410, corpus: corpus_note},
        store=store(
            e(4, OWNER),
            e(5, prov("agent", "cron", observed=None)),
            e(8, prov("system", "heartbeat")),
            e(9, prov("untrusted", "subagent")),
            e(1, prov("admin", "daemon", supersedesKey="  memory:memory/2026-04-01.md:1:1  ")),
            e(3, MISSING),
            e(7, prov("owner", "unknown", observed="1776160800000")),
            entry(
                corpus, 2, 2, "Assistant: The staging cluster is in eu-west-1.", recalls=5, total=4.6,
                queries=USER_QUERIES[:4], user=USER_QUERIES[:4], days=["2026-04-11", "2026-04-12", "2026-04-14"],
                provenance=prov("agent", "interactive"),
            ),
            entry(
                corpus, 2, 2, "Assistant: The staging cluster is in eu-west-1.", recalls=5, total=4.6,
                queries=USER_QUERIES[1:5], user=USER_QUERIES[1:5], days=["2026-04-11", "2026-04-12", "2026-04-14"],
                provenance=prov("agent", "cron"), key=f"memory:{corpus}:2:2:cron",
            ),
        ),
    )


def _project_keys() -> Case:
    lines = NOTE_0410.splitlines()
    path = "memory/2026-04-10.md"

    def e(line: int, project: str | None) -> Json:
        return entry(
            path, line, line, lines[line - 1], recalls=5, total=4.6, queries=USER_QUERIES[:4], user=USER_QUERIES[:4],
            days=["2026-04-10", "2026-04-12", "2026-04-14"], provenance=AGENT, project=project,
        )

    return Case(
        name="project-key-groups",
        purpose="projectKey normalization and ### Global / ### Project: groups in the promoted section",
        notes={path: NOTE_0410},
        store=store(
            e(4, "Acme/Web"),
            e(5, " acme/api ;Zeta/Tool; acme/api;;"),
            e(8, None),
            e(9, "path:/srv/repos/infra"),
        ),
    )


PROMOTABLE = {
    "recalls": 5,
    "total": 4.6,
    "queries": USER_QUERIES[:4],
    "user": USER_QUERIES[:4],
    "days": ["2026-04-10", "2026-04-12", "2026-04-14"],
    "provenance": AGENT,
}


def _promotable_basic() -> Json:
    return store(entry("memory/2026-04-10.md", 4, 4, "- Configured VLAN 10 on the Omada router for IoT devices.",
                       **PROMOTABLE))


def _prior_section(date: str, key: str, text: str) -> str:
    return (
        f"\n## Promoted From Short-Term Memory ({date})\n\n<!-- openclaw-memory-promotion:{key} -->\n"
        f"- {text} [score=0.800 signals=5 recalls=5 avg=0.900 source=memory/{date}.md:1-1] "
        "<!-- trigger: legacy --> <!-- importance: 8 -->\n"
    )


def _memory_variants() -> list[Case]:
    notes = {"memory/2026-04-10.md": NOTE_0410}
    filler = "Older note. " * 200
    sections = "".join(
        _prior_section(f"2026-03-{day:02d}", f"memory:memory/2026-03-{day:02d}.md:1:1", f"legacy-{day} {filler}")
        for day in (1, 8, 15, 22)
    )
    big_sections = "".join(
        _prior_section(f"2026-03-{day:02d}", f"memory:memory/2026-03-{day:02d}.md:1:1", f"legacy-{day} {filler}")
        for day in (1, 8)
    )
    return [
        Case(name="memory-md-empty", purpose="MEMORY.md exists and is empty: header added",
             notes=notes, memory="", store=_promotable_basic()),
        Case(name="memory-md-whitespace", purpose="MEMORY.md holds only whitespace: header added, whitespace kept",
             notes=notes, memory="  \n\n\t\n", store=_promotable_basic()),
        Case(name="memory-md-no-trailing-newline",
             purpose="MEMORY.md without a final newline: one newline added before the section",
             notes=notes, memory="# Long-Term Memory\n\n- The office wifi is Corp-5G.", store=_promotable_basic()),
        Case(name="memory-md-existing-sections",
             purpose="MEMORY.md with user text and earlier promotion sections: appended after one blank line",
             notes=notes,
             memory="# Long-Term Memory\n\nUser-written intro.\n" + _prior_section(
                 "2026-04-01", "memory:memory/2026-04-01.md:3:3", "The old NAS is retired."
             ) + _prior_section("2026-04-05", "memory:memory/2026-04-05.md:2:2", "Printers use DHCP reservations."),
             store=_promotable_basic()),
        Case(name="memory-md-over-budget-compacts",
             purpose="over the 10k budget: the oldest promotion section is dropped (at most 25% of prior entries)",
             notes=notes, memory="# Long-Term Memory\n\nUser-written intro.\n" + sections,
             store=_promotable_basic()),
        Case(name="memory-md-over-budget-rejects",
             purpose="over the 10k budget even after compaction: the candidate is rejected ('memory budget')",
             notes=notes, memory="# Long-Term Memory\n\n" + ("User fact. " * 700) + "\n" + big_sections,
             store=_promotable_basic()),
        Case(name="memory-md-small-budget",
             purpose="memoryFileMaxChars 1400 (a configured bootstrapMaxChars): compaction against a small budget",
             notes=notes,
             memory="# Long-Term Memory\n" + _prior_section(
                 "2026-04-10", "memory:memory/2026-04-10.md:1:1", "legacy-old " + "x" * 600
             ) + _prior_section("2026-04-11", "memory:memory/2026-04-11.md:1:1", "legacy-new " + "y" * 100)
             + _prior_section("2026-04-12", "memory:memory/2026-04-12.md:1:1", "legacy-newer " + "z" * 50)
             + _prior_section("2026-04-13", "memory:memory/2026-04-13.md:1:1", "legacy-newest " + "w" * 40),
             options={"apply": {"memoryFileMaxChars": 1400}},
             store=_promotable_basic()),
    ]


def _rounding_ties() -> Case:
    # Every score component is exact (10 signals, recalled now, one recall day), so the weighted sum can land on a
    # rounding tie: 0.8125 (toFixed(3): JS "0.813", Python "0.812") and 0.85 (x10 = 8.5: Math.round 9, round 8).
    path = "memory/2026-04-15.md"
    facts = [f"Tie fact {name}: the {name} queue drains every {i + 2} minutes." for i, name in
             enumerate(["alpha", "beta", "gamma", "delta", "epsilon"])]
    note = "# 2026-04-15\n\n" + "\n".join(facts) + "\n"

    def e(i: int, total: float, users: int, ntags: int) -> Json:
        tags = ["queue", "drain", "minutes", "worker", "latency", "backlog", "consumer", "broker"][:ntags]
        return entry(
            path, 3 + i, 3 + i, facts[i], recalls=10, total=total, max_score=1.0, first=NOW, last=NOW,
            queries=USER_QUERIES[:users], user=USER_QUERIES[:users], days=["2026-04-15"], tags=tags,
            provenance=AGENT,
        )

    return Case(
        name="js-rounding-ties",
        purpose="scores 0.8125 and 0.85 and avg 0.8125: JS toFixed(3) and Math.round tie rules in the bullet",
        notes={path: note},
        store=store(
            e(0, 9.75, 3, 2),  # score 0.8125
            e(1, 10.0, 3, 5),  # score 0.85 (x10 = 8.5)
            e(2, 8.125, 5, 8),  # avg 0.8125
            e(3, 9.0, 4, 5),  # score 0.85 again, different components
            e(4, 7.0, 3, 4),  # score 0.75 (x10 = 7.5, both round to 8)
        ),
    )


def _sort_ties() -> Case:
    text = "Shared fact: the build cache lives on the fast SSD pool."
    paths = [
        "memory/2026-04-10-b.md",
        "memory/2026-04-10-B.md",
        "memory/2026-04-10_a.md",
        "memory/2026-04-10-a.md",
        "memory/2026-04-10-é.md",
        "memory/2026-04-10-e.md",
        "memory/team/2026-04-10.md",
        "memory/2026-04-10-10.md",
        "memory/2026-04-10-9.md",
    ]
    notes = {p: f"# Notes\n\n{text}\n" for p in paths}
    entries = [
        entry(p, 3, 3, text, recalls=5, total=4.6, queries=USER_QUERIES[:4], user=USER_QUERIES[:4],
              days=["2026-04-10", "2026-04-12", "2026-04-14"], provenance=AGENT, tags=["build", "cache"])
        for p in paths
    ]
    return Case(
        name="sort-ties-locale",
        purpose="equal score and recallCount: path order by ICU localeCompare (case, accents, '-' vs '_', digits)",
        notes=notes,
        store=store(*entries),
        options={"rank": {"limit": 20}, "apply": {"limit": 20}},
    )


def _phase_signals() -> Case:
    lines = NOTE_0410.splitlines()
    path = "memory/2026-04-10.md"
    keys = [f"memory:{path}:{n}:{n}" for n in (4, 5, 8, 9)]

    def e(line: int) -> Json:
        return entry(path, line, line, lines[line - 1], recalls=3, total=2.1, max_score=0.75,
                     queries=USER_QUERIES[:3], user=USER_QUERIES[:3], days=["2026-04-13", "2026-04-14"],
                     provenance=AGENT, tags=["network", "router"])

    return Case(
        name="phase-signals",
        purpose="light/REM phase boost (strength, 14-day recency), zero-hit and unknown-key signals dropped",
        notes={path: NOTE_0410},
        store=store(e(4), e(5), e(8), e(9)),
        phase_signals={
            "version": 1,
            "updatedAt": "2026-04-15T03:00:00.000Z",
            "entries": {
                keys[0]: {"key": keys[0], "lightHits": 3, "remHits": 2, "lastLightAt": "2026-04-15T03:00:00.000Z",
                          "lastRemAt": "2026-04-15T03:05:00.000Z"},
                keys[1]: {"key": keys[1], "lightHits": 12000, "remHits": 0, "lastLightAt": "2026-03-01T03:00:00.000Z"},
                keys[2]: {"key": keys[2], "lightHits": 0, "remHits": 0, "lastLightAt": "2026-04-15T03:00:00.000Z"},
                keys[3]: {"key": keys[3], "lightHits": 1, "remHits": 4, "lastRemAt": "not-a-date",
                          "lastRemConsideredAt": "2026-04-15T03:10:00.000Z"},
                "memory:memory/2026-04-01.md:1:1": {"key": "memory:memory/2026-04-01.md:1:1", "lightHits": 5,
                                                    "remHits": 5, "lastLightAt": "2026-04-15T03:00:00.000Z"},
            },
        },
    )


def _long_snippets() -> Case:
    path = "memory/2026-04-14.md"
    sentence = "The quarterly capacity review found the west region at 71 percent of planned storage. "
    long_text = (sentence * 12).strip()
    emoji_text = "x" * 799 + "😀" + " tail words after the cap"
    no_sentence = ("word " * 200).strip()
    note = "# Notes\n\n" + long_text + "\n" + emoji_text + "\n" + no_sentence + "\n"
    return Case(
        name="long-snippets",
        purpose="the 800-code-unit snippet cap (never splitting a surrogate pair) and the 640-char promoted text",
        notes={path: note},
        store=store(
            entry(path, 3, 3, long_text, recalls=5, total=4.6, queries=USER_QUERIES[:4], user=USER_QUERIES[:4],
                  days=["2026-04-10", "2026-04-12", "2026-04-14"], provenance=AGENT),
            entry(path, 4, 4, emoji_text, recalls=5, total=4.6, queries=USER_QUERIES[:4], user=USER_QUERIES[:4],
                  days=["2026-04-10", "2026-04-12", "2026-04-14"], provenance=AGENT),
            entry(path, 5, 5, no_sentence, recalls=5, total=4.6, queries=USER_QUERIES[:4], user=USER_QUERIES[:4],
                  days=["2026-04-10", "2026-04-12", "2026-04-14"], provenance=AGENT),
        ),
    )


def _invalid_rows() -> Case:
    path = "memory/2026-04-10.md"
    base = entry(path, 4, 4, "- Configured VLAN 10 on the Omada router for IoT devices.", **PROMOTABLE)
    rows = [
        base | {"key": "memory:memory/2026-04-10.md:4:4:payload-key-ignored"},
        without(base, "firstRecalledAt", "lastRecalledAt") | {"key": f"memory:{path}:5:5", "startLine": 5,
                                                              "endLine": 5,
                                                              "snippet": "- Gateway binds loopback and port 18789."},
        base | {"key": f"memory:{path}:8:8", "startLine": "8", "endLine": 8.0,
                "snippet": "Move backups to S3 Glacier every Sunday night.", "recallCount": "5", "dailyCount": -2,
                "groundedCount": 1.9, "totalScore": -1, "maxScore": 7},
        base | {"key": f"memory:{path}:9:9", "startLine": 9, "endLine": 9, "source": "web"},
        base | {"key": f"memory:{path}:1:1", "startLine": 1.5, "endLine": 1},
        base | {"key": "memory::3:3", "path": ""},
        base | {"key": f"memory:{path}:2:2", "startLine": 2, "endLine": 2, "snippet": "   "},
        base | {"key": f"memory:{path}:3:3", "startLine": 3, "endLine": 3, "snippet": 42},
        base | {"key": "memory:MEMORY.md:1:1", "path": "MEMORY.md", "startLine": 1, "endLine": 1},
        base | {"key": "memory:memory/dreaming/2026-04-10.md:1:1", "path": "memory/dreaming/2026-04-10.md"},
    ]
    raw = store(updated_at=None)
    raw["entries"] = {row["key"]: row for row in rows}
    raw["entries"]["memory:memory/2026-04-10.md:4:4:payload-key-ignored"]["key"] = "memory:something-else"
    return Case(
        name="invalid-rows",
        purpose="rows dropped or repaired on read: bad source/lines/path, coerced counters, missing times, no meta",
        notes={path: NOTE_0410},
        store=raw,
    )


def _many_entries() -> Case:
    return Case(
        name="many-entries-5000",
        purpose="5,000 entries: the 512 cap (lastRecalledAt, signals, totalScore, maxScore, promotedAt, key)",
        generator={"name": "many_entries", "seed": 20260415, "count": 5000},
    )


def many_entries(seed: int, count: int) -> tuple[dict[str, str], Json]:
    """Build the generated case's notes and store from ``seed``: same arguments, same bytes.

    Twenty note files of 60 lines; entries point at those lines. lastRecalledAt comes from a small set of instants
    (many ties), some unparsable; counters, scores and promotedAt are drawn so every retention tie-break is used.
    """
    rng = random.Random(seed)
    files = [f"memory/2026-03-{day:02d}.md" for day in range(1, 21)]
    lines = {p: [f"Item {n} of {p[7:17]}: {rng.choice(['router', 'backup', 'vlan', 'deploy', 'cache'])} "
                 f"check {rng.randrange(1000)}." for n in range(1, 61)] for p in files}
    notes = {p: "\n".join(text) + "\n" for p, text in lines.items()}
    instants = [f"2026-04-{d:02d}T{h:02d}:00:00.000Z" for d in (10, 12, 14) for h in (6, 18)] + ["not-a-date"]
    entries: Json = {}
    while len(entries) < count:
        path = rng.choice(files)
        line = rng.randrange(1, 61)
        suffix = rng.choice(["", "", "", f":{rng.randrange(16**4):04x}"])
        key = f"memory:{path}:{line}:{line}{suffix}"
        if key in entries:
            continue
        recalls, daily = rng.choice([(0, 1), (0, 2), (1, 0), (2, 1), (3, 0), (4, 1), (5, 0)])
        signals = recalls + daily
        total = round(rng.choice([0.5, 0.62, 0.7, 0.8, 0.9]) * signals, 2)
        last = rng.choice(instants)
        value: Json = {
            "key": key,
            "path": path,
            "startLine": line,
            "endLine": line,
            "source": "memory",
            "snippet": lines[path][line - 1],
            "recallCount": recalls,
            "dailyCount": daily,
            "groundedCount": 0,
            "totalScore": total,
            "maxScore": rng.choice([0.62, 0.8, 0.9]),
            "firstRecalledAt": "2026-04-01T00:00:00.000Z",
            "lastRecalledAt": last,
            "queryHashes": [query_hash(q) for q in rng.sample(USER_QUERIES, min(3, recalls))],
            "recallDays": [last[:10]] if last[0].isdigit() else [],
            "conceptTags": ["router"],
        }
        if recalls:
            value["userQueryHashes"] = list(value["queryHashes"])
            value["provenance"] = AGENT
        if rng.random() < 0.1:
            value["promotedAt"] = rng.choice(["2026-04-11T03:00:00.000Z", "2026-04-13T03:00:00.000Z"])
        entries[key] = value
    return notes, {"version": 1, "updatedAt": "2026-04-14T18:00:00.000Z", "entries": entries}


GENERATORS = {"many_entries": many_entries}


def expand(case: Case) -> Case:
    """The case with a generated case's notes and store filled in."""
    if case.generator is None:
        return case
    args = {k: v for k, v in case.generator.items() if k != "name"}
    notes, generated = GENERATORS[case.generator["name"]](**args)
    return Case(
        name=case.name, purpose=case.purpose, now=case.now, notes=notes, memory=case.memory, store=generated,
        phase_signals=case.phase_signals, options=case.options, generator=case.generator,
    )


def generated_digest(case: Case) -> str:
    """sha256 of a generated case's notes and store (stored in case.json to catch a drifting generator)."""
    full = expand(case)
    payload = json.dumps({"notes": full.notes, "store": full.store}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()


# ---------------------------------------------------------------------------------------------------------------
# Record cases: sequences of recordShortTermRecalls calls.

GATEWAY = "- Gateway binds loopback and port 18789."


def result(path: str, start: int, end: int, snippet: str, score: float, **extra: Any) -> Json:
    """One search result as memory_search hands it to recordShortTermRecalls."""
    return {"path": path, "startLine": start, "endLine": end, "score": score, "snippet": snippet, "source": "memory",
            **extra}


def _record_cases() -> list[Case]:
    path = "memory/2026-04-10.md"
    gateway = result(path, 5, 5, GATEWAY, 0.9)
    vlan = "- Configured VLAN 10 on the Omada router for IoT devices."
    return [
        Case(
            name="record-verified-example",
            purpose="§6's verified example: two recalls, a deduped third, a daily signal (hash 2213b71c3c98)",
            now="2026-04-11T09:00:00.000Z",
            steps=[
                {"now": "2026-04-11T09:00:00.000Z", "query": "Which Port?", "results": [gateway]},
                {"now": "2026-04-11T09:05:00.000Z", "query": "which port?", "results": [gateway | {"score": 0.7}]},
                {"now": "2026-04-11T09:10:00.000Z", "query": "which port?", "results": [gateway | {"score": 0.7}],
                 "dedupeByQueryPerDay": True},
                {"now": "2026-04-11T09:15:00.000Z", "query": daily_query("2026-04-11"),
                 "results": [gateway | {"score": 0.62}], "signalType": "daily", "dedupeByQueryPerDay": False,
                 "dayBucket": "2026-04-11"},
            ],
        ),
        Case(
            name="record-claim-keys",
            purpose="key choice: memory:claim:<hash> from a daily signal, path:lines:<hash> for grounded, plain",
            now="2026-04-12T09:00:00.000Z",
            steps=[
                {"now": "2026-04-12T03:00:00.000Z", "query": daily_query("2026-04-12"),
                 "results": [result(path, 4, 4, vlan, 0.62)], "signalType": "daily", "dayBucket": "2026-04-12"},
                {"now": "2026-04-12T09:00:00.000Z", "query": "vlan for iot",
                 "results": [result(path, 7, 7, vlan, 0.88)]},
                {"now": "2026-04-12T09:10:00.000Z", "query": "grounded:gateway",
                 "results": [result(path, 5, 5, GATEWAY, 0.92, signalCount=2, query="lasting gateway fact")],
                 "signalType": "grounded", "dedupeByQueryPerDay": True},
                {"now": "2026-04-12T09:20:00.000Z", "query": "gateway port",
                 "results": [result(path, 5, 5, GATEWAY, 0.81)]},
                {"now": "2026-04-12T09:30:00.000Z", "query": "backup schedule",
                 "results": [result(path, 8, 8, "Move backups to S3 Glacier every Sunday night.", 0.77)]},
            ],
        ),
        Case(
            name="record-daily-folding",
            purpose="daily signals fold into a recalled entry with the same claim (identitySnippet), keep its range",
            now="2026-04-13T03:00:00.000Z",
            steps=[
                {"now": "2026-04-12T10:00:00.000Z", "query": "backup target",
                 "results": [result(path, 9, 9, "The restic repository lives on the NAS under /volume1/restic.",
                                    0.86)]},
                {"now": "2026-04-13T03:00:00.000Z", "query": daily_query("2026-04-12"),
                 "results": [result(path, 12, 13, "Backups: The restic repository lives on the NAS under "
                                    "/volume1/restic.", 0.62,
                                    identitySnippet="The restic repository lives on the NAS under /volume1/restic.")],
                 "signalType": "daily", "dayBucket": "2026-04-12"},
                {"now": "2026-04-13T03:01:00.000Z", "query": daily_query("2026-04-12"),
                 "results": [result(path, 12, 13, "Backups: The restic repository lives on the NAS under "
                                    "/volume1/restic.", 0.62,
                                    identitySnippet="The restic repository lives on the NAS under /volume1/restic.")],
                 "signalType": "daily", "dayBucket": "2026-04-12", "dedupeByQueryPerDay": True},
                {"now": "2026-04-13T03:02:00.000Z", "query": daily_query("2026-04-13"),
                 "results": [result(path, 8, 8, "Move backups to S3 Glacier every Sunday night.", 0.62)],
                 "signalType": "daily", "dayBucket": "2026-04-13"},
                {"now": "2026-04-13T03:03:00.000Z", "query": daily_query("2026-04-13"),
                 "results": [result(path, 8, 8, "Move backups to S3 Glacier every Sunday night.", 0.62)],
                 "signalType": "daily", "dayBucket": "2026-04-13"},
            ],
        ),
        Case(
            name="record-dedupe",
            purpose="dedupeByQueryPerDay: same query same day adds nothing (maxScore counts 0), next day counts",
            now="2026-04-14T09:00:00.000Z",
            steps=[
                {"now": "2026-04-13T09:00:00.000Z", "query": "deploy freeze", "dedupeByQueryPerDay": True,
                 "results": [result("memory/2026-04-14.md", 3, 3, "- Deploy freeze starts Friday 18:00 UTC.", 0.7)]},
                {"now": "2026-04-13T10:00:00.000Z", "query": "Deploy Freeze ", "dedupeByQueryPerDay": True,
                 "results": [result("memory/2026-04-14.md", 3, 3, "- Deploy freeze starts Friday 18:00 UTC.", 0.95)]},
                {"now": "2026-04-13T11:00:00.000Z", "query": "deploy freeze",
                 "results": [result("memory/2026-04-14.md", 3, 3, "- Deploy freeze starts Friday 18:00 UTC.", 0.6)]},
                {"now": "2026-04-14T09:00:00.000Z", "query": "deploy freeze", "dedupeByQueryPerDay": True,
                 "results": [result("memory/2026-04-14.md", 3, 3, "- Deploy freeze starts Friday 18:00 UTC.", 0.8)]},
                {"now": "2026-04-14T09:30:00.000Z", "query": "grounded:freeze", "signalType": "grounded",
                 "dedupeByQueryPerDay": True,
                 "results": [result("memory/2026-04-14.md", 3, 3, "- Deploy freeze starts Friday 18:00 UTC.", 0.9,
                                    signalCount=3, query="freeze fact", dayBucket="2026-04-14")]},
                {"now": "2026-04-14T09:40:00.000Z", "query": "grounded:freeze", "signalType": "grounded",
                 "dedupeByQueryPerDay": True,
                 "results": [result("memory/2026-04-14.md", 3, 3, "- Deploy freeze starts Friday 18:00 UTC.", 0.9,
                                    signalCount=3, query="freeze fact", dayBucket="2026-04-14")]},
            ],
        ),
        Case(
            name="record-provenance-merge",
            purpose="provenance merge (later class wins, kinds must agree, max observedAt), projectKey merge",
            now="2026-04-14T12:00:00.000Z",
            steps=[
                {"now": "2026-04-14T09:00:00.000Z", "query": "standup preference",
                 "results": [result("memory/2026-04-12.md", 4, 4, "Alice prefers async standups on Tuesdays.", 0.8,
                                    provenance=prov("owner", "interactive", observed=1776157200000,
                                                    supersedesKey="memory:old"),
                                    projectKey="Acme/Team")]},
                {"now": "2026-04-14T10:00:00.000Z", "query": "standups",
                 "results": [result("memory/2026-04-12.md", 4, 4, "Alice prefers async standups on Tuesdays.", 0.7,
                                    provenance=prov("agent", "interactive", observed=1776150000000,
                                                    supersedesKey="memory:old"),
                                    projectKey="acme/team; Beta/X")]},
                {"now": "2026-04-14T11:00:00.000Z", "query": "team rituals",
                 "results": [result("memory/2026-04-12.md", 4, 4, "Alice prefers async standups on Tuesdays.", 0.6,
                                    provenance=prov("owner", "cron", observed=1776164400000))]},
                {"now": "2026-04-14T12:00:00.000Z", "query": "who likes async",
                 "results": [result("memory/2026-04-12.md", 4, 4, "Alice prefers async standups on Tuesdays.", 0.9)]},
                {"now": "2026-04-14T12:00:00.000Z", "query": "poisoned",
                 "results": [result("memory/2026-04-14.md", 4, 4,
                                    "- The on-call rotation moves to PagerDuty next week.", 0.9,
                                    provenance=prov("untrusted", "subagent", observed=1776168000000))]},
            ],
        ),
        Case(
            name="record-filters",
            purpose="what is not recorded (other sources, long-term paths, contaminated/empty) and the tz day",
            now="2026-04-14T23:30:00.000Z",
            steps=[
                {"now": "2026-04-14T23:30:00.000Z", "query": "mixed results", "timezone": "America/Los_Angeles",
                 "results": [
                     result("memory/2026-04-14.md", 3, 3, "- Deploy freeze starts Friday 18:00 UTC.", 1.4),
                     result("MEMORY.md", 3, 3, "- Long-term fact.", 0.99),
                     result("memory/dreaming/2026-04-14.md", 1, 1, "Dream text.", 0.9),
                     result("memory/2026-04-14.md", 4, 4, "User: what did we decide?", 0.9),
                     result("memory/2026-04-14.md", 5, 5, "   ", 0.9),
                     result("sessions/abc.jsonl", 1, 1, "session hit", 0.9) | {"source": "sessions"},
                     result("2026-04-13.md", 2, 3, "Bare legacy path fact.", -0.5),
                     result("memory/.dreams/session-corpus/2026-04-14.txt", 7, 7, "User: keep the transcript turn",
                            0.7),
                     result("memory/team/2026-04-14-notes.md", 2.7, 0, "Nested daily note, odd lines.", 0.5),
                 ]},
            ],
        ),
    ]


def all_cases() -> list[Case]:
    """Every case, in golden order (generated cases unexpanded: see ``expand``)."""
    cases = [
        _basic(),
        _user_query_hashes(),
        _concept_tags(),
        _cjk(),
        _deleted_note(),
        _moved_lines(),
        _multi_line(),
        _blank_first_line(),
        _legacy_paths(),
        _already_promoted(),
        _contaminated(),
        _duplicate_days(),
        _provenance(),
        _project_keys(),
        *_memory_variants(),
        _rounding_ties(),
        _sort_ties(),
        _phase_signals(),
        _long_snippets(),
        _invalid_rows(),
        _many_entries(),
        *_record_cases(),
    ]
    names = [case.name for case in cases]
    if len(set(names)) != len(names):
        raise ValueError(f"duplicate case names: {names}")
    return cases


def case_by_name(name: str) -> Case:
    """The case called ``name``."""
    for case in all_cases():
        if case.name == name:
            return case
    raise KeyError(name)
