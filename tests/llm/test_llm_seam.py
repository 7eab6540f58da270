"""Only ``llm/gateway.py`` may import an LLM client or build a chat model (spec/budget.md, "One gateway")."""

from __future__ import annotations

import ast
from pathlib import Path

import dreaming

PACKAGE = Path(dreaming.__file__).parent
GATEWAY = PACKAGE / "llm" / "gateway.py"
CLIENT_MODULES = ("openai", "langchain_openai", "anthropic", "langchain_anthropic", "langchain_community")
CONSTRUCTORS = {"ChatOpenAI", "AzureChatOpenAI", "init_chat_model", "OpenAI", "AsyncOpenAI", "ChatAnthropic"}
WORDS = {
    ("memory/recall/_concepts.py", "openai"): "a term of OpenClaw's concept-tag glossary: the word, not the module"
}
"""String constants that spell a client module's name as data, each with why (every other such constant fails)."""


def _is_client(module: str) -> bool:
    return any(module == name or module.startswith(name + ".") for name in CLIENT_MODULES)


def violations(path: Path) -> list[str]:
    """Return every LLM-client import, dynamic import or chat-model construction in ``path``."""
    found: list[str] = []
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [f"import {a.name}" for a in node.names if _is_client(a.name)]
        elif isinstance(node, ast.ImportFrom) and node.module and _is_client(node.module):
            found.append(f"from {node.module} import ...")
        elif isinstance(node, ast.ImportFrom) and any(a.name in CONSTRUCTORS for a in node.names):
            found.append(f"from {node.module} import {[a.name for a in node.names]}")
        elif isinstance(node, ast.Name) and node.id in CONSTRUCTORS:
            found.append(f"uses {node.id}")
        elif isinstance(node, ast.Attribute) and node.attr in CONSTRUCTORS:
            found.append(f"uses .{node.attr}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _is_client(node.value):
            if path.is_relative_to(PACKAGE) and (path.relative_to(PACKAGE).as_posix(), node.value) in WORDS:
                continue
            found.append(f"names module {node.value!r}")  # importlib.import_module("openai") and friends
    return [f"{path.relative_to(path.parents[len(path.parents) - 1])}:{f}" for f in found]


def test_only_the_gateway_reaches_a_model() -> None:
    modules = sorted(PACKAGE.rglob("*.py"))
    assert GATEWAY in modules and len(modules) > 10
    offenders = [v for path in modules if path != GATEWAY for v in violations(path)]
    assert offenders == []


def test_the_gateway_is_where_the_client_lives() -> None:
    # If the gateway stopped building ChatOpenAI, the scan above would pass vacuously.
    assert any("langchain_openai" in v for v in violations(GATEWAY))
    assert any("ChatOpenAI" in v for v in violations(GATEWAY))


def test_scan_catches_each_kind_of_violation(tmp_path: Path) -> None:
    samples = {
        "a.py": "import openai\n",
        "b.py": "from langchain_openai import ChatOpenAI\n",
        "c.py": "from langchain.chat_models import init_chat_model\n",
        "d.py": "import importlib\nclient = importlib.import_module('langchain_openai')\n",
        "e.py": "import langchain\nmodel = langchain.chat_models.init_chat_model('x')\n",
        "f.py": "from openai.types import Completion\n",
    }
    for name, source in samples.items():
        (tmp_path / name).write_text(source)
        assert violations(tmp_path / name), name
    (tmp_path / "ok.py").write_text("from langchain_core.messages import AIMessage\n")
    assert violations(tmp_path / "ok.py") == []
