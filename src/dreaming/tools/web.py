"""Web search through Tavily's async client: off without ``TAVILY_API_KEY``, never in its keyless mode.

The seam is :class:`WebSearch`; :class:`TavilyWebSearch` is the real one and :class:`FakeWebSearch` the fake. Only
timeouts, HTTP 429 and 5xx are retried (with exponential backoff); an invalid key (401), a forbidden key or spent plan
(403, 432, 433) and a bad request (400) fail at once, since retrying them only burns calls.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit

import httpx
from langchain_core.tools import BaseTool, StructuredTool

from dreaming.errors import RetryableToolError, ToolError
from dreaming.memory.research import EvidencePool, SourceHit, fence_hits, redact_secrets

__all__ = [
    "TAVILY_BASE_URL",
    "FakeWebSearch",
    "TavilyWebSearch",
    "WebSearch",
    "web_search_from_env",
    "web_search_tool",
]

TAVILY_BASE_URL = "https://api.tavily.com"
"""Tavily's API; ``/search`` is the only endpoint used."""
MAX_SNIPPET_CHARS = 1500
"""A page's content is cut to this many characters."""


class WebSearch(Protocol):
    """Search the web for a query."""

    async def search(self, query: str, *, max_results: int | None = None) -> list[SourceHit]:
        """Return web hits, best first.

        Raises:
            RetryableToolError: timeouts, 429 or 5xx persisted through the retries.
            ToolError: any other failure.
        """
        ...


@dataclass(frozen=True, slots=True)
class FakeWebSearch:
    """A web search answered by a function (sync or async) of the query; records every query."""

    fn: Callable[[str], Sequence[SourceHit] | Awaitable[Sequence[SourceHit]]]
    calls: list[str] = field(default_factory=list)

    async def search(self, query: str, *, max_results: int | None = None) -> list[SourceHit]:
        """Return the function's hits for ``query``."""
        self.calls.append(query)
        result = self.fn(query)
        if isinstance(result, Awaitable):
            result = await result
        hits = list(result)
        return hits if max_results is None else hits[:max_results]


def _domain(url: str) -> str:
    host = (urlsplit(url).hostname or "").lower()
    return host.removeprefix("www.")


def _hit(result: Mapping[str, Any]) -> SourceHit | None:
    url = str(result.get("url") or "").strip()
    content = str(result.get("content") or "").strip()
    if not url or not content:
        return None
    try:
        score = float(result.get("score") or 0.0)
    except (TypeError, ValueError):
        score = 0.0
    title = result.get("title")
    return SourceHit(
        source_type="web",
        locator=url,
        snippet=redact_secrets(content[:MAX_SNIPPET_CHARS]),
        score=score,
        domain=_domain(url),
        title=redact_secrets(str(title)) if title else None,
    )


def _retryable(exc: BaseException) -> bool:
    from tavily.errors import TimeoutError as TavilyTimeoutError
    from tavily.errors import UsageLimitExceededError

    if isinstance(exc, TavilyTimeoutError | httpx.TimeoutException):
        return True
    if isinstance(exc, UsageLimitExceededError):
        # tavily-python raises this for HTTP 429 only (432/433, the spent plan, arrive as ForbiddenError).
        return True
    return isinstance(exc, httpx.HTTPStatusError) and exc.response.status_code >= 500


class TavilyWebSearch:
    """The real web search: ``AsyncTavilyClient.search`` with an explicit key, retried on transient errors only."""

    def __init__(
        self,
        api_key: str,
        *,
        max_results: int = 5,
        timeout_s: float = 20.0,
        retries: int = 2,
        backoff_s: float = 0.5,
        base_url: str = TAVILY_BASE_URL,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        """Set up the search.

        Args:
            api_key: the Tavily key; blank is refused (the client would fall back to keyless mode).
            max_results: results asked per query.
            timeout_s: per-request timeout.
            retries: extra attempts after a timeout, 429 or 5xx.
            backoff_s: the first wait; doubled before each further attempt.
            base_url: the API root.
            sleep: how to wait between attempts (tests pass a recorder).
        """
        if not api_key or not api_key.strip():
            raise ValueError("a Tavily API key is required; without one the web source is off")
        self._api_key = api_key.strip()
        self.max_results = max_results
        self.timeout_s = timeout_s
        self.retries = retries
        self.backoff_s = backoff_s
        self.base_url = base_url
        self._sleep = sleep

    def __repr__(self) -> str:
        return f"TavilyWebSearch(max_results={self.max_results}, timeout_s={self.timeout_s}, retries={self.retries})"

    async def _once(self, query: str, max_results: int) -> dict[str, Any]:
        from tavily import AsyncTavilyClient  # only a night with a Tavily key loads the client

        async with AsyncTavilyClient(api_key=self._api_key, api_base_url=self.base_url) as client:
            response: dict[str, Any] = await client.search(
                query, max_results=max_results, timeout=self.timeout_s, search_depth="basic"
            )
            return response

    async def search(self, query: str, *, max_results: int | None = None) -> list[SourceHit]:
        """Search Tavily for ``query`` (secrets redacted from it first) and return its results as hits.

        Raises:
            RetryableToolError: every attempt hit a timeout, 429 or 5xx.
            ToolError: any other failure, at once.
        """
        query = redact_secrets(" ".join(query.split()))
        if not query:
            return []
        wanted = max(1, min(max_results or self.max_results, 20))
        last: BaseException | None = None
        for attempt in range(self.retries + 1):
            if attempt:
                await self._sleep(self.backoff_s * 2 ** (attempt - 1))
            try:
                response = await self._once(query, wanted)
            except Exception as exc:
                if not _retryable(exc):
                    raise ToolError(f"web search failed: {type(exc).__name__}: {_safe(exc)}") from exc
                last = exc
                continue
            results = response.get("results") or []
            hits = [_hit(r) for r in results if isinstance(r, Mapping)]
            return [h for h in hits if h is not None]
        assert last is not None
        raise RetryableToolError(
            f"web search failed after {self.retries + 1} attempts: {type(last).__name__}: {_safe(last)}"
        ) from last


def _safe(exc: BaseException) -> str:
    return redact_secrets(str(exc))[:300]


def web_search_from_env(env: Mapping[str, str], **options: Any) -> WebSearch | None:
    """Return a Tavily web search when ``TAVILY_API_KEY`` is set and not blank, else None (the web source is off).

    ``options`` go to :class:`TavilyWebSearch`.
    """
    key = (env.get("TAVILY_API_KEY") or "").strip()
    if not key:
        return None
    return TavilyWebSearch(key, **options)


def web_search_tool(search: WebSearch, *, pool: EvidencePool | None = None) -> BaseTool:
    """Return the ``web_search`` LangChain tool over ``search``.

    The model sees each result fenced as data; with ``pool``, results join it and are shown with their evidence ids.
    The tool's artifact is the list of :class:`SourceHit` found.
    """

    async def web_search(query: str, max_results: int = 5) -> tuple[str, list[SourceHit]]:
        hits = await search.search(query, max_results=max(1, min(max_results, 10)))
        return fence_hits(hits, pool), hits

    return StructuredTool.from_function(
        coroutine=web_search,
        name="web_search",
        description="Search the web (read-only). Returns page excerpts with their URLs.",
        response_format="content_and_artifact",
    )
