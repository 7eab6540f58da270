"""Run the real OpenClaw 2026.9.6 on the golden cases and write the golden files; check live interop.

    python compat/openclaw/run.py goldens [CASE ...]   regenerate tests/memory/recall/golden/openclaw-2026.9.6/
    python compat/openclaw/run.py check [CASE ...]     regenerate into a temp dir and diff against the committed ones
    python compat/openclaw/run.py interop              Python and OpenClaw on one state DB (see ``interop``)

Needs ``python compat/openclaw/install.py`` first (Node 24 and openclaw under .cache/openclaw). Every case gets a
fresh workspace and a fresh state dir per command, a frozen clock (the case's ``now``) and TZ=UTC, so the output
does not depend on the machine or the day.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))

import cases as golden_cases  # noqa: E402  (a sibling script, not a package)

GOLDEN = REPO / "tests" / "memory" / "recall" / "golden" / "openclaw-2026.9.6"
CACHE = REPO / ".cache" / "openclaw"
NODE = CACHE / "node" / "bin" / "node"
DRIVER = HERE / "driver.mjs"
CLOCK = HERE / "clock.mjs"
PYTHON = Path(os.environ.get("DREAMING_PYTHON", sys.executable))

Json = dict[str, Any]


class DriverError(RuntimeError):
    """The driver exited non-zero."""


def run_driver(command: str, request: Json, *, state_dir: Path, now: str, home: Path) -> Json:
    """Run one driver command under the frozen clock and return its JSON output."""
    if not NODE.exists():
        raise SystemExit(f"{NODE} is missing: run `python compat/openclaw/install.py` first")
    env = {
        "PATH": f"{NODE.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(home),
        "TZ": "UTC",
        "LANG": "C.UTF-8",
        "OPENCLAW_STATE_DIR": str(state_dir),
        "OPENCLAW_GOLDEN_NOW": now,
        "NODE_NO_WARNINGS": "1",
    }
    proc = subprocess.run(
        [str(NODE), "--import", str(CLOCK), str(DRIVER), command],
        input=json.dumps(request, ensure_ascii=False),
        capture_output=True,
        text=True,
        env=env,
        cwd=str(HERE),
        check=False,
    )
    if proc.returncode != 0:
        raise DriverError(f"driver {command} failed ({proc.returncode}):\n{proc.stderr}")
    result: Json = json.loads(proc.stdout)
    return result


def dump_json(value: Any, *, compact: bool = False) -> str:
    """Golden JSON: UTF-8, field order as produced, 2-space indent (compact for the big case), final newline."""
    if compact:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n"
    return json.dumps(value, ensure_ascii=False, indent=2) + "\n"


def build_workspace(case: golden_cases.Case, root: Path) -> Path:
    """Write the case's notes and MEMORY.md under ``root/ws`` and return that workspace."""
    ws = root / "ws"
    (ws / "memory").mkdir(parents=True)
    for rel, text in case.notes.items():
        target = ws / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode())
    if case.memory is not None:
        (ws / "MEMORY.md").write_bytes(case.memory.encode())
    return ws


def schema_sql(db: Path) -> str:
    """Dump an OpenClaw state DB's schema, like sqlite3's .schema, with the pragmas a reader checks."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        pragmas = {
            name: conn.execute(f"PRAGMA {name}").fetchone()[0] for name in ("journal_mode", "auto_vacuum", "page_size")
        }
        statements = [
            row[0]
            for row in conn.execute(
                "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' "
                "ORDER BY rowid"
            )
        ]
    lines = [
        "-- state/openclaw.sqlite as openclaw@2026.9.6 creates it (Node 24.22.3).",
        "-- SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ORDER BY rowid",
        "-- (sqlite_sequence is left out: SQLite creates it for the AUTOINCREMENT tables). Pragmas as read back:",
        f"-- PRAGMA user_version = {version}",
        *(f"-- PRAGMA {name} = {value}" for name, value in pragmas.items()),
        "",
        *(statement.rstrip() + ";\n" for statement in statements),
    ]
    return "\n".join(lines)


def case_json(case: golden_cases.Case) -> Json:
    """Return the case's inputs as stored in case.json (a generated case keeps its recipe and a digest)."""
    value: Json = {
        "name": case.name,
        "purpose": case.purpose,
        "kind": case.kind,
        "now": case.now,
        "options": case.options,
    }
    if case.generator is not None:
        value["generator"] = case.generator
        value["generatedSha256"] = golden_cases.generated_digest(case)
        return value
    value["notes"] = case.notes
    value["memory"] = case.memory
    if case.kind == "record":
        value["steps"] = case.steps
    else:
        value["store"] = case.store
        value["phaseSignals"] = case.phase_signals
    return value


