"""Codebase search: ripgrep in a subprocess over the configured roots, read-only, bounded, secret files never opened.

The seam is :class:`CodebaseSearch`; :class:`RipgrepSearch` is the real one and :class:`FakeCodebaseSearch` the fake.
ripgrep runs with ``--json --fixed-strings --ignore-case --sort path`` over the query, each identifier in it as written
(``MAX_GAPS``) and each of its other salient words,
respects ``.gitignore`` even outside a git repository (``--no-require-git``), skips hidden files, binary files and files
over ``max_filesize``, never follows symlinks, and is given exclusion globs for secret files. Every match is filtered
again in Python (secret names, paths outside the roots) and its text redacted, so a key never leaves this module.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import fnmatch
import json
import os
import shutil
import signal
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from langchain_core.tools import BaseTool, StructuredTool

from dreaming.errors import RetryableToolError, ToolError
from dreaming.memory.research import (
    EvidencePool,
    SourceHit,
    definition_name,
    fence_hits,
    is_statement,
    redact_secrets,
    salient_terms,
    search_words,
    term_coverage,
)

__all__ = [
    "SECRET_GLOBS",
    "CodebaseSearch",
    "FakeCodebaseSearch",
    "RipgrepSearch",
    "codebase_search_tool",
    "find_rg",
    "is_secret_path",
]

SECRET_GLOBS = (
    ".env*",
    "*.pem",
    "*.key",
    "id_*",
    "*credentials*",
    ".netrc",
    "*.p12",
    "*.pfx",
    ".npmrc",
    ".pypirc",
    "*.kdbx",
    ".htpasswd",
)
"""File names never opened, whatever the ignore files say."""

MAX_LINE_CHARS = 300
"""A matched or context line is cut to this many characters."""
MAX_SCANNED_MATCHES = 1000
"""Ranking sees at most this many matches (in path order); ripgrep's output is bounded in bytes as well."""
DEFINITION_BONUS = 0.5
"""Added to a match whose line defines a name covering half the query's terms or more (``MAX_GAPS = 5`` for
"what is MAX_GAPS"): the definition is what a question about a name wants, not its every use."""
FRAGMENT_PENALTY = 0.5
"""Subtracted from a match whose line is not a statement (``MAX_GAPS,`` in an import list)."""
MAX_TERMS = 8
"""At most this many identifiers and salient words of the query are searched on their own."""


def is_secret_path(path: str | Path) -> bool:
    """Return whether any part of ``path`` is a secret file name or a ``.git`` folder."""
    parts = Path(path).parts
    if ".git" in parts:
        return True
    return any(fnmatch.fnmatch(part.lower(), pattern) for part in parts for pattern in SECRET_GLOBS)


def find_rg() -> Path | None:
    """Return the ripgrep binary: on PATH, else next to this Python (the ``ripgrep`` wheel), else None."""
    found = shutil.which("rg")
    if found:
        return Path(found)
    local = Path(sys.prefix) / "bin" / "rg"
    return local if local.is_file() else None


class CodebaseSearch(Protocol):
    """Search source code for a query."""

    async def search(self, query: str, *, max_matches: int = 20) -> list[SourceHit]:
        """Return up to ``max_matches`` codebase hits, best first.

        Raises:
            RetryableToolError: a timeout.
            ToolError: the search could not run.
        """
        ...


@dataclass(frozen=True, slots=True)
class FakeCodebaseSearch:
    """A codebase search answered by a function (sync or async) of the query; records every query."""

    fn: Callable[[str], Sequence[SourceHit] | Awaitable[Sequence[SourceHit]]]
    calls: list[str] = field(default_factory=list)

    async def search(self, query: str, *, max_matches: int = 20) -> list[SourceHit]:
        """Return the function's hits for ``query`` (at most ``max_matches``)."""
        self.calls.append(query)
        result = self.fn(query)
        if isinstance(result, Awaitable):
            result = await result
        return list(result)[:max_matches]


@dataclass(slots=True)
class _Match:
    path: Path
    line: int
    text: str
    context: dict[int, str]


def _text_of(data: dict[str, Any]) -> str:
    if "text" in data:
        return str(data["text"])
    return base64.b64decode(data.get("bytes", "")).decode("utf-8", errors="replace")


def _clip(line: str) -> str:
    line = line.rstrip("\r\n")
    return line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + "…"


