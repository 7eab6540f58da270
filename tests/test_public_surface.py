"""Each package's public surface is curated and pinned: a change to it is a decision, not an accident."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

import dreaming

SURFACES = {
    "dreaming": [
        "DreamingConfig", "DreamingError", "FakeChatModel", "LLMGateway", "NightReport", "PriorInsights", "Workspace",
        "__version__", "adream", "build_gateway", "dream", "dream_now_tool", "init_workspace", "load_config",
        "load_prior_insights", "memory_search_tool", "prior_insights_tool", "record_gap", "record_gap_tool",
        "search_and_record",
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
    "dreaming.night": [
        "NightLock", "NightReport", "RunOutcome", "SaverFactory", "adream", "budget_exhausted_before_any_work",
        "busy_answer", "codebase_roots", "dream", "night_context", "research_tools", "run_night", "utc_now",
        "workspace_status",
    ],
    "dreaming.fleet": [
        "EXIT_SEVERITY", "FleetBudget", "FleetConfig", "FleetMember", "NightResult", "cron_matches", "crontab_line",
        "expand_workspaces", "fleet_exit_code", "ledger_spend", "load_fleet", "render_results", "run_fleet",
        "systemd_units",
    ],
    "dreaming.fleet.postgres": [
        "DATABASE_URL_ENV", "DEFAULT_HEARTBEAT_SECONDS", "DEFAULT_STALLED_AFTER_SECONDS", "NIGHT_RETRY", "NIGHT_TASK",
        "PRUNE_BATCH", "TICK_TASK", "AdvisoryLock", "EnqueueReport", "FleetInit", "FleetQueue", "NightAttempt",
        "NightDone", "PruneReport", "TickReport", "WorkerSettings", "advisory_key", "database_url", "enqueue_due",
        "enqueue_now", "fleet_queue", "fleet_status", "init_fleet", "latest_slot", "night_run_id",
        "postgres_checkpointer", "prune_old_rows", "require_schema", "retry_stalled", "run_fleet_night", "run_worker",
        "tick",
    ],
    "dreaming.chat": ["dream_now_tool", "memory_search_tool", "prior_insights_tool", "record_gap_tool"],
    "dreaming.mcp_server": ["BearerTokenGuard", "build_server", "http_app"],
    "dreaming.backtest": [
        "BLOCK_DAYS", "BOOTSTRAP_RESAMPLES", "BOOTSTRAP_SEED", "DEFAULT_STEP_DAYS", "EXPOSURE", "METRICS", "POLICIES",
        "POLICY_OFFLINE", "REPORT_FILE", "REPORT_VERSION", "ActiveInsight", "Backtest", "Committee", "Decision", "History",
        "Night", "Scored", "VerdictRecord", "blocks_of", "decide", "load_history", "night_dates", "night_time",
        "paired_bootstrap", "render_table", "replay_nights", "run_backtest", "score_decisions", "write_report",
    ],
    "dreaming.view": ["COOKIE", "CONTENT_SECURITY_POLICY", "PAGES", "Site", "create_app", "export_site"],
    "dreaming.errors": [
        "BudgetError", "ConfigError", "DreamingError", "LockBusyError",
        "ModelCallError", "NotAWorkspaceError", "OutsideWorkspaceError", "RecallStoreError", "RetryableToolError",
        "ToolError",
        "WorkspaceError",
    ],
    "dreaming.config": [
        "AutoresearchConfig", "BudgetConfig", "DeepConfig", "DiaryConfig", "DreamingConfig", "LLMConfig", "ModelPrice",
        "RecallConfig", "ScheduleConfig", "SearchConfig", "VerdictsConfig", "load_config",
    ],
    "dreaming.memory": [
        "REDACTED", "SECRET_GLOBS", "BadLine", "ConsolidationLock", "DiaryEntry", "DiarySection", "InputReport",
        "LoadedState", "Workspace", "append_diary_entry", "append_jsonl", "atomic_write_bytes", "atomic_write_json",
        "atomic_write_text", "check_confined", "check_write_path", "diary_sections", "dump_json", "fingerprint",
        "init_workspace", "is_secret_name", "is_secret_path", "iter_jsonl", "move_aside", "pid_alive", "read_state",
        "record_event", "redact_secrets", "night_digest", "night_entry", "render_diary_entry", "set_aside_unreadable", "sweep_orphan_temps",
        "WriteFaults", "before_write", "settled_decision", "readable_markdown",
        "INDEX_END", "INDEX_START", "InsightFile", "PriorInsights", "Scalar", "active_insights", "load_prior_insights",
        "parse_scalar", "read_insight", "render_insight", "write_insight", "write_memory_index",
    ],
    "dreaming.memory.insights": [
        "INDEX_END", "INDEX_START", "FrontValue", "InsightFile", "PriorInsights", "Scalar", "active_insights",
        "insight_paths", "load_prior_insights", "parse_front_matter", "parse_scalar", "read_front_matter", "read_insight", "render_front_matter",
        "render_insight", "render_scalar", "unquote", "write_insight", "write_memory_index",
    ],
    "dreaming.tools": [
        "SECRET_GLOBS", "CodebaseSearch", "FakeCodebaseSearch", "FakeMemorySearch", "FakeWebSearch", "MemorySearch",
        "RipgrepSearch", "TavilyWebSearch", "WebSearch", "WorkspaceMemorySearch", "codebase_search_tool", "find_rg",
        "hits_to_json", "is_secret_path", "memory_search_tool", "web_search_from_env", "web_search_tool",
        "SearchOutcome", "search_and_record",
    ],
    "dreaming.prompts": ["load_prompt"],
    "dreaming.evals": [
        "CATEGORIES", "CaseResult", "EvalCase", "LEDGER_COLUMNS", "Scores", "append_ledger", "bundled_cases",
        "data_dir", "load_cases", "render_table", "run_research_eval", "score_case",
    ],
    "dreaming.memory.gaps": [
        "AttemptOutcome", "BACKOFF_SLACK", "GAP_STATUSES", "GAP_TYPES", "GapStatus", "GapType", "KnowledgeGap",
        "LOW_CONFIDENCE", "MAX_FRUITLESS_ATTEMPTS", "MAX_GAPS", "PARTIAL_COVERAGE", "classify_gap", "list_gaps",
        "normalize_query", "record_attempt", "record_gap", "select_gaps_for_night",
    ],
    "dreaming.memory.recall": [
        "AppliedPromotion", "AuditIssue", "AuditReport", "Candidate", "Components", "GroundedItem",
        "PromotionSummary", "RankingResult", "RecallPhaseSummary", "RecallQuery", "RecallResult", "RecallStoreInfo",
        "RecordRules", "RepairReport", "audit_recall_artifacts", "check_recall_store_confined", "chunk_daily_note",
        "compact_memory_for_budget", "deep_sleep_recall", "derive_concept_tags", "describe_recall_store", "gate_reason",
        "ingest_daily_notes", "is_contaminated_snippet", "is_short_term_path", "light_sleep_recall",
        "line_range_overlaps_dreaming_fence", "note_snippet", "promote_short_term_recalls", "promotion_marker",
        "rank_short_term_candidates", "read_light_staged_keys", "read_store",
        "record_grounded_short_term_candidates", "record_phase_signals", "record_recall_batch",
        "record_rem_considered", "record_short_term_recalls", "rehydrate", "rem_sleep_recall",
        "remove_grounded_short_term_candidates", "repair_recall_artifacts", "write_store",
    ],
    "dreaming.memory.research": [
        "ABBREVIATIONS", "CODE_ROLES", "Claim", "ClaimValidation", "Conflict", "Evidence", "EvidenceCheck",
        "EvidencePool", "FindingDecision", "FindingOutcome", "GENERIC_STEMS", "InsightWrite", "LineReader",
        "LineRole", "Outcome", "PROSE_SUFFIXES", "REDACTED", "ResearchFinding", "ResearchInsight", "SourceHit",
        "SourceType", "Validation", "ValidationMethod", "append_research_log", "asked_names", "bindings",
        "clean_claims", "content_hash", "decide", "definition_name", "fence_evidence", "fence_hits",
        "finding_from_validation", "identifiers", "is_statement", "names_in", "numbers", "open_brackets",
        "question_kind", "read_research_insights", "reads_as_instruction", "redact_secrets",
        "render_rem_research_section", "research_log_row", "research_slug", "search_words", "short_form",
        "stemmed_salient_terms", "stemmed_term_coverage", "supports_text", "synthesize_extractive",
        "validate_claims", "validation_summary", "write_research_insight",
    ],
    "dreaming.memory.search": [
        "Chunk", "IndexRefresh", "MemoryIndex", "SearchHit", "chunk_markdown", "index_salient_terms",
        "index_term_coverage", "is_dreaming_output", "iter_memory_files", "open_index", "query_coverage", "query_terms",
        "refresh_index", "search_index", "search_memory", "semantic_installed",
    ],
    "dreaming.memory.verdicts": [
        "ATR_DAYS", "DeepSummary", "FLAT_CAP_PCT", "K_FLAT", "LightSummary", "MIN_REGIME_ROWS", "PriceBook",
        "PriceSeries", "REGIMES", "RemSummary", "ReviewSummary", "SIZE_SATURATION", "SLOPE_LOOKBACK", "SMA_DAYS",
        "VERDICTS", "VERDICT_KINDS", "VerdictCandidate", "WINDOWS", "candidate_slug", "classify",
        "deep_sleep_verdicts", "flat_threshold", "gate_passing", "light_sleep_verdicts", "load_candidates",
        "load_prices", "parse_date", "passes_gate", "rem_sleep_verdicts", "review_verdicts", "score_bucket",
    ],
}  # fmt: skip


@pytest.mark.parametrize("module", sorted(SURFACES))
def test_public_surface_is_pinned(module: str) -> None:
    imported = importlib.import_module(module)
    assert sorted(imported.__all__) == sorted(SURFACES[module])
    for name in imported.__all__:
        assert hasattr(imported, name), name


def test_every_package_is_pinned() -> None:
    root = Path(dreaming.__file__).parent
    packages = {
        ".".join(("dreaming", *init.parent.relative_to(root).parts))
        for init in root.rglob("__init__.py")
        if "data" not in init.relative_to(root).parts  # the eval corpus: third-party code kept as data
    }
    assert packages <= SURFACES.keys(), sorted(packages - SURFACES.keys())


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