class CaseRun:
    """Runs one case's commands, each on a fresh workspace and state dir, and collects the golden files."""

    def __init__(self, case: golden_cases.Case, scratch: Path) -> None:
        self.case = golden_cases.expand(case)
        self.scratch = scratch
        self.files: dict[str, bytes] = {}
        self.schema: str | None = None
        self.compact = case.generator is not None

    def _command(self, command: str, extra: Json | None = None) -> tuple[Json, Path]:
        root = self.scratch / command
        root.mkdir()
        ws = build_workspace(self.case, root)
        request: Json = {"workspaceDir": str(ws), "options": self.case.options}
        if self.case.store is not None:
            request["store"] = self.case.store
        if self.case.phase_signals is not None:
            request["phaseSignals"] = self.case.phase_signals
        request.update(extra or {})
        state = root / "state"
        home = root / "home"
        state.mkdir()
        home.mkdir()
        output = run_driver(command, request, state_dir=state, now=self.case.now, home=home)
        if self.schema is None:
            self.schema = schema_sql(state / "state" / "openclaw.sqlite")
        return output, ws

    def _json(self, name: str, value: Any) -> None:
        self.files[name] = dump_json(value, compact=self.compact).encode()

    def _memory(self, name: str, ws: Path) -> None:
        memory = ws / "MEMORY.md"
        if memory.exists():
            self.files[name] = memory.read_bytes()

    def run(self) -> dict[str, bytes]:
        """Run every command of the case and return the golden files by relative path."""
        self.files["case.json"] = dump_json(
            case_json(self.case if self.case.generator is None else self._recipe())
        ).encode()
        if self.case.kind == "record":
            output, _ = self._command("record", {"steps": self.case.steps})
            self._json("record/store.json", output["store"])
            self._json("record/steps.json", output["steps"])
            self._json("record/read.json", output["read"])
            return self.files
        output, _ = self._command("read")
        self._json("store-read.json", output)
        output, _ = self._command("rank")
        self._json("rank-promote.json", output)
        output, ws = self._command("promote")
        self._json(
            "promote/apply.json",
            {
                "candidates": output["candidates"],
                "apply": output["apply"],
                "memoryExists": output["memory"] is not None,
            },
        )
        self._json("promote/store.json", output["store"])
        self._memory("promote/MEMORY.md", ws)
        output, ws = self._command("sweep")
        self._json("rank-sweep.json", {"repair": output["repair"], "candidates": output["candidates"]})
        self._json("sweep/apply.json", {"apply": output["apply"], "memoryExists": output["memory"] is not None})
        self._json("sweep/store.json", output["store"])
        self._memory("sweep/MEMORY.md", ws)
        return self.files

    def _recipe(self) -> golden_cases.Case:
        return golden_cases.case_by_name(self.case.name)


def generate(names: list[str], out: Path) -> None:
    """Run the named cases (all when empty) and write their golden directories under ``out``."""
    selected = [c for c in golden_cases.all_cases() if not names or c.name in names]
    unknown = set(names) - {c.name for c in selected}
    if unknown:
        raise SystemExit(f"unknown cases: {sorted(unknown)}")
    schema: str | None = None
    for case in selected:
        print(f"{case.name} ...", flush=True)
        with tempfile.TemporaryDirectory(prefix=f"oc-golden-{case.name}-") as tmp:
            runner = CaseRun(case, Path(tmp))
            files = runner.run()
            schema = schema or runner.schema
        target = out / case.name
        if target.exists():
            shutil.rmtree(target)
        for rel, data in files.items():
            path = target / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    if not names:
        known = {c.name for c in golden_cases.all_cases()}
        for stale in out.iterdir():
            if stale.is_dir() and stale.name not in known:
                shutil.rmtree(stale)
    if schema is not None:
        (out / "schema.sql").write_text(schema, encoding="utf-8")


