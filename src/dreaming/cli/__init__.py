"""The ``dreaming`` command line: the Typer app (``app.py``) and its commands, one module per area.

``night.py``: init, run, now, status, schedule, eval, insights; ``memory.py``: promote, doctor, search, gap;
``options.py``: the options and output helpers they share.
"""

from __future__ import annotations

from dreaming.cli.app import app, main

__all__ = ["app", "main"]
