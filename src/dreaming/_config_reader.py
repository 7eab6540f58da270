"""Reading one table of ``dreaming.toml``: values are parsed leniently and every problem becomes a warning."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import field, fields
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

__all__ = ["TableReader", "ranged", "read_fields", "table"]

_N = TypeVar("_N", int, float)
_C = TypeVar("_C", bound="DataclassInstance")


class TableReader:
    """Reads one table, collecting warnings instead of failing."""

    def __init__(self, table: Mapping[str, Any], name: str, warnings: list[str]) -> None:
        self.table = dict(table)
        self.name = name
        self.warnings = warnings
        self.seen: set[str] = set()

    def _raw(self, key: str) -> Any:
        self.seen.add(key)
        value = self.table.get(key)
        if isinstance(value, str) and not value.strip():
            return None
        return value

    def _warn(self, key: str, value: Any, why: str, default: Any) -> None:
        self.warnings.append(f"[{self.name}] {key} = {value!r} is {why}; using the default {default!r}")

    def number(
        self,
        key: str,
        default: float,
        *,
        minimum: float = 0.0,
        maximum: float | None = None,
        integer: bool = False,
    ) -> Any:
        raw = self._raw(key)
        if raw is None:
            return default
        value: float
        if isinstance(raw, bool):
            self._warn(key, raw, "not a number", default)
            return default
        if isinstance(raw, (int, float)):
            value = float(raw)
        elif isinstance(raw, str):
            try:
                value = float(raw.strip())
            except ValueError:
                self._warn(key, raw, "not a number", default)
                return default
        else:
            self._warn(key, raw, "not a number", default)
            return default
        if not math.isfinite(value) or value < minimum or (maximum is not None and value > maximum):
            bounds = f">= {minimum:g}" + (f" and <= {maximum:g}" if maximum is not None else "")
            self._warn(key, raw, f"out of range (must be {bounds})", default)
            return default
        if integer:
            if value != int(value):
                self._warn(key, raw, "not a whole number", default)
                return default
            return int(value)
        return value

    def flag(self, key: str, default: bool) -> bool:
        raw = self._raw(key)
        if raw is None:
            return default
        if isinstance(raw, bool):
            return raw
        if isinstance(raw, str) and raw.strip().lower() in {
            "true",
            "false",
            "1",
            "0",
            "yes",
            "no",
            "on",
            "off",
        }:
            return raw.strip().lower() in {"true", "1", "yes", "on"}
        self._warn(key, raw, "not true or false", default)
        return default

    def text(self, key: str, default: str) -> str:
        raw = self._raw(key)
        if raw is None:
            return default
        if not isinstance(raw, str):
            self._warn(key, raw, "not a string", default)
            return default
        return raw.strip()

    def strings(self, key: str, default: tuple[str, ...], *, allowed: tuple[str, ...] | None) -> tuple[str, ...]:
        raw = self._raw(key)
        if raw is None:
            return default
        if not isinstance(raw, list) or not all(isinstance(item, str) for item in raw):
            self._warn(key, raw, "not a list of strings", list(default))
            return default
        values = tuple(item.strip() for item in raw if item.strip())
        if allowed is not None:
            unknown = [v for v in values if v not in allowed]
            if unknown:
                self.warnings.append(f"[{self.name}] {key}: unknown entries {unknown} ignored (known: {list(allowed)})")
                values = tuple(v for v in values if v in allowed)
        return values

    def finish(self, nested: tuple[str, ...] = ()) -> None:
        for key in sorted(set(self.table) - self.seen - set(nested)):
            self.warnings.append(f"[{self.name}] unknown key {key!r} ignored")


def table(root: Mapping[str, Any], key: str, warnings: list[str]) -> Mapping[str, Any]:
    """Return the sub-table ``key`` of ``root``; a value that is not a table is reported and read as empty."""
    value = root.get(key, {})
    if not isinstance(value, Mapping):
        warnings.append(f"[{key}] must be a table; using defaults")
        return {}
    return value


def ranged(default: _N, *, minimum: float = 0.0, maximum: float | None = None) -> _N:
    """Declare a number field of a config table whose value must lie within ``[minimum, maximum]``.

    A number field declared plainly must be ``>= 0`` (the :meth:`TableReader.number` default).
    """
    return field(default=default, metadata={"minimum": minimum, "maximum": maximum})


def read_fields(cls: type[_C], reader: TableReader, **given: Any) -> _C:
    """Build the dataclass ``cls`` from ``reader``'s table, then report the keys it does not know.

    Each field not in ``given`` is read in declaration order, under its own name, with its declared default and by its
    annotated type: ``bool`` as a flag, ``int`` as a whole number and ``float`` as a number (both within the bounds
    of :func:`ranged`), ``str`` as text. ``given`` holds the fields the caller has read itself (before these, so
    their warnings come first); their keys are not reported as unknown.

    Raises:
        TypeError: a field not in ``given`` has a type read no way above (a mistake in the declaration).
    """
    values = dict(given)
    for f in fields(cls):
        if f.name in given:
            continue
        default: Any = f.default
        if f.type == "bool":
            values[f.name] = reader.flag(f.name, default)
        elif f.type in ("int", "float"):
            values[f.name] = reader.number(f.name, default, integer=f.type == "int", **f.metadata)
        elif f.type == "str":
            values[f.name] = reader.text(f.name, default)
        else:
            raise TypeError(f"{cls.__name__}.{f.name}: no reader for the type {f.type!r}")
    out = cls(**values)
    reader.finish(nested=tuple(given))
    return out