def check(names: list[str]) -> int:
    """Regenerate into a temp dir and report every difference from the committed goldens (0: identical)."""
    with tempfile.TemporaryDirectory(prefix="oc-golden-check-") as tmp:
        out = Path(tmp)
        generate(names, out)
        differences = 0
        for fresh in sorted(p for p in out.rglob("*") if p.is_file()):
            rel = fresh.relative_to(out)
            committed = GOLDEN / rel
            if not committed.exists():
                print(f"new: {rel}")
                differences += 1
                continue
            if committed.read_bytes() != fresh.read_bytes():
                differences += 1
                diff = difflib.unified_diff(
                    committed.read_text(encoding="utf-8").splitlines(),
                    fresh.read_text(encoding="utf-8").splitlines(),
                    f"committed/{rel}",
                    f"fresh/{rel}",
                    lineterm="",
                    n=1,
                )
                print("\n".join(list(diff)[:60]))
        for committed in sorted(p for p in GOLDEN.rglob("*") if p.is_file()):
            rel = committed.relative_to(GOLDEN)
            in_scope = not names or rel.parts[0] in names
            if in_scope and len(rel.parts) > 1 and not (out / rel).exists():
                print(f"gone: {rel}")
                differences += 1
        print(f"{differences} difference(s)")
        return 1 if differences else 0


# ---------------------------------------------------------------------------------------------------------------
# Live interop: the Python engine and OpenClaw on one state DB that OpenClaw created.

INTEROP_NOW = "2026-04-15T10:00:00.000Z"
INTEROP_NOTE = """# 2026-04-14

## Network
- Configured VLAN 10 on the Omada router for IoT devices.
- Gateway binds loopback and port 18789.

## Ops
- Deploy freeze starts Friday 18:00 UTC.
- The on-call rotation moves to PagerDuty next week.
- Backups go to S3 Glacier every Sunday night.
"""
INTEROP_PATH = "memory/2026-04-14.md"
PYTHON_QUERIES = ["omada router vlan", "vlan for iot devices", "which vlan is iot on"]


def _oc_result(line: int, score: float) -> Json:
    text = INTEROP_NOTE.splitlines()[line - 1]
    return {
        "path": INTEROP_PATH,
        "startLine": line,
        "endLine": line,
        "score": score,
        "snippet": text,
        "source": "memory",
    }