class RipgrepSearch:
    """The real codebase search: ``rg --json`` over ``roots``, bounded in matches, context, bytes and time."""

    def __init__(
        self,
        roots: Sequence[Path],
        *,
        base: Path | None = None,
        rg_path: Path | None = None,
        timeout_s: float = 10.0,
        context_lines: int = 2,
        max_matches: int = 20,
        max_filesize: str = "1M",
        max_output_bytes: int = 2_000_000,
    ) -> None:
        """Set up the search.

        Args:
            roots: folders (or files) to search; resolved, missing ones skipped.
            base: paths in hits are relative to this folder when under it (the workspace), else relative to the
                roots' common parent folder (``src/pkg/mod.py:26`` for a root ``/repo/src``), absolute only when
                that parent is the filesystem root.
            rg_path: the ripgrep binary; :func:`find_rg` by default.
            timeout_s: the process is killed after this long (RetryableToolError).
            context_lines: lines of context before and after each match.
            max_matches: the most hits returned by a search (also per file).
            max_filesize: ripgrep's ``--max-filesize``.
            max_output_bytes: ripgrep output beyond this is not read; the process is stopped.
        """
        self.roots = tuple(Path(r).expanduser().resolve() for r in roots)
        self.base = base.resolve() if base is not None else None
        self.anchor = _common_parent(self.roots)
        self.rg_path = rg_path
        self.timeout_s = timeout_s
        self.context_lines = context_lines
        self.max_matches = max_matches
        self.max_filesize = max_filesize
        self.max_output_bytes = max_output_bytes

    def _display(self, path: Path) -> str:
        for folder in (self.base, self.anchor):
            if folder is not None:
                with contextlib.suppress(ValueError):
                    return path.relative_to(folder).as_posix()
        return path.as_posix()

    def _resolve_inside(self, path: Path) -> Path | None:
        # Refuse anything that resolves (through a symlink or "..") outside every root, or that is a secret file.
        try:
            real = path.resolve(strict=True)
        except (OSError, RuntimeError):
            return None
        if is_secret_path(path) or is_secret_path(real):
            return None
        for root in self.roots:
            if real == root or real.is_relative_to(root):
                return real
        return None

    def read_line(self, path: str, line: int) -> str | None:
        """Return the current text of a hit's ``path:line`` (a ``validate_claims`` line reader), or None.

        Only files inside the roots and not secret are read; the text is redacted like the hits.
        """
        if line < 1:
            return None
        given = Path(path)
        # A relative locator is under the workspace or the roots' common parent (see ``_display``), in that order.
        folders = [self.base, self.anchor] if self.base is not None else [self.anchor or Path.cwd()]
        candidates = [given] if given.is_absolute() else [folder / given for folder in folders if folder is not None]
        real = next((found for c in candidates if (found := self._resolve_inside(c)) is not None), None)
        if real is None or not real.is_file():
            return None
        try:
            with real.open("r", encoding="utf-8", errors="replace") as handle:
                for number, text in enumerate(handle, start=1):
                    if number == line:
                        return redact_secrets(_clip(text))
        except OSError:
            return None
        return None

    def _command(self, rg: Path, patterns: Sequence[str], roots: Sequence[Path], per_file: int) -> list[str]:
        command = [
            str(rg),
            "--json",
            "--no-config",
            "--fixed-strings",
            "--ignore-case",
            "--no-require-git",
            "--sort",
            "path",
            "--max-filesize",
            self.max_filesize,
            "--max-count",
            str(per_file),
            "--context",
            str(self.context_lines),
        ]
        for pattern in SECRET_GLOBS:
            command.extend(["--iglob", f"!{pattern}"])
        command.extend(["--glob", "!.git/"])
        for pattern in patterns:
            command.extend(["-e", pattern])
        command.append("--")
        command.extend(str(r) for r in roots)
        return command

    async def search(self, query: str, *, max_matches: int | None = None) -> list[SourceHit]:
        """Search the roots for ``query``, its identifiers and salient words; return hits ranked by term coverage.

        Raises:
            RetryableToolError: ripgrep ran past ``timeout_s`` (it is killed).
            ToolError: ripgrep is missing or failed without any match.
        """
        limit = max(1, min(max_matches or self.max_matches, self.max_matches))
        query = " ".join(query.split())
        terms = salient_terms(query)
        words = [w for w in search_words(query) if len(w) >= 3][:MAX_TERMS]
        patterns = list(dict.fromkeys([query.lower(), *(w.lower() for w in words)]))
        roots = [r for r in self.roots if r.exists()]
        if not query or not roots:
            return []
        rg = self.rg_path or find_rg()
        if rg is None:
            raise ToolError("ripgrep (rg) is not installed")
        # Read far more than we return so that ranking, not file order, picks the hits.
        command = self._command(rg, patterns, roots, limit * 10)
        try:
            process = await asyncio.create_subprocess_exec(
                *command,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            raise ToolError(f"could not start ripgrep: {exc}") from exc
        try:
            out, err = await asyncio.wait_for(self._collect(process), timeout=self.timeout_s)
        except TimeoutError as exc:
            raise RetryableToolError(f"ripgrep timed out after {self.timeout_s:g}s") from exc
        finally:
            await _stop(process)
        matches = self._parse(out, MAX_SCANNED_MATCHES)
        if process.returncode == 2 and not matches:
            raise ToolError(f"ripgrep failed: {redact_secrets(err.decode('utf-8', 'replace').strip())[:500]}")
        return self._rank(query, terms, matches)[:limit]

    async def _collect(self, process: asyncio.subprocess.Process) -> tuple[bytes, bytes]:
        assert process.stdout is not None and process.stderr is not None
        err_task = asyncio.ensure_future(_drain(process.stderr, 65_536))
        chunks: list[bytes] = []
        size = 0
        while size < self.max_output_bytes:
            chunk = await process.stdout.read(65_536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        out = b"".join(chunks)[: self.max_output_bytes]
        if size >= self.max_output_bytes:
            # Enough read: stop ripgrep, keep whole lines only.
            _kill(process)
            out = out[: out.rfind(b"\n") + 1]
        await process.wait()
        err = await err_task
        return out, err

    def _parse(self, out: bytes, cap: int) -> list[_Match]:
        matches: list[_Match] = []
        file_lines: dict[int, str] = {}
        file_matches: list[_Match] = []
        for raw in out.splitlines():
            try:
                message = json.loads(raw)
            except ValueError:
                continue
            kind, data = message.get("type"), message.get("data", {})
            if kind == "begin":
                file_lines, file_matches = {}, []
            elif kind in {"match", "context"}:
                path = Path(_text_of(data.get("path", {})))
                number = int(data.get("line_number") or 0)
                text = _clip(_text_of(data.get("lines", {})))
                file_lines[number] = text
                if kind == "match" and number:
                    file_matches.append(_Match(path, number, text, file_lines))
            elif kind == "end":
                matches.extend(file_matches)
                file_matches = []
                if len(matches) >= cap:
                    break
        return matches[:cap]

    def _rank(self, query: str, terms: tuple[str, ...], matches: list[_Match]) -> list[SourceHit]:
        ranked: list[tuple[float, str, int, SourceHit]] = []
        # Many matches share a file: resolve and vet each path once, not once per match.
        inside: dict[Path, Path | None] = {}
        for match in matches:
            if match.path not in inside:
                inside[match.path] = self._resolve_inside(match.path)
            real = inside[match.path]
            if real is None:
                continue
            low, high = match.line - self.context_lines, match.line + self.context_lines
            snippet_lines = [match.context[n] for n in range(low, high + 1) if n in match.context]
            snippet = redact_secrets("\n".join(snippet_lines))
            line_text = redact_secrets(match.text)
            # The matched line's own coverage counts most, then the exact phrase, then the context's coverage; a
            # definition of what was asked rises, a fragment (a name in a list) sinks.
            line_coverage = term_coverage(terms, match.text) if terms else 0.0
            phrase = 0.5 if query.lower() in match.text.lower() else 0.0
            context_coverage = term_coverage(terms, snippet) if terms else 0.0
            name = definition_name(match.text)
            defines = name is not None and bool(terms) and term_coverage(terms, name) >= 0.5
            shape = DEFINITION_BONUS if defines else 0.0 if is_statement(match.text) else -FRAGMENT_PENALTY
            score = round(line_coverage + phrase + 0.25 * context_coverage + shape, 4)
            display = self._display(real)
            hit = SourceHit(
                source_type="codebase",
                locator=f"{display}:{match.line}",
                snippet=snippet,
                score=score,
                path=display,
                line=match.line,
                line_text=line_text,
            )
            ranked.append((-score, display, match.line, hit))
        ranked.sort(key=lambda item: item[:3])
        return [item[3] for item in ranked]


def _common_parent(roots: Sequence[Path]) -> Path | None:
    # The folder holding every root, so that locators name the root itself ("src/..."); None when that is "/".
    if not roots:
        return None
    parent = Path(os.path.commonpath([root.parent for root in roots]))
    return None if parent == Path(parent.anchor) else parent


async def _drain(stream: asyncio.StreamReader, keep: int) -> bytes:
    # Read to the end so that ripgrep never blocks on a full stderr pipe; keep only the start.
    kept = b""
    while chunk := await stream.read(65_536):
        if len(kept) < keep:
            kept += chunk[: keep - len(kept)]
    return kept


def _kill(process: asyncio.subprocess.Process) -> None:
    # The process leads its own session (start_new_session), so its group holds only ripgrep and its children.
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)


async def _stop(process: asyncio.subprocess.Process) -> None:
    _kill(process)
    with contextlib.suppress(ProcessLookupError):
        await process.wait()


def codebase_search_tool(search: CodebaseSearch, *, pool: EvidencePool | None = None) -> BaseTool:
    """Return the ``codebase_search`` LangChain tool over ``search``.

    The model sees each hit fenced as data; with ``pool``, hits join it and are shown with their evidence ids.
    The tool's artifact is the list of :class:`SourceHit` found.
    """

    async def codebase_search(query: str, max_matches: int = 10) -> tuple[str, list[SourceHit]]:
        hits = await search.search(query, max_matches=max(1, min(max_matches, 20)))
        return fence_hits(hits, pool), hits

    return StructuredTool.from_function(
        coroutine=codebase_search,
        name="codebase_search",
        description=(
            "Search the project's source code and docs (read-only) for a literal phrase or identifier. "
            "Returns matching lines with context and their path:line."
        ),
        response_format="content_and_artifact",
    )
