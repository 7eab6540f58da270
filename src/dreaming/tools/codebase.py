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
import contextlib
import math
import os
import re
import shutil
import signal
import sys
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from langchain_core.tools import BaseTool, StructuredTool

from dreaming.errors import RetryableToolError, ToolError
from dreaming.memory import SECRET_GLOBS, is_secret_path
from dreaming.memory.research import (
    CODE_ROLES,
    GENERIC_STEMS,
    PROSE_SUFFIXES,
    EvidencePool,
    LineRole,
    SourceHit,
    bindings,
    definition_name,
    fence_hits,
    identifiers,
    is_statement,
    open_brackets,
    question_kind,
    redact_secrets,
    search_words,
    short_form,
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

MAX_LINE_CHARS = 300
"""A matched or context line is cut to this many characters."""
MAX_FILES_READ = 24
"""The best-ranked files whose lines are read and ranked (every file found is ranked; none is dropped by path order)."""
MAX_HITS_PER_FILE = 6
"""At most this many lines of one file are returned, so that one long file cannot fill every slot."""
MAX_FILE_CHARS = 2_000_000
"""A file is read up to this many characters (ripgrep's ``--max-filesize`` already skips larger ones)."""
CONTEXT_SHARE = 0.8
"""How much a search word counts when only the line's path or enclosing def/class holds it."""
HEADER_BONUS = 0.15
"""Added to a def/class line whose name holds a search word (a header carries context, rarely the answer)."""
DEFINITION_BONUS = 0.5
"""Added to a line binding a value to a name that holds a search word (``MAX_GAPS = 5`` for "what is MAX_GAPS"): the
definition is what a question about a name wants, not its every use; and to the line of the kind a question asks
for (a ``raise`` for an exception question; half of it for a docstring line of a how/why question)."""
FRAGMENT_PENALTY = 0.3
"""Subtracted from a match whose line is not a statement (``MAX_GAPS,`` in an import list), and from a comment or a
usage example in a docstring (what a line shows is not what the code does)."""
MAX_TERMS = 8
"""At most this many identifiers and salient words of the query are searched on their own."""


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
        # Names are judged below the root only: a root under /tmp/wt-secrets/ or ~/credentials-project/ is the
        # user's choice, a ``secrets.yaml`` inside it (or a link named so) is not.
        try:
            real = path.resolve(strict=True)
        except (OSError, RuntimeError):
            return None
        for root in self.roots:
            if real == root or real.is_relative_to(root):
                given = path.absolute()
                shown = given.relative_to(root) if given.is_relative_to(root) else Path(given.name)
                if is_secret_path(real.relative_to(root)) or is_secret_path(shown):
                    return None
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

    def _list_command(self, rg: Path, term: str, roots: Sequence[Path]) -> list[str]:
        command = [str(rg), "--files-with-matches", "--no-config", "--fixed-strings", "--ignore-case",
                   "--no-require-git", "--max-filesize", self.max_filesize]  # fmt: skip
        for pattern in SECRET_GLOBS:
            command.extend(["--iglob", f"!{pattern}"])
        command.extend(["--glob", "!.git/", "-e", term, "--"])
        command.extend(str(r) for r in roots)
        return command

    async def _files_with(self, rg: Path, term: str, roots: Sequence[Path]) -> set[Path]:
        # The files holding ``term``: one ripgrep listing, bounded in time and output like every search.
        try:
            process = await asyncio.create_subprocess_exec(
                *self._list_command(rg, term, roots),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            raise ToolError(f"could not start ripgrep: {exc}") from exc
        try:
            out, err = await asyncio.wait_for(self._collect(process), timeout=self.timeout_s)
        finally:
            await _stop(process)
        if process.returncode == 2 and not out:
            raise ToolError(f"ripgrep failed: {redact_secrets(err.decode('utf-8', 'replace').strip())[:500]}")
        return {Path(line) for line in out.decode("utf-8", "replace").splitlines() if line}

    async def search(self, query: str, *, max_matches: int | None = None) -> list[SourceHit]:
        """Search the roots for ``query``; return the best lines of the best files.

        Each search word (identifiers as written, then salient words) is listed by ripgrep; a file's score weighs
        the words it holds (in its text or its path) by their rarity (:func:`term_weights`), so the rarest term
        decides which files are read at all, and every file found is ranked (none is dropped by path order). The
        lines of the best files are then ranked with their enclosing def/class and their path as context.

        Raises:
            RetryableToolError: ripgrep ran past ``timeout_s`` (it is killed).
            ToolError: ripgrep is missing or failed.
        """
        limit = max(1, min(max_matches or self.max_matches, self.max_matches))
        query = " ".join(query.split())
        words = list(dict.fromkeys(w.lower() for w in search_words(query) if len(w) >= 3))[:MAX_TERMS]
        roots = [r for r in self.roots if r.exists()]
        if not words or not roots:
            return []
        rg = self.rg_path or find_rg()
        if rg is None:
            raise ToolError("ripgrep (rg) is not installed")
        try:
            listed = await asyncio.gather(*(self._files_with(rg, w, roots) for w in words))
        except TimeoutError as exc:
            raise RetryableToolError(f"ripgrep timed out after {self.timeout_s:g}s") from exc
        files: dict[Path, str] = {}
        for found in listed:
            for path in sorted(found):
                if path not in files and (real := self._resolve_inside(path)) is not None:
                    files[path] = self._display(real)
        holders = {w: {p for p in found if p in files} for w, found in zip(words, listed, strict=True)}
        kind = question_kind(query)
        asked = {w.lower() for w in identifiers(query)}
        weights = term_weights(words, holders, files)
        best = rank_files(words, weights, holders, files)[:MAX_FILES_READ]
        hits: list[SourceHit] = []
        for path in best:
            hits.extend(await asyncio.to_thread(self._file_hits, path, files[path], words, weights, kind, asked))
        hits.sort(key=lambda h: (-h.score, h.path or "", h.line or 0))
        return hits[:limit]

    def _file_hits(
        self, path: Path, display: str, words: Sequence[str], weights: dict[str, float], kind: str, asked: set[str]
    ) -> list[SourceHit]:
        try:
            with path.open("r", encoding="utf-8", errors="replace") as handle:
                lines = handle.read(MAX_FILE_CHARS).splitlines()
        except OSError:
            return []
        outline = outline_lines(lines, prose=display.lower().endswith(PROSE_SUFFIXES))
        path_words = {w for w in words if w in display.lower()}
        scope_words: dict[str, set[str]] = {}
        scored: list[tuple[float, int]] = []
        for index, raw in enumerate(lines):
            present = words_held(words, raw)
            scope, role = outline[index]
            if scope not in scope_words:
                scope_words[scope] = words_held(words, scope)
            context = path_words | scope_words[scope]
            # A line holding no search word still counts when it binds a value inside an asked def/class: the
            # parameter of "before_sleep_log" that a question calls "traceback" is named exc_info.
            in_asked = asked & set(context)
            if not present and not (in_asked and role in ("signature", "body") and bindings(raw, literal=True)):
                continue
            score = line_score(_clip(raw).strip(), role, present, context, weights, kind, in_asked=bool(in_asked))
            scored.append((round(score, 4), index))
        # Only a file's best lines can be returned (``MAX_HITS_PER_FILE``): build and redact those alone.
        best = sorted(scored, key=lambda s: (-s[0], s[1]))[:MAX_HITS_PER_FILE]
        hits = []
        for score, index in best:
            low_i, high_i = max(0, index - self.context_lines), min(len(lines), index + self.context_lines + 1)
            hits.append(
                SourceHit(
                    source_type="codebase",
                    locator=f"{display}:{index + 1}",
                    snippet=redact_secrets("\n".join(_clip(line) for line in lines[low_i:high_i])),
                    score=score,
                    path=display,
                    line=index + 1,
                    line_text=redact_secrets(_clip(lines[index])),
                    scope=outline[index][0],
                    role=outline[index][1],
                )
            )
        return hits

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


def line_score(
    text: str,
    role: str,
    present: set[str],
    context: set[str],
    weights: dict[str, float],
    kind: str,
    *,
    in_asked: bool = False,
) -> float:
    """Return how well one line answers, in the question's own terms.

    The rarity weight of the search words the line holds, plus ``CONTEXT_SHARE`` of those only its path or enclosing
    def/class holds (a parameter line of ``wait_exponential.__init__`` is about ``wait_exponential``), over the weight
    of every word (a word's short form counts: ``max`` for "maximum"); then its shape: ``DEFINITION_BONUS`` for a
    line binding a value to a name holding a search word (in a function body, only a literal value),
    ``HEADER_BONUS`` for such a def/class line, ``DEFINITION_BONUS`` for a ``raise`` when the question asks about an
    exception and for a docstring line when it asks how or why; ``FRAGMENT_PENALTY`` off a fragment, a comment or a
    usage example.
    """
    total = sum(weights.values()) or 1.0
    score = (sum(weights[w] for w in present) + CONTEXT_SHARE * sum(weights[w] for w in context - present)) / total
    # A name made of a generic word ("default", "name", "value") is not the name asked about.
    forms = {form for w in present - GENERIC_STEMS for form in (w, short_form(w) or w)}
    name = definition_name(text)
    names_word = name is not None and bool(words_held(forms, name))
    binds_word = any(words_held(forms, bound) for bound, _ in bindings(text))
    literal = bool(bindings(text, literal=True))
    defines = role in ("code", "signature") or (role == "body" and literal)
    # A literal bound inside the def/class the question names (a default, or a docstring saying `mode="r"`) is what a
    # value question asks for.
    names_word = names_word or (kind == "value" and in_asked and literal and role in (*CODE_ROLES, "docstring"))
    if role == "code" and _DEF_LINE.match(text):
        # A signature that binds a default to a searched name ("errors: str = 'replace'") is a definition too.
        score += DEFINITION_BONUS if binds_word else HEADER_BONUS if names_word else 0.0
    elif ((defines or role == "docstring") and names_word) or (
        kind == "exception" and role in CODE_ROLES and text.startswith("raise ")
    ):
        score += DEFINITION_BONUS
    elif kind == "prose" and role == "docstring" and is_statement(text):
        score += DEFINITION_BONUS / 2
    elif not is_statement(text):
        score -= FRAGMENT_PENALTY
    if role in ("example", "comment"):
        score -= FRAGMENT_PENALTY
    return score


def words_held(words: Iterable[str], text: str) -> set[str]:
    """Return the search words ``text`` holds: each must start one of its words or name parts, or its short form must.

    "detect" is held by "cannot be detected" and "max" by ``max_attempts``; "back" is not held by ``callback``.
    """
    low = text.lower()
    return {
        word
        for word in words
        if any(form in low and _starts_part(text, low, form) for form in (word, short_form(word) or word))
    }


def _starts_part(text: str, low: str, form: str) -> bool:
    # Some occurrence of ``form`` begins a word or a name part: after a non-letter (an underscore included), or at a
    # camelCase boundary ("Retry" in "maxRetry").
    at = low.find(form)
    while at >= 0:
        before = text[at - 1] if at else " "
        if not before.isalnum() or ((before.islower() or before.isdigit()) and text[at].isupper()):
            return True
        at = low.find(form, at + 1)
    return False


def term_weights(words: Sequence[str], holders: dict[str, set[Path]], files: dict[Path, str]) -> dict[str, float]:
    """Return each search word's rarity weight, ``ln(1 + N / df)``: N files found, df those holding the word.

    A file holds a word when its text or its path contains it. A word found nowhere weighs as much as the rarest
    possible one: a file lacking it lacks the question's most specific term.
    """
    total = max(1, len(files))
    weights = {}
    for word in words:
        df = len(holders[word] | {p for p, shown in files.items() if word in shown.lower()})
        weights[word] = math.log(1 + total / max(1, df))
    return weights


def rank_files(
    words: Sequence[str], weights: dict[str, float], holders: dict[str, set[Path]], files: dict[Path, str]
) -> list[Path]:
    """Return the files ranked by the rarity weight of the search words they hold, then by path."""

    def score(path: Path) -> float:
        shown = files[path].lower()
        return sum(weights[w] for w in words if path in holders[w] or w in shown)

    return sorted(files, key=lambda p: (-score(p), files[p]))


_DEF_LINE = re.compile(r"^(?P<indent>\s*)(?:async\s+)?(?:def|class)\s+(?P<name>[A-Za-z_]\w*)")
_TRIPLE = re.compile(r"\"\"\"|'''")
_OPENING_ASSIGN = re.compile(r"^\s*(?:[A-Za-z_]\w*\.)*(?P<name>[A-Za-z_]\w*)\s*(?::[^=]+)?=\s*\S")
_EXAMPLE_START = re.compile(r"^\s*(?:>>>|```|\.\. code-block|[Ee]xamples?\s*:?\s*$|\**[Ee]xample\**|[Uu]sage\s*:)")


def outline_lines(lines: Sequence[str], *, prose: bool = False) -> list[tuple[str, LineRole]]:
    """Return, per line of a source file, its enclosing scope (``Cls.method``) and its role.

    Roles: ``docstring`` inside a triple-quoted string, ``example`` from a usage example in one (``>>>``, a code
    fence, an ``Example:`` heading) to the string's end, ``comment`` for ``#`` lines, ``signature`` for the parameter
    lines of a multi-line ``def (...)``, ``body`` inside a function, ``code`` at module or class level; every line of
    a prose file (Markdown, text) is ``prose``. The lines inside a literal assigned over several lines
    (``special_tokens = {`` ... ``}``) have the name it is assigned to as their innermost scope
    (``cl100k_base.special_tokens``): an entry is bound to that name. Fixed and cheap: indentation, brackets and
    triple quotes, no parser.
    """
    if prose:
        return [("", "prose")] * len(lines)
    out: list[tuple[str, LineRole]] = []
    stack: list[tuple[int, str, bool]] = []  # (indent, name, is a function)
    in_string = in_example = False
    depth = 0  # open brackets of a signature still being read
    literal, literal_depth = "", 0  # the name a multi-line literal is assigned to, and its brackets still open
    for raw in lines:
        stripped = raw.strip()
        scope = ".".join(n for _, n, _ in stack)
        role: LineRole
        if literal_depth > 0 and not in_string:
            literal_depth += open_brackets(stripped)
            role = "comment" if stripped.startswith("#") else "body" if stack and stack[-1][2] else "code"
            out.append((f"{scope}.{literal}" if scope else literal, role))
            in_string = len(_TRIPLE.findall(raw)) % 2 == 1
            continue
        if in_string:
            in_example = in_example or bool(_EXAMPLE_START.match(raw))
            role = "example" if in_example else "docstring"
            if len(_TRIPLE.findall(raw)) % 2 == 1:
                in_string = in_example = False
            out.append((scope, role))
            continue
        if depth > 0:
            # A parameter's documentation (typer's Annotated[..., Doc("""...""")]) is a string, not the signature.
            opens = len(_TRIPLE.findall(raw)) % 2 == 1
            depth += open_brackets(_TRIPLE.split(stripped, 1)[0] if opens else stripped)
            out.append((scope, "comment" if stripped.startswith("#") else "docstring" if opens else "signature"))
            in_string = in_string or opens
            continue
        indent = len(raw) - len(raw.lstrip())
        if stripped and not stripped.startswith(("#", ")", "]", "}")):
            while stack and stack[-1][0] >= indent:
                stack.pop()
        match = _DEF_LINE.match(raw)
        if match:
            stack.append((len(match.group("indent")), match.group("name"), not stripped.startswith("class ")))
            depth = max(0, open_brackets(stripped))
        scope = ".".join(n for _, n, _ in stack)
        if stripped.startswith("#"):
            role = "comment"
        elif stripped.startswith(('"""', "'''", 'r"""')):
            role = "docstring"
        elif match:
            role = "code"
        else:
            role = "body" if stack and stack[-1][2] else "code"
            opening = _OPENING_ASSIGN.match(raw)
            if opening and (opened := open_brackets(stripped)) > 0:
                literal, literal_depth = opening.group("name"), opened
        if len(_TRIPLE.findall(raw)) % 2 == 1:
            in_string, in_example = True, False
        out.append((scope, role))
    return out


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
