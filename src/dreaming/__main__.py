"""``python -m dreaming``: the command line."""

from dreaming.agent.cli import main

main()
