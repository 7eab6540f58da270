"""A LangGraph chat agent whose memory learns while it sleeps.

The agent answers with four tools from ``dreaming.chat``: it searches its memory (each search recorded, so a miss
becomes a knowledge gap for tonight), records what it could not find, reads its prior insights, and can "dream now"
(also the ``/dream`` chat command). Every turn's system prompt carries the insights the nights have verified, so what
tonight learns is what tomorrow's agent knows.

Run it::

    python examples/chat_agent/agent.py --workspace path/to/workspace

With ``OPENAI_API_KEY`` set it talks through ``ChatOpenAI`` (``DREAMING_CHAT_MODEL``, default ``gpt-4.1-mini``);
without a key it runs offline on a scripted model that searches its memory for every question.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from dreaming import FakeChatModel, Workspace, load_prior_insights
from dreaming.chat import dream_now_tool, memory_search_tool, prior_insights_tool, record_gap_tool

PERSONA = "You are a helpful assistant with a long-term memory. Search your memory before you answer a question."


def system_prompt(ws: Workspace) -> str:
    """Return this turn's system prompt: the persona, then what the nights have learned and verified."""
    prior = load_prior_insights(ws).text
    return PERSONA + (f"\n\nWhat your memory has learned and verified:\n\n{prior}" if prior else "")


class ChatAgent:
    """One agent on one workspace: a LangGraph tool-calling loop, plus the ``/dream`` command."""

    def __init__(self, ws: Workspace, model: BaseChatModel, *, clock: Callable[[], datetime] | None = None) -> None:
        self.ws = ws
        now = clock or (lambda: datetime.now(UTC))
        self.dream_now = dream_now_tool(ws, env=os.environ, clock=now)
        tools = [memory_search_tool(ws, clock=now), record_gap_tool(ws, clock=now), prior_insights_tool(ws),
                 self.dream_now]  # fmt: skip
        bound = model.bind_tools(tools)

        def agent(state: MessagesState) -> dict[str, Any]:
            return {"messages": [bound.invoke([SystemMessage(system_prompt(ws)), *state["messages"]])]}

        graph = StateGraph(MessagesState)
        graph.add_node("agent", agent)
        graph.add_node("tools", ToolNode(tools))
        graph.add_edge(START, "agent")
        graph.add_conditional_edges("agent", tools_condition)
        graph.add_edge("tools", "agent")
        self.graph = graph.compile()

    def chat(self, text: str) -> str:
        """Answer one message; ``/dream`` runs a night now and answers with its diary entry."""
        if text.strip() == "/dream":
            return str(self.dream_now.invoke({}))
        result = self.graph.invoke({"messages": [HumanMessage(text)]})
        return str(result["messages"][-1].content)


def scripted_answer(messages: list[BaseMessage]) -> AIMessage:
    """An offline model: answer from the prompt's verified insights when they name the question's subject, else search
    the memory and answer from the best hit, or say the question is noted for tonight."""
    question = next(str(m.content) for m in reversed(messages) if isinstance(m, HumanMessage))
    prompt, last = str(messages[0].content), messages[-1]
    learned = prompt.split("learned and verified:", 1)[1] if "learned and verified:" in prompt else ""
    subject = question.split()[-1]
    if learned and subject in learned:
        lines = [line for line in learned.splitlines() if subject in line and not line.startswith("#")]
        return AIMessage(content="From what my memory verified overnight: " + " ".join(lines).strip())
    if not isinstance(last, ToolMessage):
        call = {"name": "memory_search", "args": {"query": question}, "id": "call_1", "type": "tool_call"}
        return AIMessage(content="", tool_calls=[call])
    hits = json.loads(str(last.content))
    if hits:
        return AIMessage(content=f"From my notes: {hits[0]['snippet']}")
    return AIMessage(content="I do not know yet; I noted the question, and tonight's dreaming will research it.")


def offline_model() -> BaseChatModel:
    """Return the scripted model (a chat model that reports token usage, like a real one)."""
    return FakeChatModel(respond=scripted_answer, usage=(200, 30))


def real_model() -> BaseChatModel:
    """Return ``ChatOpenAI`` (only when ``OPENAI_API_KEY`` is set)."""
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(model=os.environ.get("DREAMING_CHAT_MODEL", "gpt-4.1-mini"))


def main() -> None:
    """Chat on the command line; an empty line or Ctrl-D ends."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workspace", type=Path, default=Path("."))
    ws = Workspace.at(parser.parse_args().workspace)
    agent = ChatAgent(ws, real_model() if os.environ.get("OPENAI_API_KEY") else offline_model())
    print("Ask anything; /dream consolidates memory now; an empty line ends.")
    while True:
        try:
            text = input("> ").strip()
        except EOFError:
            break
        if not text:
            break
        print(agent.chat(text))


if __name__ == "__main__":
    main()
