"""``python -m dreaming``: the command line."""

from dreaming.cli import main

main()
