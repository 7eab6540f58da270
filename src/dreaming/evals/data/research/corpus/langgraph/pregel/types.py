"""Re-export types moved to langgraph.types"""

from langgraph.types import (
    All,
    CachePolicy,
    PregelExecutableTask,
    PregelTask,
    RetryPolicy,
    StateSnapshot,
    StateUpdate,
    StreamMode,
    StreamWriter,
    default_retry_on,
)

__all__ = [
    "All",
    "StateUpdate",
    "CachePolicy",
    "PregelExecutableTask",
    "PregelTask",
    "RetryPolicy",
    "StateSnapshot",
    "StreamMode",
    "StreamWriter",
    "default_retry_on",
]

from warnings import warn

from langgraph.warnings import LangGraphDeprecatedSinceV10

warn(
    "Importing from langgraph.pregel.types is deprecated. "
    "Please use 'from langgraph.types import ...' instead.",
    LangGraphDeprecatedSinceV10,
    stacklevel=2,
)
