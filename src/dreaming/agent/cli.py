"""The ``dreaming`` command line. Each area registers its commands from its own module."""

from __future__ import annotations

import logging

import typer

__all__ = ["app", "main"]

app = typer.Typer(
    name="dreaming",
    help="A memory for LLM agents that learns while they sleep.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def main() -> None:
    """Run the command line."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    app()


def _register_all() -> None:
    from dreaming.agent import _cli_recall, _cli_run, _cli_search

    _cli_run.register(app)
    _cli_recall.register(app)
    _cli_search.register(app)


_register_all()
