"""Backwards compat imports for runnable utilities, to be removed in v1."""

from langgraph._internal._runnable import RunnableCallable, RunnableLike  # noqa: F401
