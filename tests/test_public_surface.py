"""Each package's public surface is curated and pinned: a change to it is a decision, not an accident."""

from __future__ import annotations

import importlib

import pytest

SURFACES = {
    "dreaming": [
        "DreamingConfig", "DreamingError", "FakeChatModel", "LLMGateway", "PriorInsights", "RunOutcome", "Workspace",
        "__version__", "build_gateway", "dream", "dream_now_tool", "init_workspace", "load_config",
        "load_prior_insights", "night_context", "prior_insights_tool", "record_gap", "search_and_record",
    ],
    "dreaming.llm": [
        "Allowed", "BudgetLedger", "BudgetReport", "BudgetStatus", "CandidateGuard", "Decision", "FakeChatModel",
        "LLMGateway", "LLMReply", "LedgerEntry", "PriceTable", "SkipReason", "Skipped", "build_gateway", "cost_usd",
        "count_message_tokens", "filter_candidates", "load_price_table", "read_budget_status", "tool_call_answer",
    ],
    "dreaming.graph": [
        "DreamContext", "DreamState", "ProgressFn", "VerifyResult", "build_dream_graph", "build_research_graph",
        "jsonable", "verify_insights", "verify_insights_detailed",
    ],
    "dreaming.cli": ["app", "main"],
    "dreaming.night": ["RunOutcome", "codebase_roots", "dream", "night_context", "research_tools", "utc_now"],
    "dreaming.chat": ["dream_now_tool", "prior_insights_tool"],
    "dreaming.errors": [
        "BudgetError", "ConfigError", "DreamingError", "LockBusyError",
        "ModelCallError", "NotAWorkspaceError", "OutsideWorkspaceError", "RetryableToolError", "ToolError",
        "WorkspaceError",
    ],
    "dreaming.config": [
        "AutoresearchConfig", "BudgetConfig", "DeepConfig", "DiaryConfig", "DreamingConfig", "LLMConfig", "ModelPrice",
        "ScheduleConfig", "VerdictsConfig", "load_config",
    ],
    "dreaming.memory": [
        "REDACTED", "SECRET_GLOBS", "BadLine", "ConsolidationLock", "DiaryEntry", "DiarySection", "InputReport",
        "LoadedState", "Workspace", "append_diary_entry", "append_jsonl", "atomic_write_bytes", "atomic_write_json",
        "atomic_write_text", "check_confined", "check_write_path", "diary_sections", "dump_json", "fingerprint",
        "init_workspace", "is_secret_name", "is_secret_path", "iter_jsonl", "move_aside", "pid_alive", "read_state",
        "record_event", "redact_secrets", "night_entry", "render_diary_entry", "set_aside_unreadable", "sweep_orphan_temps",
        "WriteFaults", "before_write", "settled_decision",
        "INDEX_END", "INDEX_START", "InsightFile", "PriorInsights", "Scalar", "active_insights", "load_prior_insights",
        "parse_scalar", "read_insight", "render_insight", "write_insight", "write_memory_index",
    ],
    "dreaming.memory.insights": [
        "INDEX_END", "INDEX_START", "FrontValue", "InsightFile", "PriorInsights", "Scalar", "active_insights",
        "load_prior_insights", "parse_front_matter", "parse_scalar", "read_front_matter", "read_insight", "render_front_matter",
        "render_insight", "render_scalar", "unquote", "write_insight", "write_memory_index",
    ],
    "dreaming.tools": [
        "SECRET_GLOBS", "CodebaseSearch", "FakeCodebaseSearch", "FakeMemorySearch", "FakeWebSearch", "MemorySearch",
        "RipgrepSearch", "TavilyWebSearch", "WebSearch", "WorkspaceMemorySearch", "codebase_search_tool", "find_rg",
        "hits_to_json", "is_secret_path", "memory_search_tool", "web_search_from_env", "web_search_tool",
        "SearchOutcome", "search_and_record",
    ],
    "dreaming.prompts": ["load_prompt"],
}  # fmt: skip


@pytest.mark.parametrize("module", sorted(SURFACES))
def test_public_surface_is_pinned(module: str) -> None:
    imported = importlib.import_module(module)
    assert sorted(imported.__all__) == sorted(SURFACES[module])
    for name in imported.__all__:
        assert hasattr(imported, name), name


def test_the_deterministic_core_imports_no_langgraph_and_no_llm_code() -> None:
    import subprocess
    import sys

    code = (
        "import sys, dreaming.memory, dreaming.memory.verdicts, dreaming.memory.recall, dreaming.memory.search, "
        "dreaming.memory.gaps, dreaming.memory.research\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('langgraph', 'langchain_core', 'langchain_openai', "
        "'openai', 'tavily', 'httpx')]\n"
        "print(','.join(sorted(bad)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""
