"""The package's version, in the base floor so that the command line's ``--version`` needs nothing above it.

Kept equal to ``version`` in pyproject.toml (a test compares them).
"""

__version__ = "0.1.0"
