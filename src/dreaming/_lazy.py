"""Package faces whose names load on first use, so importing a package pulls in only what is asked for.

A package lists each public name with the module that is its one home and hands the table to :func:`lazy_exports`,
which returns the module-level ``__getattr__`` and ``__dir__`` of PEP 562. ``--help`` and the read-only commands then
import no LangGraph, LangChain or gateway (``tests/cli/test_startup.py``).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, homes: Mapping[str, str], names: Sequence[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """Return ``(__getattr__, __dir__)`` for ``package``: each name in ``homes`` imported from its home when first used.

    A name, once loaded, is stored in the package's namespace, so later lookups never reach ``__getattr__``.
    """
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(names)

    return __getattr__, __dir__
