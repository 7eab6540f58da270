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
    """Return the query light-sleep ingestion records daily signals under."""
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
    """Build a stored recall entry, fields in the order OpenClaw writes them; MISSING leaves a field out.

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
    """Build a JSON v1 recall store; ``updated_at=None`` leaves out the meta row."""
    value: Json = {"version": 1}
    if updated_at is not None:
        value["updatedAt"] = updated_at
    value["entries"] = {item["key"]: item for item in entries}
    return value


def without(value: Json, *fields: str) -> Json:
    """Return a copy of ``value`` without ``fields``."""
    return {k: v for k, v in value.items() if k not in fields}


def prov(origin: str, kind: str = "interactive", observed: Any = 1776160800000, **extra: Any) -> Json:
    """Build a provenance object (observedAt in ms; None leaves it out)."""
    value: Json = {"originClass": origin, "sessionKind": kind}
    if observed is not None:
        value["observedAt"] = observed
    value.update(extra)
    return value


AGENT = prov("agent")
OWNER = prov("owner")

USER_QUERIES = ["router vlan", "iot network", "omada setup", "which vlan for cameras", "gateway port"]
DAYS3 = ["2026-04-10", "2026-04-12", "2026-04-14"]


def recalled(path: str, start: int, end: int, snippet: str, **overrides: Any) -> Json:
    """Build an entry that passes the default gates: 5 recalls of 4 user queries on 3 days, agent provenance."""
    preset: Json = {
        "recalls": 5,
        "total": 4.6,
        "queries": USER_QUERIES[:4],
        "user": USER_QUERIES[:4],
        "days": DAYS3,
        "provenance": AGENT,
    }
    return entry(path, start, end, snippet, **(preset | overrides))


def users(n: int, first: int = 0) -> Json:
    """Return ``n`` user queries as both ``queries`` and ``user`` (explicit userQueryHashes)."""
    chosen = USER_QUERIES[first : first + n]
    return {"queries": chosen, "user": chosen}


NOTE_0410 = """# 2026-04-10

## Network
- Configured VLAN 10 on the Omada router for IoT devices.
- Gateway binds loopback and port 18789.

## Backups
Move backups to S3 Glacier every Sunday night.
The restic repository lives on the NAS under /volume1/restic.
"""
LINES_0410 = NOTE_0410.splitlines()
P0410 = "memory/2026-04-10.md"
VLAN = LINES_0410[3]
GATEWAY = LINES_0410[4]
GLACIER = LINES_0410[7]
RESTIC = LINES_0410[8]

NOTE_0412 = """# Sunday, April 12

Rotated the staging Postgres credentials; the vault path is secret/staging/pg.
Alice prefers async standups on Tuesdays.
"""

NOTE_0414 = """# 2026-04-14

