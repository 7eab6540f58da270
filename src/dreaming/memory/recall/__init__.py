"""The OpenClaw-compatible recall path: recording recalls, ranking, light/REM/deep, promotion and the doctor.

Reads and writes OpenClaw's state as it is (OpenClaw 2026.9's SQLite rows and lock row, or for older OpenClaw
``memory/.dreams/short-term-recall.json`` version 1, ``phase-signals.json`` and the promotion lock; MEMORY.md
promotion sections). Every read is normalized, ranked and applied exactly as OpenClaw 2026.9.6 does, and it does
better where its users hurt: no read size cap (#92050), dreaming output never recorded or promoted (#67580),
ingestion signals never reported as recalls (#72021); with ``[recall] openclaw_compat = false``, retention evicts
entries without real recalls first (#150635) and a duplicate recall day counts once.
"""

from __future__ import annotations

from dreaming.memory.recall._apply import compact_memory_for_budget, promotion_marker, rehydrate
from dreaming.memory.recall._audit import (
    AuditIssue,
    AuditReport,
    RepairReport,
    audit_recall_artifacts,
    repair_recall_artifacts,
)
from dreaming.memory.recall._concepts import derive_concept_tags
from dreaming.memory.recall._contamination import is_contaminated_snippet, line_range_overlaps_dreaming_fence
from dreaming.memory.recall._deep import (
    AppliedPromotion,
    PromotionSummary,
    deep_sleep_recall,
    promote_short_term_recalls,
)
from dreaming.memory.recall._ingest import chunk_daily_note, ingest_daily_notes, note_snippet
from dreaming.memory.recall._paths import is_short_term_path
from dreaming.memory.recall._phase_signals import read_light_staged_keys, record_phase_signals, record_rem_considered
from dreaming.memory.recall._phases import RecallPhaseSummary, light_sleep_recall, rem_sleep_recall
from dreaming.memory.recall._ranking import (
    Candidate,
    Components,
    RankingResult,
    gate_reason,
    rank_short_term_candidates,
)
from dreaming.memory.recall._record import (
    GroundedItem,
    RecallQuery,
    RecallResult,
    RecordRules,
    record_grounded_short_term_candidates,
    record_recall_batch,
    record_short_term_recalls,
    remove_grounded_short_term_candidates,
)
from dreaming.memory.recall._store import check_recall_store_confined, read_store, write_store
from dreaming.memory.recall._store_location import RecallStoreInfo, describe_recall_store

__all__ = [
    "AppliedPromotion",
    "AuditIssue",
    "AuditReport",
    "Candidate",
    "Components",
    "GroundedItem",
    "PromotionSummary",
    "RankingResult",
    "RecallPhaseSummary",
    "RecallQuery",
    "RecallResult",
    "RecallStoreInfo",
    "RecordRules",
    "RepairReport",
    "audit_recall_artifacts",
    "check_recall_store_confined",
    "chunk_daily_note",
    "compact_memory_for_budget",
    "deep_sleep_recall",
    "derive_concept_tags",
    "describe_recall_store",
    "gate_reason",
    "ingest_daily_notes",
    "is_contaminated_snippet",
    "is_short_term_path",
    "light_sleep_recall",
    "line_range_overlaps_dreaming_fence",
    "note_snippet",
    "promote_short_term_recalls",
    "promotion_marker",
    "rank_short_term_candidates",
    "read_light_staged_keys",
    "read_store",
    "record_grounded_short_term_candidates",
    "record_phase_signals",
    "record_recall_batch",
    "record_rem_considered",
    "record_short_term_recalls",
    "rehydrate",
    "rem_sleep_recall",
    "remove_grounded_short_term_candidates",
    "repair_recall_artifacts",
    "write_store",
]
