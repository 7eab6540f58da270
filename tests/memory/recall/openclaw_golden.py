"""The OpenClaw 2026.9.6 goldens: list the cases, load a case's inputs, build its workspace, load what OpenClaw did.

The files under ``golden/openclaw-2026.9.6/`` come from running the real ``openclaw@2026.9.6`` (``make
compat-openclaw``, see ``compat/openclaw/``); their formats and each case's purpose are in that folder's README.md.
Nothing here needs Node: the goldens are committed. A generated case (``many-entries-5000``) keeps only its recipe in
case.json; its notes and store are rebuilt by ``compat/openclaw/cases.py`` and checked against the stored digest.

Typical use in a parity test::

    case = load_case("basic-mixed-counters")
    ws_root = build_workspace(case, tmp_path)          # memory/*.md and MEMORY.md as OpenClaw saw them
    ...import case.store into the Python store, run the Python code at case.now...
    assert python_view == expected(case, "store-read.json")["recall"]
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

GOLDEN_ROOT = Path(__file__).resolve().parent / "golden" / "openclaw-2026.9.6"
SCHEMA_SQL = GOLDEN_ROOT / "schema.sql"
CASES_PY = Path(__file__).resolve().parents[3] / "compat" / "openclaw" / "cases.py"

PROMOTION_FILES = (
    "case.json",
    "store-read.json",
    "rank-promote.json",
    "rank-sweep.json",
    "promote/apply.json",
    "promote/store.json",
    "sweep/apply.json",
    "sweep/store.json",
)
"""Files every promotion case has; ``promote/MEMORY.md`` and ``sweep/MEMORY.md`` exist when apply.json says so."""
RECORD_FILES = ("case.json", "record/store.json", "record/steps.json", "record/read.json")
"""Files every record case has."""


@dataclass(frozen=True, kw_only=True)
class GoldenCase:
    """One case's inputs, as OpenClaw was given them."""

    name: str
    purpose: str
    kind: str
    """``promotion`` (read, rank, promote, sweep) or ``record`` (a sequence of recordShortTermRecalls calls)."""
    now: datetime
    """The frozen instant every OpenClaw call saw (aware, UTC)."""
    now_iso: str
    """The same instant as OpenClaw prints it (``2026-04-15T10:00:00.000Z``)."""
    options: dict[str, Any]
    """Overrides merged over the driver's defaults: ``{"rank": {...}, "apply": {...}}`` (see the README)."""
    notes: dict[str, str]
    """Workspace files other than MEMORY.md, by workspace-relative path."""
    memory: str | None
    """MEMORY.md's text before the run, or None when absent."""
    store: dict[str, Any] | None
    """The recall store (JSON v1, ``entries`` keyed by logical key) written row by row into the state DB."""
    phase_signals: dict[str, Any] | None
    """The phase-signal store, written the same way, or None."""
    steps: list[dict[str, Any]] | None
    """Record cases: the recordShortTermRecalls calls (``now`` plus OpenClaw's parameters)."""
    directory: Path
    """The case's golden folder."""


def case_names(kind: str | None = None) -> list[str]:
    """The golden cases in name order, optionally only one ``kind``."""
    names = sorted(p.name for p in GOLDEN_ROOT.iterdir() if (p / "case.json").is_file())
    if kind is None:
        return names
    return [name for name in names if _read_json(GOLDEN_ROOT / name / "case.json")["kind"] == kind]


@cache
def _cases_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("openclaw_golden_cases", CASES_PY)
    if spec is None or spec.loader is None:
        raise FileNotFoundError(CASES_PY)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)
    spec.loader.exec_module(module)
    return module


def _generated(recipe: dict[str, Any], digest: str) -> tuple[dict[str, str], dict[str, Any]]:
    module = _cases_module()
    args = {k: v for k, v in recipe.items() if k != "name"}
    notes, store = module.GENERATORS[recipe["name"]](**args)
    payload = json.dumps({"notes": notes, "store": store}, sort_keys=True, ensure_ascii=False)
    if hashlib.sha256(payload.encode()).hexdigest() != digest:
        raise ValueError(f"compat/openclaw/cases.py no longer rebuilds {recipe} as the goldens were made")
    return dict(notes), dict(store)


def load_case(name: str) -> GoldenCase:
    """Load a case's inputs from its case.json (rebuilding a generated case)."""
    directory = GOLDEN_ROOT / name
    raw = _read_json(directory / "case.json")
    notes: dict[str, str] = raw.get("notes", {})
    store: dict[str, Any] | None = raw.get("store")
    if "generator" in raw:
        notes, store = _generated(raw["generator"], raw["generatedSha256"])
    return GoldenCase(
        name=raw["name"],
        purpose=raw["purpose"],
        kind=raw["kind"],
        now=datetime.fromisoformat(raw["now"].replace("Z", "+00:00")),
        now_iso=raw["now"],
        options=raw["options"],
        notes=notes,
        memory=raw.get("memory"),
        store=store,
        phase_signals=raw.get("phaseSignals"),
        steps=raw.get("steps"),
        directory=directory,
    )


def build_workspace(case: GoldenCase, root: Path) -> Path:
    """Write the case's notes and MEMORY.md under ``root`` (byte for byte) and return ``root``."""
    (root / "memory").mkdir(parents=True, exist_ok=True)
    for rel, text in case.notes.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode())
    if case.memory is not None:
        (root / "MEMORY.md").write_bytes(case.memory.encode())
    return root


def expected(case: GoldenCase | str, rel: str) -> Any:
    """A golden JSON output of the case, e.g. ``expected(case, "promote/store.json")``."""
    return _read_json(_directory(case) / rel)


def expected_memory(case: GoldenCase | str, command: str) -> bytes | None:
    """MEMORY.md's bytes after ``command`` (``promote`` or ``sweep``), or None when OpenClaw left no file."""
    path = _directory(case) / command / "MEMORY.md"
    return path.read_bytes() if path.is_file() else None


def required_files(case: GoldenCase | str) -> list[str]:
    """The files the case's folder must hold."""
    directory = _directory(case)
    kind = _read_json(directory / "case.json")["kind"]
    if kind == "record":
        return list(RECORD_FILES)
    files = list(PROMOTION_FILES)
    for command in ("promote", "sweep"):
        if _read_json(directory / command / "apply.json")["memoryExists"]:
            files.append(f"{command}/MEMORY.md")
    return files


def _directory(case: GoldenCase | str) -> Path:
    return case.directory if isinstance(case, GoldenCase) else GOLDEN_ROOT / case


def _read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))
