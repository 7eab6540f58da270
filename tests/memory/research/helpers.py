from __future__ import annotations

from collections.abc import Mapping

from dreaming.memory.research import LineReader, SourceHit


def web(snippet: str, domain: str, page: str = "doc", score: float = 0.5) -> SourceHit:
    return SourceHit(source_type="web", locator=f"https://{domain}/{page}", snippet=snippet, score=score, domain=domain)


def code(snippet: str, path: str, line: int, line_text: str, score: float = 1.0) -> SourceHit:
    return SourceHit(
        source_type="codebase",
        locator=f"{path}:{line}",
        snippet=snippet,
        score=score,
        path=path,
        line=line,
        line_text=line_text,
    )


def memory(snippet: str, path: str = "memory/2026-04-01.md", start: int = 3, end: int = 5) -> SourceHit:
    return SourceHit(
        source_type="memory", locator=f"{path}:{start}-{end}", snippet=snippet, score=0.4, path=path, line=start
    )


def lines(files: Mapping[str, str]) -> LineReader:
    def read_line(path: str, line: int) -> str | None:
        text = files.get(path)
        if text is None:
            return None
        all_lines = text.splitlines()
        return all_lines[line - 1] if 0 < line <= len(all_lines) else None

    return read_line
