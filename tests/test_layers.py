"""The house's floors: a module imports only from its own floor or below, and no import circle exists (deferred
imports and ``TYPE_CHECKING`` imports included: a circle hidden inside a function is still a circle).

Floors, lowest first (``docs/architecture.md``): the base (``config``, ``errors``, ``prompts``), ``memory``, then
``llm``, ``tools`` and ``backtest`` side by side (none imports another), ``graph``, ``night``, then ``chat`` and
``evals`` side by side, ``cli``, and the package's face (``dreaming/__init__.py``, ``__main__.py``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import dreaming

PACKAGE = Path(dreaming.__file__).parent
FLOORS: dict[str, tuple[int, str]] = {
    "config": (0, "base"),
    "_config_reader": (0, "base"),
    "_version": (0, "base"),
    "_lazy": (0, "base"),
    "_svg": (0, "base"),
    "errors": (0, "base"),
    "prompts": (0, "base"),
    "memory": (1, "memory"),
    "llm": (2, "llm"),
    "tools": (2, "tools"),
    "backtest": (2, "backtest"),  # the walk-forward replay: memory and config only
    "graph": (3, "graph"),
    "night": (4, "night"),
    "chat": (5, "chat"),
    "mcp_server": (5, "mcp"),
    "evals": (5, "evals"),
    "studio": (5, "studio"),
    "fleet": (5, "fleet"),
    "serve": (5, "serve"),
    "view": (5, "view"),
    "cli": (6, "cli"),
    "__main__": (7, "face"),
    "": (7, "face"),
}
"""First name under ``dreaming`` -> (floor, room). Rooms on one floor do not import each other."""


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if "data" in parts:  # the eval corpus: third-party code kept as data
            continue
        name = ".".join(("dreaming", *parts)).removesuffix(".__init__")
        found[name] = path
    return found


def _imports(path: Path, *, top_level_only: bool, modules: frozenset[str] = frozenset()) -> set[str]:
    """Return the ``dreaming`` modules ``path`` imports.

    ``from m import n`` counts ``m.n`` when that is one of ``modules`` (a submodule), else ``m`` (a name from it).
    """
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    names: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names |= {f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module
                      for a in node.names}  # fmt: skip
    return {n for n in names if n == "dreaming" or n.startswith("dreaming.")}


def _room(module: str) -> tuple[int, str]:
    first = module.split(".")[1] if "." in module else ""
    return FLOORS[first]


def test_every_module_has_a_floor() -> None:
    assert {_room(name) for name in _modules()} <= set(FLOORS.values())


def test_no_module_imports_up_a_floor_or_across_a_floor() -> None:
    modules = _modules()
    offenders = []
    for name, path in modules.items():
        floor, room = _room(name)
        for imported in _imports(path, top_level_only=False, modules=frozenset(modules)) & modules.keys():
            other_floor, other_room = _room(imported)
            if other_floor > floor or (other_floor == floor and other_room != room):
                offenders.append(f"{name} ({room}) imports {imported} ({other_room})")
    assert offenders == []


def test_no_import_circle() -> None:
    modules = _modules()
    known = frozenset(modules)
    graph = {
        name: _imports(path, top_level_only=False, modules=known) & known - {name} for name, path in modules.items()
    }
    circles = []
    state: dict[str, int] = {}  # 1 on the current path, 2 done

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for nxt in sorted(graph[name]):
            if state.get(nxt) == 1:
                circles.append(" -> ".join([*path[path.index(nxt) :], nxt]))
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert circles == []


def test_the_checks_above_can_fail(tmp_path: Path) -> None:
    sample = tmp_path / "m.py"
    sample.write_text(
        "import dreaming.cli\nfrom dreaming.memory import Workspace\n\ndef f():\n    import dreaming.graph\n"
    )
    assert _imports(sample, top_level_only=True) == {"dreaming.cli", "dreaming.memory"}
    assert "dreaming.graph" in _imports(sample, top_level_only=False)
    assert _room("dreaming.memory.search._index") == (1, "memory") and _room("dreaming") == (7, "face")


def test_the_benchmarks_and_examples_import() -> None:
    # They live outside the package and no other test imports them: a moved name would break them silently.
    import importlib.util

    root = PACKAGE.parents[1]
    scripts = sorted([*(root / "bench").glob("*.py"), *(root / "examples").rglob("*.py")])
    assert len(scripts) >= 5
    for path in scripts:
        spec = importlib.util.spec_from_file_location(f"_script_{path.stem}", path)
        assert spec is not None and spec.loader is not None
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
