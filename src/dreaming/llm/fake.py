"""A function-driven fake chat model that reports token usage and supports ``bind_tools`` (for tests and evals).

Example::

    model = FakeChatModel(respond=lambda messages: AIMessage(content="hi"), usage=(120, 8))
    gateway = build_gateway(config, ws, env={"OPENAI_API_KEY": "k"}, now=clock, model_factory=model.factory)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, Field

__all__ = ["FakeChatModel", "Respond", "tool_call_answer"]

Respond = Callable[[list[BaseMessage]], AIMessage | str]


def tool_call_answer(name: str, args: dict[str, Any]) -> AIMessage:
    """Return an AIMessage that calls tool ``name`` with ``args`` (what a structured answer looks like)."""
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": "call_1", "type": "tool_call"}])


class FakeChatModel(BaseChatModel):
    """Answers with ``respond(messages)`` and reports ``usage`` as (input, output[, cached]) tokens, or none.

    Every call is kept in ``calls`` as ``(messages, kwargs)``; ``kwargs`` includes bound tools and ``max_tokens``.
    ``factory`` can be passed as ``build_gateway(model_factory=...)``; the keyword arguments it got are in
    ``factory_kwargs``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    respond: Respond = Field(default=lambda messages: AIMessage(content="ok"))
    usage: tuple[int, int] | tuple[int, int, int] | None = (10, 5)
    calls: list[tuple[list[BaseMessage], dict[str, Any]]] = Field(default_factory=list)
    factory_kwargs: dict[str, Any] = Field(default_factory=dict)

    @property
    def _llm_type(self) -> str:
        return "fake-chat-model"

    def factory(self, **kwargs: Any) -> FakeChatModel:
        """Stand in for ``ChatOpenAI(**kwargs)``: remember the arguments, return this model."""
        self.factory_kwargs = dict(kwargs)
        return self

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind tools the way ChatOpenAI does (as OpenAI tool specs), so tests can see what was offered."""
        specs = [convert_to_openai_tool(t) for t in tools]
        return self.bind(tools=specs, tool_choice=tool_choice, **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.calls.append((list(messages), dict(kwargs)))
        answer = self.respond(list(messages))
        message = AIMessage(content=answer) if isinstance(answer, str) else answer
        if self.usage is not None and message.usage_metadata is None:
            tokens_in, tokens_out, *rest = self.usage
            usage = UsageMetadata(input_tokens=tokens_in, output_tokens=tokens_out, total_tokens=tokens_in + tokens_out)
            if rest:
                usage["input_token_details"] = {"cache_read": rest[0]}
            message = message.model_copy(update={"usage_metadata": usage})
        return ChatResult(generations=[ChatGeneration(message=message)])
