"""The viewer as a small ASGI app (Starlette): GET only, every page re-read from the files, a token off loopback.

There is no write endpoint: the routes accept GET (and HEAD) and nothing else. Bound to a loopback address the app
is open to that machine; bound elsewhere, :func:`create_app` is given a token, and a request must carry it (the
``token`` query parameter, which sets a cookie for the next pages, a ``dreaming_view`` cookie, or
``Authorization: Bearer``), compared in constant time.
"""

from __future__ import annotations

import hmac

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Route

from dreaming.view._site import CONTENT_SECURITY_POLICY, PAGES, Site

__all__ = ["COOKIE", "create_app"]

COOKIE = "dreaming_view"
"""The cookie that carries the token between pages."""
_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY + "; frame-ancestors 'none'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def _presented(request: Request) -> str:
    header = request.headers.get("authorization", "")
    if header.lower().startswith("bearer "):
        return header[7:].strip()
    return request.query_params.get("token") or request.cookies.get(COOKIE) or ""


def create_app(site: Site, *, token: str | None = None) -> Starlette:
    """Return the viewer app for ``site``; with ``token``, every request must present it."""
    names = {name for name, _ in PAGES}

    async def page(request: Request) -> Response:
        if token and not hmac.compare_digest(_presented(request).encode(), token.encode()):
            return PlainTextResponse("a token is required: open the URL `dreaming view` printed", 401, headers=_HEADERS)
        name = request.path_params.get("name", "index.html")
        if name not in names:
            return PlainTextResponse("no such page", 404, headers=_HEADERS)
        html = await run_in_threadpool(site.render, name)
        response = HTMLResponse(html, headers=_HEADERS)
        if token and request.query_params.get("token"):
            response.set_cookie(COOKIE, token, httponly=True, samesite="strict")
        return response

    return Starlette(routes=[Route("/", page, methods=["GET"]), Route("/{name}", page, methods=["GET"])])