- Deploy freeze starts Friday 18:00 UTC.
- The on-call rotation moves to PagerDuty next week.
"""
FREEZE = "- Deploy freeze starts Friday 18:00 UTC."

BASIC_NOTES = {P0410: NOTE_0410, "memory/2026-04-12.md": NOTE_0412, "memory/2026-04-14.md": NOTE_0414}


def _basic() -> Case:
    pg = "Rotated the staging Postgres credentials; the vault path is secret/staging/pg."
    pg_queries = ["postgres credentials", "staging vault", "pg secret path"]
    daily4 = ["2026-04-10", "2026-04-11", "2026-04-12", "2026-04-13"]
    return Case(
        name="basic-mixed-counters",
        purpose="recall, daily and grounded counters mixed; only user recalls count as unique queries",
        notes=BASIC_NOTES,
        store=store(
            recalled(P0410, 4, 4, VLAN, max_score=0.97, claim=True),
            entry(
                *(P0410, 5, 5, GATEWAY),
                recalls=3,
                daily=2,
                total=3.64,
                queries=[*USER_QUERIES[2:5], daily_query("2026-04-10"), daily_query("2026-04-12")],
                user=USER_QUERIES[2:5],
                days=DAYS3,
                provenance=OWNER,
                claim=True,
            ),
            entry(
                *(P0410, 8, 8, GLACIER),
                daily=4,
                total=2.48,
                max_score=0.62,
                queries=[daily_query(d) for d in daily4],
                days=daily4,
                provenance=AGENT,
            ),
            entry(
                *(P0410, 9, 9, RESTIC),
                grounded=3,
                total=2.76,
                max_score=0.92,
                queries=["restic repository location", "backup target"],
                days=DAYS3,
                provenance=AGENT,
                claim=True,
            ),
            entry(
                *("memory/2026-04-12.md", 3, 3, pg),
                recalls=3,
                grounded=2,
                total=4.3,
                max_score=0.95,
                first="2026-04-12T08:00:00.000Z",
                last="2026-04-15T08:30:00.000Z",
                queries=pg_queries,
                user=pg_queries,
                days=["2026-04-12", "2026-04-13", "2026-04-15"],
                provenance=AGENT,
                claim=True,
            ),
            entry(
                *("memory/2026-04-12.md", 4, 4, "Alice prefers async standups on Tuesdays."),
                recalls=1,
                total=0.55,
                max_score=0.55,
                queries=["standup preference"],
                user=["standup preference"],
                provenance=AGENT,
            ),
            entry(
                *("memory/2026-04-14.md", 3, 3, FREEZE),
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
    path = "memory/2026-04-13.md"
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
    facts = [f"Fact {i}: the {word} service runs on host {i}." for i, word in enumerate(words)]
    many = [f"query number {i}" for i in range(40)]

    def fact(i: int, **kw: Any) -> Json:
        return entry(path, 3 + i, 3 + i, facts[i], provenance=AGENT, **kw)

    messy = fact(7, recalls=4, total=3.6, queries=USER_QUERIES[:4])
    messy["userQueryHashes"] = [" ", query_hash("a"), query_hash("a"), "", 7, f" {query_hash('b')} "]
    return Case(
        name="user-query-hashes",
        purpose="userQueryHashes missing (copied only when daily and grounded are 0), present, empty, over 32",
        notes={path: "# Notes\n\n" + "".join(f"{text}\n" for text in facts)},
        store=store(
            fact(0, recalls=4, total=3.7, queries=USER_QUERIES[:4]),
            fact(1, recalls=3, daily=1, total=3.2, queries=[*USER_QUERIES[:3], daily_query("2026-04-13")]),
            fact(2, recalls=3, grounded=1, total=3.3, queries=USER_QUERIES[:4]),
            fact(3, recalls=4, daily=1, total=4.0, queries=USER_QUERIES, user=USER_QUERIES[:3]),
            fact(4, recalls=4, total=3.7, queries=USER_QUERIES[:4], user=[]),
            fact(5, recalls=9, total=8.5, queries=many),
            fact(6, recalls=9, total=8.5, queries=many[:5], user=many),
            messy,
        ),
    )


def _concept_tags() -> Case:
    path = "memory/2026-04-11.md"
    lines = [
        "The Kubernetes ingress-nginx controller terminates TLS for grafana.example.com.",
        "Embedding model switched to text-embedding-3-small via the OpenAI gateway.",
        "Rotate the api_key for the v2.3 build/deploy pipeline monthly.",
        "Nothing here but small words: it is on.",
    ]
    messy = ["OpenAI", "openai", " Gateway ", "EMBEDDING", "a", "b", "c", "d", "e", "f", 3, ""]

    def e(i: int, **kw: Any) -> Json:
        return entry(path, 3 + i, 3 + i, lines[i], recalls=4, total=3.6, provenance=AGENT, **users(3), **kw)

    return Case(
        name="concept-tags-empty",
        purpose="conceptTags stored as [] (kept on read, re-derived by repair), missing (derived), messy lists",
        notes={path: "# 2026-04-11\n\n" + "".join(f"{text}\n" for text in lines)},
        store=store(e(0, tags=[]), e(1, tags=messy), e(2), e(3, tags=[])),
    )


def _cjk() -> Case:
    snippets = {
        "memory/2026-04-13-ja.md": [
            "障害対応ルーター設定とバックアップ確認。路由器备份与网关同步。",
            "本番サーバーの証明書を更新した。期限は来年三月。",
        ],
        "memory/2026-04-13-zh.md": [
            "数据库迁移已经完成，明天检查备份任务。",
            "路由器固件升级到 v2.1，网关重启后正常。",
        ],
        "memory/2026-04-13-ko.md": ["라우터 백업을 매주 일요일에 실행한다.", "게이트웨이 장애대응 절차를 문서화했다."],
        "memory/2026-04-13-mixed.md": ["Grafana 대시보드와 Prometheus 알림을 연결했다 (alertmanager v0.27)."],
    }
    entries = [
        entry(path, 3 + i, 3 + i, text, recalls=4, total=3.6, provenance=AGENT, claim=True, **users(3))
        for path, lines in snippets.items()
        for i, text in enumerate(lines)
    ]
    return Case(
        name="cjk-snippets",
        purpose="Chinese, Japanese and Korean snippets: derived concept tags (ICU word segmentation), bullets",
        notes={path: "# Notes\n\n" + "\n".join(lines) + "\n" for path, lines in snippets.items()},
        store=store(*entries),
    )


def _deleted_note() -> Case:
    gone = "memory:memory/2026-04-09.md:3:3"
    kept = "memory:memory/2026-04-10.md:4:4"
    return Case(
        name="deleted-note",
        purpose="an entry whose note file is gone: ranked, not promoted (rehydration fails), removed by repair",
        notes={P0410: NOTE_0410},
        store=store(
            recalled(P0410, 4, 4, VLAN),
            recalled(
                "memory/2026-04-09.md",
                3,
                3,
                "The printer on floor 2 needs a new fuser.",
                days=["2026-04-09", *DAYS3[1:]],
            ),
        ),
        phase_signals={
            "version": 1,
            "updatedAt": "2026-04-14T03:00:00.000Z",
            "entries": {
                gone: {
                    "key": gone,
                    "lightHits": 2,
                    "remHits": 1,
                    "lastLightAt": "2026-04-14T03:00:00.000Z",
                    "lastRemAt": "2026-04-14T03:00:00.000Z",
                },
                kept: {"key": kept, "lightHits": 1, "remHits": 0, "lastLightAt": "2026-04-13T03:00:00.000Z"},
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
    path = "memory/2026-04-08.md"
    days = ["2026-04-08", "2026-04-10", "2026-04-14"]
    flags = "- Feature flags live in LaunchDarkly, not in config files. The search cluster has 3 data nodes"
    return Case(
        name="moved-lines",
        purpose="text moved in the note since it was recorded: rehydration finds the new range",
        notes={path: note},
        store=store(
            recalled(path, 4, 4, "- The billing service moves to Postgres 17 in May.", days=days),
            recalled(path, 2, 3, flags, days=days),
            recalled(path, 12, 12, "The search cluster has 3 data nodes and 1 coordinator.", days=days),
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
    vendor = "- Quote is valid until May 31. - Support tier: gold, 4h response. - Renewal owner: Priya."
    vendor_ctx = "Vendor call: Quote is valid until May 31.; Support tier: gold, 4h response.; Renewal owner: Priya."
    storage = "Storage grows about 2 TB per month. We need a second array before Q3."

    def e(start: int, end: int, snippet: str, first: int, **kw: Any) -> Json:
        return recalled(path, start, end, snippet, **users(3, first), **kw)

    return Case(
        name="multi-line-snippets",
        purpose="snippets over several lines: plain join, list items joined with '; ', heading context",
        notes={path: note},
        store=store(
            e(4, 6, vendor, 0),
            e(4, 6, vendor_ctx, 1, key=f"memory:{path}:4:6:ctx"),
            e(9, 10, storage, 0),
            e(12, 13, "Order disks; Schedule the migration window", 2),
        ),
    )


def _blank_first_line() -> Case:
    text = "The VPN concentrator was replaced with a WireGuard gateway."
    return Case(
        name="blank-first-line",
        purpose="§7.1: recorded at 2:2, line 2 now blank and the text on line 3: the bullet says 2-3",
        notes={"memory/2026-04-07.md": f"# 2026-04-07\n\n{text}\nUsers must re-import profiles.\n"},
        store=store(recalled("memory/2026-04-07.md", 2, 2, text, days=["2026-04-07", "2026-04-10", "2026-04-14"])),
    )


def _legacy_paths() -> Case:
    facts = {
        "07": "The lab switch uses LACP on ports 47 and 48.",
        "06": "Badge readers on floor 3 are offline until Monday.",
        "05": "The DNS resolver moved to 10.0.0.53.",
    }
    stored = {"07": "2026-04-07.md", "06": "./memory/2026-04-06.md", "05": "memory\\2026-04-05.md"}
    return Case(
        name="legacy-bare-paths",
        purpose="legacy bare '2026-04-07.md', './memory/...' and backslash paths: read, rehydrated, bullet text",
        notes={f"memory/2026-04-{d}.md": f"# 2026-04-{d}\n\n{text}\n" for d, text in facts.items()},
        store=store(
            *(
                recalled(stored[d], 3, 3, text, days=[f"2026-04-{d}", "2026-04-10", "2026-04-14"])
                for d, text in facts.items()
            )
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
            recalled(P0410, 4, 4, VLAN, promoted="2026-04-12T03:00:00.000Z"),
            recalled(P0410, 5, 5, GATEWAY),
            recalled("memory/2026-04-14.md", 3, 3, FREEZE),
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
    texts = bad + good
    entries = [
        entry(path, 10 + i, 10 + i, text, recalls=5, total=4.6, provenance=AGENT, **users(4))
        for i, text in enumerate(texts)
    ]
    return Case(
        name="contaminated-snippets",
        purpose="dreaming output, transcripts, prompts and promotion metadata are dropped on read; look-alikes kept",
        notes={path: "# Notes\n\n" + "\n" * 7 + "\n".join(texts) + "\n"},
        store=store(*entries),
    )


def _duplicate_days() -> Case:
    junk_days = ["2026-04-11T23:59:59Z", " 2026-04-13 ", "garbage", 20260414, "2026-4-14", "2026-04-14"]

    def e(line: int, days: list[Any], **kw: Any) -> Json:
        return entry(
            P0410, line, line, LINES_0410[line - 1], recalls=5, total=4.6, days=days, provenance=AGENT, **users(4), **kw
        )

    return Case(
        name="duplicate-recall-days",
        purpose="recallDays kept with duplicates on read (ranking counts them), over 16, ISO times and junk",
        notes={P0410: NOTE_0410},
        store=store(
            e(4, ["2026-04-10", "2026-04-10", "2026-04-12"]),
            e(5, [f"2026-03-{d:02d}" for d in range(1, 21)]),
            e(8, junk_days),
            e(9, [], last="2026-04-13T12:00:00.000Z"),
        ),
    )


def _provenance() -> Case:
    corpus = "memory/.dreams/session-corpus/2026-04-11.txt"
    corpus_note = "User: hello\nAssistant: The staging cluster is in eu-west-1.\nUser: thanks\n"
    staging = "Assistant: The staging cluster is in eu-west-1."
    corpus_days = ["2026-04-11", *DAYS3[1:]]

    def e(line: int, provenance: Any) -> Json:
        return recalled(P0410, line, line, LINES_0410[line - 1], provenance=provenance)

    return Case(
        name="provenance-variety",
        purpose="owner/agent/system/untrusted, invalid and absent provenance; session kinds; sweep's trust filter",
        notes={P0410: NOTE_0410, corpus: corpus_note},
        store=store(
            e(4, OWNER),
            e(5, prov("agent", "cron", observed=None)),
            e(8, prov("system", "heartbeat")),
            e(9, prov("untrusted", "subagent")),
            e(1, prov("admin", "daemon", supersedesKey="  memory:memory/2026-04-01.md:1:1  ")),
            e(3, MISSING),
            e(7, prov("owner", "unknown", observed="1776160800000")),
            recalled(corpus, 2, 2, staging, days=corpus_days, provenance=prov("agent", "interactive")),
            recalled(
                *(corpus, 2, 2, staging),
                days=corpus_days,
                provenance=prov("agent", "cron"),
                key=f"memory:{corpus}:2:2:cron",
                **users(4, 1),
            ),
        ),
    )


def _project_keys() -> Case:
    def e(line: int, project: str | None) -> Json:
        return recalled(P0410, line, line, LINES_0410[line - 1], project=project)

    return Case(
        name="project-key-groups",
        purpose="projectKey normalization and ### Global / ### Project: groups in the promoted section",
        notes={P0410: NOTE_0410},
        store=store(
            e(4, "Acme/Web"),
            e(5, " acme/api ;Zeta/Tool; acme/api;;"),
            e(8, None),
            e(9, "path:/srv/repos/infra"),
        ),
    )


def _prior_section(date: str, key: str, text: str) -> str:
    return (
        f"\n## Promoted From Short-Term Memory ({date})\n\n<!-- openclaw-memory-promotion:{key} -->\n"
        f"- {text} [score=0.800 signals=5 recalls=5 avg=0.900 source=memory/{date}.md:1-1] "
        "<!-- trigger: legacy --> <!-- importance: 8 -->\n"
    )


def _march_sections(days: tuple[int, ...]) -> str:
    filler = "Older note. " * 200
    return "".join(
        _prior_section(f"2026-03-{day:02d}", f"memory:memory/2026-03-{day:02d}.md:1:1", f"legacy-{day} {filler}")
        for day in days
    )


def _memory_variants() -> list[Case]:
    def variant(name: str, purpose: str, memory: str, **kw: Any) -> Case:
        return Case(
            name=name,
            purpose=purpose,
            notes={P0410: NOTE_0410},
            memory=memory,
            store=store(recalled(P0410, 4, 4, VLAN)),
            **kw,
        )

    existing = (
        "# Long-Term Memory\n\nUser-written intro.\n"
        + _prior_section("2026-04-01", "memory:memory/2026-04-01.md:3:3", "The old NAS is retired.")
        + _prior_section("2026-04-05", "memory:memory/2026-04-05.md:2:2", "Printers use DHCP reservations.")
    )
    small = (
        "# Long-Term Memory\n"
        + _prior_section("2026-04-10", "memory:memory/2026-04-10.md:1:1", "legacy-old " + "x" * 600)
        + _prior_section("2026-04-11", "memory:memory/2026-04-11.md:1:1", "legacy-new " + "y" * 100)
        + _prior_section("2026-04-12", "memory:memory/2026-04-12.md:1:1", "legacy-newer " + "z" * 50)
        + _prior_section("2026-04-13", "memory:memory/2026-04-13.md:1:1", "legacy-newest " + "w" * 40)
    )
    return [
        variant("memory-md-empty", "MEMORY.md exists and is empty: header added", ""),
        variant("memory-md-whitespace", "MEMORY.md holds only whitespace: header added, whitespace kept", "  \n\n\t\n"),
        variant(
            "memory-md-no-trailing-newline",
            "MEMORY.md without a final newline: one newline added before the section",
            "# Long-Term Memory\n\n- The office wifi is Corp-5G.",
        ),
        variant(
            "memory-md-existing-sections",
            "MEMORY.md with user text and earlier promotion sections: appended after one blank line",
            existing,
        ),
        variant(
            "memory-md-over-budget-compacts",
            "over the 10k budget: the oldest promotion section is dropped (at most 25% of prior entries)",
            "# Long-Term Memory\n\nUser-written intro.\n" + _march_sections((1, 8, 15, 22)),
        ),
        variant(
            "memory-md-over-budget-rejects",
            "over the 10k budget even after compaction: the candidate is rejected ('memory budget')",
            "# Long-Term Memory\n\n" + ("User fact. " * 700) + "\n" + _march_sections((1, 8)),
        ),
        variant(
            "memory-md-small-budget",
            "memoryFileMaxChars 1400 (a configured bootstrapMaxChars): compaction against a small budget",
            small,
            options={"apply": {"memoryFileMaxChars": 1400}},
        ),
    ]


def _rounding_ties() -> Case:
    # Every score component is exact (10 signals, recalled now, one recall day), so the weighted sum can land on a
    # rounding tie: 0.8125 (toFixed(3): JS "0.813", Python "0.812") and 0.85 (x10 = 8.5: Math.round 9, round 8).
    path = "memory/2026-04-15.md"
    names = ["alpha", "beta", "gamma", "delta", "epsilon"]
    facts = [f"Tie fact {name}: the {name} queue drains every {i + 2} minutes." for i, name in enumerate(names)]
    tags = ["queue", "drain", "minutes", "worker", "latency", "backlog", "consumer", "broker"]

    def e(i: int, total: float, n_users: int, n_tags: int) -> Json:
        return entry(
            *(path, 3 + i, 3 + i, facts[i]),
            recalls=10,
            total=total,
            max_score=1.0,
            first=NOW,
            last=NOW,
            days=["2026-04-15"],
            tags=tags[:n_tags],
            provenance=AGENT,
            **users(n_users),
        )

    return Case(
        name="js-rounding-ties",
        purpose="scores 0.8125 and 0.85 and avg 0.8125: JS toFixed(3) and Math.round tie rules in the bullet",
        notes={path: "# 2026-04-15\n\n" + "\n".join(facts) + "\n"},
        store=store(
            e(0, 9.75, 3, 2),  # score 0.8125
            e(1, 10.0, 3, 5),  # score 0.85 (x10 = 8.5)
            e(2, 8.125, 5, 8),  # avg 0.8125
            e(3, 9.0, 4, 5),  # score 0.85 again, other components
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
    return Case(
        name="sort-ties-locale",
        purpose="equal score and recallCount: path order by ICU localeCompare (case, accents, '-' vs '_', digits)",
        notes={path: f"# Notes\n\n{text}\n" for path in paths},
        store=store(*(recalled(path, 3, 3, text, tags=["build", "cache"]) for path in paths)),
        options={"rank": {"limit": 20}, "apply": {"limit": 20}},
    )


def _phase_signals() -> Case:
    keys = [f"memory:{P0410}:{n}:{n}" for n in (4, 5, 8, 9)]
    unknown = "memory:memory/2026-04-01.md:1:1"

    def e(line: int) -> Json:
        return entry(
            *(P0410, line, line, LINES_0410[line - 1]),
            recalls=3,
            total=2.1,
            max_score=0.75,
            days=["2026-04-13", "2026-04-14"],
            provenance=AGENT,
            tags=["network", "router"],
            **users(3),
        )

    def signal(key: str, light: int, rem: int, **times: str) -> Json:
        return {"key": key, "lightHits": light, "remHits": rem, **times}

    return Case(
        name="phase-signals",
        purpose="light/REM phase boost (strength, 14-day recency), zero-hit and unknown-key signals dropped",
        notes={P0410: NOTE_0410},
        store=store(e(4), e(5), e(8), e(9)),
        phase_signals={
            "version": 1,
            "updatedAt": "2026-04-15T03:00:00.000Z",
            "entries": {
                keys[0]: signal(
                    keys[0], 3, 2, lastLightAt="2026-04-15T03:00:00.000Z", lastRemAt="2026-04-15T03:05:00.000Z"
                ),
                keys[1]: signal(keys[1], 12000, 0, lastLightAt="2026-03-01T03:00:00.000Z"),
                keys[2]: signal(keys[2], 0, 0, lastLightAt="2026-04-15T03:00:00.000Z"),
                keys[3]: signal(keys[3], 1, 4, lastRemAt="not-a-date", lastRemConsideredAt="2026-04-15T03:10:00.000Z"),
                unknown: signal(unknown, 5, 5, lastLightAt="2026-04-15T03:00:00.000Z"),
            },
        },
    )


def _long_snippets() -> Case:
    path = "memory/2026-04-14.md"
    sentence = "The quarterly capacity review found the west region at 71 percent of planned storage. "
    texts = [
        (sentence * 12).strip(),
        "x" * 799 + "😀" + " tail words after the cap",  # the 800-unit cut falls inside the surrogate pair
        ("word " * 200).strip(),
    ]
    return Case(
        name="long-snippets",
        purpose="the 800-code-unit snippet cap (never splitting a surrogate pair) and the 640-char promoted text",
        notes={path: "# Notes\n\n" + "\n".join(texts) + "\n"},
        store=store(*(recalled(path, 3 + i, 3 + i, text) for i, text in enumerate(texts))),
    )


def _invalid_rows() -> Case:
    base = recalled(P0410, 4, 4, VLAN)
    coerced = {
        "startLine": "8",
        "endLine": 8.0,
        "snippet": GLACIER,
        "recallCount": "5",
        "dailyCount": -2,
        "groundedCount": 1.9,
        "totalScore": -1,
        "maxScore": 7,
    }
    rows = [
        base | {"key": "memory:something-else"},  # stored under another logical key (below)
        without(base, "firstRecalledAt", "lastRecalledAt")
        | {"key": f"memory:{P0410}:5:5", "startLine": 5, "endLine": 5, "snippet": GATEWAY},
        base | {"key": f"memory:{P0410}:8:8", **coerced},
        base | {"key": f"memory:{P0410}:9:9", "startLine": 9, "endLine": 9, "source": "web"},
        base | {"key": f"memory:{P0410}:1:1", "startLine": 1.5, "endLine": 1},
        base | {"key": "memory::3:3", "path": ""},
        base | {"key": f"memory:{P0410}:2:2", "startLine": 2, "endLine": 2, "snippet": "   "},
        base | {"key": f"memory:{P0410}:3:3", "startLine": 3, "endLine": 3, "snippet": 42},
        base | {"key": "memory:MEMORY.md:1:1", "path": "MEMORY.md", "startLine": 1, "endLine": 1},
        base | {"key": "memory:memory/dreaming/2026-04-10.md:1:1", "path": "memory/dreaming/2026-04-10.md"},
    ]
    raw = store(updated_at=None)
    raw["entries"] = {row["key"]: row for row in rows}
    raw["entries"] = {
        ("memory:memory/2026-04-10.md:4:4:payload-key-ignored" if k == "memory:something-else" else k): v
        for k, v in raw["entries"].items()
    }
    return Case(
        name="invalid-rows",
        purpose="rows dropped or repaired on read: bad source/lines/path, coerced counters, missing times, no meta",
        notes={P0410: NOTE_0410},
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
    (many ties), some unparsable; counters, scores and promotedAt are drawn so every retention tie-break is used, and
    the entries with 4 or 5 recalls pass the default gates, so apply rewrites (and caps) the store.
    """
    rng = random.Random(seed)
    files = [f"memory/2026-03-{day:02d}.md" for day in range(1, 21)]
    lines = {
        p: [
            f"Item {n} of {p[7:17]}: {rng.choice(['router', 'backup', 'vlan', 'deploy', 'cache'])} "
            f"check {rng.randrange(1000)}."
            for n in range(1, 61)
        ]
        for p in files
    }
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
        dated = last[0].isdigit()
        strong = dated and recalls >= 4  # recalled on three days: these pass the default gates
        day = int(last[8:10]) if dated else 0
        days = (
            [f"2026-04-{day - 4:02d}", f"2026-04-{day - 2:02d}", last[:10]] if strong else [last[:10]] if dated else []
        )
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
            "recallDays": days,
            "conceptTags": ["router", "vlan", "backup", "deploy"] if strong else ["router"],
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
    """Return the case with a generated case's notes and store filled in."""
    if case.generator is None:
        return case
    args = {k: v for k, v in case.generator.items() if k != "name"}
    notes, generated = GENERATORS[case.generator["name"]](**args)
    return Case(
        name=case.name,
        purpose=case.purpose,
        now=case.now,
        notes=notes,
        memory=case.memory,
        store=generated,
        phase_signals=case.phase_signals,
        options=case.options,
        generator=case.generator,
    )


