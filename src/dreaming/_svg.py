"""The two primitives of every inline SVG the project draws (the viewer's charts, the backtest's plot).

No script, no library, every text escaped: the viewer's pages allow no script at all, and a title or label may be
text from the workspace.
"""

from __future__ import annotations

from html import escape

__all__ = ["svg", "svg_text"]


def svg(title: str, body: list[str], *, width: int, height: int) -> str:
    """Return an ``<svg>`` of ``width`` x ``height`` holding ``body``, titled ``title`` for screen readers."""
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}"'
        f' role="img" aria-label="{escape(title)}"><title>{escape(title)}</title>' + "".join(body) + "</svg>"
    )


def svg_text(x: float, y: float, text: str, *, anchor: str = "middle", size: int = 11, cls: str = "") -> str:
    """Return a ``<text>`` at ``(x, y)``, escaped."""
    klass = f' class="{cls}"' if cls else ""
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="{size}"{klass}>{escape(text)}</text>'
