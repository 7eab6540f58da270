"""The shipped fake chat model, re-exported for the tests that import it from here."""

from __future__ import annotations

from dreaming.agent.fake_chat import FakeChatModel, Respond, tool_call_answer

__all__ = ["FakeChatModel", "Respond", "tool_call_answer"]