class Interop:
    """One shared state dir and workspace; OpenClaw through the driver, Python through its CLI."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.state = root / "state"
        self.home = root / "home"
        self.ws = root / "ws"
        for folder in (self.state, self.home, self.ws / "memory"):
            folder.mkdir(parents=True)
        (self.ws / INTEROP_PATH).write_text(INTEROP_NOTE, encoding="utf-8")
        self.failures: list[str] = []

    def openclaw(self, command: str, **request: Any) -> Json:
        """Run a driver command on the shared state dir and workspace."""
        return run_driver(
            command, {"workspaceDir": str(self.ws), **request}, state_dir=self.state, now=INTEROP_NOW, home=self.home
        )

    def python(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Run the Python CLI (``python -m dreaming``) on the shared workspace, OPENCLAW_STATE_DIR set."""
        env = dict(os.environ)
        env.update(
            {
                "PYTHONPATH": str(REPO / "src"),
                "OPENCLAW_STATE_DIR": str(self.state),
                "TZ": "UTC",
                "HOME": str(self.home),
            }
        )
        cmd = [str(PYTHON), "-m", "dreaming", *args, "-w", str(self.ws), "--now", INTEROP_NOW]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        print(f"  $ dreaming {' '.join(args)} -> exit {proc.returncode}")
        return proc

    def expect(self, ok: bool, what: str, detail: Any = "") -> bool:
        """Print and record one check."""
        print(f"  {'PASS' if ok else 'FAIL'}: {what}" + (f"\n        {detail}" if detail and not ok else ""))
        if not ok:
            self.failures.append(what)
        return ok

    def entries(self) -> dict[str, Json]:
        """Return the recall entries as OpenClaw reads them, by key."""
        view = self.openclaw("interop-rank")
        return {e["key"]: e for e in view["store"]["recall"]["entries"]}

    def run(self) -> int:
        """Run every check; return 0 when all pass."""
        print("interop: OpenClaw creates the state DB and records two strong recalls of its own")
        strong = [
            {"now": INTEROP_NOW, "query": q, "results": [_oc_result(8, 0.95), _oc_result(9, 0.95)]}
            for q in ["deploy freeze", "release window", "friday freeze", "on call", "pagerduty"]
        ]
        self.openclaw("record", steps=strong)
        key_oc_promotes = f"memory:{INTEROP_PATH}:8:8"
        key_py_promotes = f"memory:{INTEROP_PATH}:9:9"
        before = self.entries()
        self.expect(
            {key_oc_promotes, key_py_promotes} <= before.keys(), "OpenClaw wrote its two entries", sorted(before)
        )

        print("interop (a): Python records recalls; OpenClaw must read them")
        hits_by_query: dict[str, list[Json]] = {}
        for query in PYTHON_QUERIES:
            proc = self.python("search", query, "--json")
            if proc.returncode != 0:
                self.expect(False, f"dreaming search {query!r} runs", proc.stderr.strip()[-400:])
                continue
            hits_by_query[query] = json.loads(proc.stdout)["hits"]
        after = self.entries()
        vlan = [e for e in after.values() if e["path"] == INTEROP_PATH and e["startLine"] <= 4 <= e["endLine"]]
        self.expect(
            len(vlan) == 1, "OpenClaw sees the entry Python recorded for the VLAN line", f"entries: {sorted(after)}"
        )
        if vlan:
            recorded = vlan[0]
            expected_queries = [
                q
                for q, hits in hits_by_query.items()
                if any(
                    h.get("path") == INTEROP_PATH and h.get("start_line", h.get("startLine")) == recorded["startLine"]
                    for h in hits
                )
            ]
            want = sorted(golden_cases.query_hash(q) for q in expected_queries)
            self.expect(
                recorded["recallCount"] == len(expected_queries),
                f"recallCount is {len(expected_queries)} (one per search that returned it)",
                recorded,
            )
            self.expect(
                sorted(recorded.get("userQueryHashes", [])) == want,
                "userQueryHashes holds exactly those queries' hashes",
                recorded,
            )
        self.expect(
            {key_oc_promotes, key_py_promotes} <= after.keys(),
            "OpenClaw's own entries survived Python's writes",
            sorted(after),
        )

        print("interop (b1): OpenClaw promotes; Python must see it as promoted")
        proc = self.python("promote", "--dry-run", "--json")
        listed_before = self._python_candidates(proc)
        self.expect(
            key_oc_promotes in listed_before, "Python lists OpenClaw's strong entry before promotion", listed_before
        )
        promoted = self.openclaw("interop-promote", keys=[key_oc_promotes])
        self.expect(promoted["apply"]["applied"] == 1, "OpenClaw applied it", promoted["apply"])
        proc = self.python("promote", "--dry-run", "--json")
        listed_after = self._python_candidates(proc)
        self.expect(
            key_oc_promotes in listed_before and key_oc_promotes not in listed_after,
            "Python listed it before and no longer lists it after OpenClaw promoted it",
            {"before": listed_before, "after": listed_after},
        )

        print("interop (b2): Python promotes; OpenClaw must see promotedAt")
        proc = self.python("promote", "--json")
        self.expect(proc.returncode == 0, "dreaming promote runs", proc.stderr.strip()[-400:])
        final = self.entries()
        entry = final.get(key_py_promotes, {})
        self.expect(bool(entry.get("promotedAt")), "OpenClaw reads promotedAt on the entry Python promoted", entry)
        memory = (self.ws / "MEMORY.md").read_text(encoding="utf-8") if (self.ws / "MEMORY.md").exists() else ""
        self.expect(
            f"openclaw-memory-promotion:{key_py_promotes}" in memory,
            "MEMORY.md carries Python's promotion marker for it",
        )
        print(f"interop: {len(self.failures)} failure(s)")
        return 1 if self.failures else 0

    def _python_candidates(self, proc: subprocess.CompletedProcess[str]) -> list[str]:
        if proc.returncode != 0:
            self.expect(False, "dreaming promote --dry-run --json runs", proc.stderr.strip()[-400:])
            return []
        return [c["key"] for c in json.loads(proc.stdout)["candidates"]]


def interop() -> int:
    """Run the interop check in a temp dir; keep it (and say where) when something fails."""
    root = Path(tempfile.mkdtemp(prefix="oc-interop-"))
    status = Interop(root).run()
    if status == 0:
        shutil.rmtree(root)
    else:
        print(f"interop: state and workspace kept in {root}")
    return status


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and run one command."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("goldens", "check"):
        cmd = sub.add_parser(name)
        cmd.add_argument("cases", nargs="*")
    sub.add_parser("interop")
    args = parser.parse_args(argv)
    if args.command == "goldens":
        GOLDEN.mkdir(parents=True, exist_ok=True)
        generate(args.cases, GOLDEN)
        return 0
    if args.command == "check":
        return check(args.cases)
    return interop()


if __name__ == "__main__":
    sys.exit(main())