def generated_digest(case: Case) -> str:
    """Hash a generated case's notes and store (sha256, kept in case.json to catch a drifting generator)."""
    full = expand(case)
    payload = json.dumps({"notes": full.notes, "store": full.store}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()


# ---------------------------------------------------------------------------------------------------------------
# Record cases: sequences of recordShortTermRecalls calls.


def result(path: str, start: float, end: float, snippet: str, score: float, **extra: Any) -> Json:
    """Build one search result as memory_search hands it to recordShortTermRecalls."""
    return {
        "path": path,
        "startLine": start,
        "endLine": end,
        "score": score,
        "snippet": snippet,
        "source": "memory",
    } | extra


def step(now: str, query: str, *results: Json, **params: Any) -> Json:
    """Build one recordShortTermRecalls call at ``now`` (params: signalType, dedupeByQueryPerDay, dayBucket, ...)."""
    return {"now": now, "query": query, "results": list(results), **params}


def _record_cases() -> list[Case]:
    gateway = result(P0410, 5, 5, GATEWAY, 0.9)
    restic_ctx = "Backups: The restic repository lives on the NAS under /volume1/restic."
    daily_restic = result(P0410, 12, 13, restic_ctx, 0.62, identitySnippet=RESTIC)
    freeze = result("memory/2026-04-14.md", 3, 3, FREEZE, 0.7)
    grounded_freeze = freeze | {"score": 0.9, "signalCount": 3, "query": "freeze fact", "dayBucket": "2026-04-14"}
    alice = result("memory/2026-04-12.md", 4, 4, "Alice prefers async standups on Tuesdays.", 0.8)
    oncall = result("memory/2026-04-14.md", 4, 4, "- The on-call rotation moves to PagerDuty next week.", 0.9)
    corpus = "memory/.dreams/session-corpus/2026-04-14.txt"
    return [
        Case(
            name="record-verified-example",
            purpose="§6's verified example: two recalls, a deduped third, a daily signal (hash 2213b71c3c98)",
            now="2026-04-11T09:00:00.000Z",
            steps=[
                step("2026-04-11T09:00:00.000Z", "Which Port?", gateway),
                step("2026-04-11T09:05:00.000Z", "which port?", gateway | {"score": 0.7}),
                step("2026-04-11T09:10:00.000Z", "which port?", gateway | {"score": 0.7}, dedupeByQueryPerDay=True),
                step(
                    *("2026-04-11T09:15:00.000Z", daily_query("2026-04-11"), gateway | {"score": 0.62}),
                    signalType="daily",
                    dedupeByQueryPerDay=False,
                    dayBucket="2026-04-11",
                ),
            ],
        ),
        Case(
            name="record-claim-keys",
            purpose="key choice: memory:claim:<hash> from a daily signal, path:lines:<hash> for grounded, plain",
            now="2026-04-12T09:00:00.000Z",
            steps=[
                step(
                    *("2026-04-12T03:00:00.000Z", daily_query("2026-04-12"), result(P0410, 4, 4, VLAN, 0.62)),
                    signalType="daily",
                    dayBucket="2026-04-12",
                ),
                step("2026-04-12T09:00:00.000Z", "vlan for iot", result(P0410, 7, 7, VLAN, 0.88)),
                step(
                    "2026-04-12T09:10:00.000Z",
                    "grounded:gateway",
                    result(P0410, 5, 5, GATEWAY, 0.92, signalCount=2, query="lasting gateway fact"),
                    signalType="grounded",
                    dedupeByQueryPerDay=True,
                ),
                step("2026-04-12T09:20:00.000Z", "gateway port", result(P0410, 5, 5, GATEWAY, 0.81)),
                step("2026-04-12T09:30:00.000Z", "backup schedule", result(P0410, 8, 8, GLACIER, 0.77)),
            ],
        ),
        Case(
            name="record-daily-folding",
            purpose="daily signals fold into a recalled entry with the same claim (identitySnippet), keep its range",
            now="2026-04-13T03:00:00.000Z",
            steps=[
                step("2026-04-12T10:00:00.000Z", "backup target", result(P0410, 9, 9, RESTIC, 0.86)),
                step(
                    *("2026-04-13T03:00:00.000Z", daily_query("2026-04-12"), daily_restic),
                    signalType="daily",
                    dayBucket="2026-04-12",
                ),
                step(
                    *("2026-04-13T03:01:00.000Z", daily_query("2026-04-12"), daily_restic),
                    signalType="daily",
                    dayBucket="2026-04-12",
                    dedupeByQueryPerDay=True,
                ),
                step(
                    *("2026-04-13T03:02:00.000Z", daily_query("2026-04-13"), result(P0410, 8, 8, GLACIER, 0.62)),
                    signalType="daily",
                    dayBucket="2026-04-13",
                ),
                step(
                    *("2026-04-13T03:03:00.000Z", daily_query("2026-04-13"), result(P0410, 8, 8, GLACIER, 0.62)),
                    signalType="daily",
                    dayBucket="2026-04-13",
                ),
            ],
        ),
        Case(
            name="record-dedupe",
            purpose="dedupeByQueryPerDay: same query same day adds nothing (maxScore counts 0), next day counts",
            now="2026-04-14T09:00:00.000Z",
            steps=[
                step("2026-04-13T09:00:00.000Z", "deploy freeze", freeze, dedupeByQueryPerDay=True),
                step("2026-04-13T10:00:00.000Z", "Deploy Freeze ", freeze | {"score": 0.95}, dedupeByQueryPerDay=True),
                step("2026-04-13T11:00:00.000Z", "deploy freeze", freeze | {"score": 0.6}),
                step("2026-04-14T09:00:00.000Z", "deploy freeze", freeze | {"score": 0.8}, dedupeByQueryPerDay=True),
                step(
                    *("2026-04-14T09:30:00.000Z", "grounded:freeze", grounded_freeze),
                    signalType="grounded",
                    dedupeByQueryPerDay=True,
                ),
                step(
                    *("2026-04-14T09:40:00.000Z", "grounded:freeze", grounded_freeze),
                    signalType="grounded",
                    dedupeByQueryPerDay=True,
                ),
            ],
        ),
        Case(
            name="record-provenance-merge",
            purpose="provenance merge (later class wins, kinds must agree, max observedAt), projectKey merge",
            now="2026-04-14T12:00:00.000Z",
            steps=[
                step(
                    *("2026-04-14T09:00:00.000Z", "standup preference"),
                    alice
                    | {
                        "provenance": prov("owner", "interactive", observed=1776157200000, supersedesKey="memory:old"),
                        "projectKey": "Acme/Team",
                    },
                ),
                step(
                    *("2026-04-14T10:00:00.000Z", "standups"),
                    alice
                    | {
                        "score": 0.7,
                        "provenance": prov("agent", "interactive", observed=1776150000000, supersedesKey="memory:old"),
                        "projectKey": "acme/team; Beta/X",
                    },
                ),
                step(
                    *("2026-04-14T11:00:00.000Z", "team rituals"),
                    alice | {"score": 0.6, "provenance": prov("owner", "cron", observed=1776164400000)},
                ),
                step("2026-04-14T12:00:00.000Z", "who likes async", alice | {"score": 0.9}),
                step(
                    *("2026-04-14T12:00:00.000Z", "poisoned"),
                    oncall | {"provenance": prov("untrusted", "subagent", observed=1776168000000)},
                ),
            ],
        ),
        Case(
            name="record-filters",
            purpose="what is not recorded (other sources, long-term paths, contaminated/empty); the day in the tz",
            now="2026-04-15T03:30:00.000Z",
            steps=[
                step(
                    "2026-04-15T03:30:00.000Z",
                    "mixed results",
                    result("memory/2026-04-14.md", 3, 3, FREEZE, 1.4),
                    result("MEMORY.md", 3, 3, "- Long-term fact.", 0.99),
                    result("memory/dreaming/2026-04-14.md", 1, 1, "Dream text.", 0.9),
                    result("memory/2026-04-14.md", 4, 4, "User: what did we decide?", 0.9),
                    result("memory/2026-04-14.md", 5, 5, "   ", 0.9),
                    result("sessions/abc.jsonl", 1, 1, "session hit", 0.9) | {"source": "sessions"},
                    result("2026-04-13.md", 2, 3, "Bare legacy path fact.", -0.5),
                    result(corpus, 7, 7, "User: keep the transcript turn", 0.7),
                    result("memory/team/2026-04-14-notes.md", 2.7, 0, "Nested daily note, odd lines.", 0.5),
                    timezone="America/Los_Angeles",
                ),
            ],
        ),
    ]


def all_cases() -> list[Case]:
    """Return every case, in golden order (generated cases unexpanded: see ``expand``)."""
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
    """Return the case called ``name``."""
    for case in all_cases():
        if case.name == name:
            return case
    raise KeyError(name)
