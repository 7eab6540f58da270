"""``dreaming.toml`` parsed into frozen, typed configuration.

Every key is optional. Unknown keys and invalid values are reported as warnings; an invalid threshold falls back to
its default (OpenClaw's behaviour). Numbers given as strings are parsed; blank strings mean "use the default".
Secrets are never read from this file: API keys come only from the environment. A table is read field by field from
its dataclass (:func:`~dreaming._config_reader.read_fields`): each key by its field's type, with its default, and a
number must be ``>= 0`` unless its field is declared with other bounds (:func:`~dreaming._config_reader.ranged`).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dreaming._config_reader import TableReader, ranged, read_fields, table
from dreaming.errors import ConfigError

__all__ = [
    "AutoresearchConfig",
    "BudgetConfig",
    "DeepConfig",
    "DiaryConfig",
    "DreamingConfig",
    "LLMConfig",
    "ModelPrice",
    "RecallConfig",
    "ScheduleConfig",
    "SearchConfig",
    "VerdictsConfig",
    "load_config",
]

DEFAULT_TIMEZONE = "UTC"
DEFAULT_LOCK_TIMEOUT_SECONDS = 10.0
DEFAULT_CRON = "0 3 * * *"
SOURCES = ("codebase", "memory", "web")


@dataclass(frozen=True, kw_only=True, slots=True)
class ScheduleConfig:
    """When the nightly job runs."""

    cron: str = DEFAULT_CRON
    """Five-field cron expression, in the workspace timezone."""


@dataclass(frozen=True, kw_only=True, slots=True)
class DeepConfig:
    """Recall-promotion gates (OpenClaw's deep phase defaults)."""

    enabled: bool = True
    """Whether the recall path promotes at all."""
    limit: int = 10
    """At most this many promotions per run; 0 is an explicit no-op."""
    min_score: float = 0.75
    """Score gate."""
    min_recall_count: int = 3
    """Minimum signals (recalls + daily + grounded)."""
    min_unique_queries: int = 3
    """Minimum distinct user queries (``userQueryHashes``: searches, never ingestion or grounded signals)."""
    recency_half_life_days: float = ranged(14.0, minimum=1e-9)
    """Half-life of the recency component."""
    max_age_days: float = 30.0
    """Entries last recalled longer ago than this are not promoted."""
    memory_file_max_chars: int = 10_000
    """MEMORY.md size budget; only generated sections are compacted to respect it."""
    max_promoted_snippet_tokens: int = ranged(160, minimum=1)
    """A promoted bullet's text is cut near this many tokens (4 characters each), as OpenClaw cuts it."""
    max_prior_entry_loss_fraction: float = ranged(0.25, maximum=1.0)
    """To fit the budget, at most this fraction of MEMORY.md's earlier promoted entries may be dropped."""


@dataclass(frozen=True, kw_only=True, slots=True)
class RecallConfig:
    """How the recall path meets OpenClaw: which store it uses, and whether it behaves exactly as OpenClaw does."""

    openclaw_compat: bool = True
    """Rank, repair and promote exactly as OpenClaw 2026.9 does; false turns on this project's fixes (README)."""
    openclaw_state_dir: str = ""
    """OpenClaw's state directory (its SQLite store); blank means found as OpenClaw finds it."""


@dataclass(frozen=True, kw_only=True, slots=True)
class VerdictsConfig:
    """The verdict path's gate (spec/verdicts.md). The scoring constants are fixed in code, not here."""

    gate_min_score: float = ranged(0.8, maximum=1.0)
    """A bucket is promoted when its score is at least this..."""
    gate_min_count: int = ranged(3, minimum=1)
    """...and it has at least this many classified samples."""
    insight_max_age_days: int = ranged(90, minimum=1)
    """A bucket not seen for longer than this is stale: not promoted, and its insight retired."""
    llm_verify: bool = False
    """Let a model veto a passing insight (it can never promote one or change a number)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class DiaryConfig:
    """The DREAMS.md entry."""

    narrative: bool = False
    """Add a short model-written paragraph; a factual entry is always written."""


@dataclass(frozen=True, kw_only=True, slots=True)
class SearchConfig:
    """The memory search (``dreaming search``, the agents' and research's ``memory_search``)."""

    semantic: bool = False
    """Add the hybrid semantic pass (the ``semantic`` extra's static embeddings); without the extra, keywords only."""


@dataclass(frozen=True, kw_only=True, slots=True)
class AutoresearchConfig:
    """Gap-driven research (seed 002), opt-in."""

    enabled: bool = False
    """Research knowledge gaps at night."""
    max_gaps_per_night: int = 5
    """At most this many gaps per run."""
    confidence_threshold: float = ranged(0.7, maximum=1.0)
    """A finding is kept when its confidence is at least this."""
    sources: tuple[str, ...] = SOURCES
    """Which tools research may use."""
    codebase_roots: tuple[str, ...] = (".",)
    """Folders searched by the codebase tool, relative to the workspace."""
    max_research_time_minutes: float = 10.0
    """Wall-clock ceiling for the whole research phase."""
    concurrency: int = ranged(4, minimum=1)
    """Gaps researched at once."""
    max_tool_calls_per_gap: int = 8
    """Tool-call ceiling per gap."""
    max_llm_calls_per_gap: int = 6
    """Model-call ceiling per gap."""

    @classmethod
    def from_reader(cls, r: TableReader) -> AutoresearchConfig:
        """Read the ``[autoresearch]`` table (its lists first)."""
        d = cls()
        return read_fields(
            cls,
            r,
            sources=r.strings("sources", d.sources, allowed=SOURCES),
            codebase_roots=r.strings("codebase_roots", d.codebase_roots, allowed=None),
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class BudgetConfig:
    """The token-cost budget (seed 003, spec/budget.md)."""

    max_cost_usd: float = 1.0
    """The breaker trips when the window's spend reaches this."""
    window_minutes: float = ranged(60.0, minimum=1e-9)
    """Length of the sliding window."""
    min_confidence: float = 0.05
    """Candidates below this confidence are low quality."""
    min_recalls: float = 1.0
    """Candidates below this recall count are low quality."""
    max_llm_calls_per_run: int = 200
    """Hard ceiling on model calls in one run, whatever they cost."""
    recursion_limit: int = ranged(200, minimum=10)
    """Explicit LangGraph recursion limit for every invocation."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelPrice:
    """USD per million tokens."""

    input: float
    """Price of a million input tokens."""
    output: float
    """Price of a million output tokens."""
    cached_input: float | None = None
    """Price of a million cached input tokens, when the provider discounts them."""


@dataclass(frozen=True, kw_only=True, slots=True)
class LLMConfig:
    """Which OpenAI-compatible model to use. The API key comes only from ``OPENAI_API_KEY``."""

    model: str = "gpt-4.1-mini"
    """Model name; ``DREAMING_MODEL`` overrides it."""
    base_url: str = ""
    """Server address; ``OPENAI_BASE_URL`` is used when this is blank."""
    max_output_tokens: int = ranged(600, minimum=1)
    """Maximum output tokens per call (part of every pre-call estimate)."""
    timeout_seconds: float = ranged(60.0, minimum=0.1)
    """Per-request timeout."""
    prices: Mapping[str, ModelPrice] = field(default_factory=dict)
    """Prices added to or overriding the shipped table."""

    @classmethod
    def from_reader(cls, r: TableReader) -> LLMConfig:
        """Read the ``[llm]`` table and its ``[llm.prices]`` subtable (the secrets and prices first)."""
        warnings = r.warnings
        for secret in ("api_key", "openai_api_key", "key"):
            if secret in r.table:
                r.seen.add(secret)
                warnings.append(f"[llm] {secret} ignored: secrets are read only from the environment")
        prices: dict[str, ModelPrice] = {}
        raw_prices = r.table.get("prices", {})
        if not isinstance(raw_prices, Mapping):
            warnings.append("[llm.prices] must be a table; ignored")
            raw_prices = {}
        for model, entry in raw_prices.items():
            if not isinstance(entry, Mapping):
                warnings.append(f"[llm.prices] {model!r} must be a table with input and output; ignored")
                continue
            pr = TableReader(entry, f"llm.prices.{model}", warnings)
            inp = pr.number("input", -1.0)
            out = pr.number("output", -1.0)
            cached = pr.number("cached_input", -1.0)
            pr.finish()
            if inp < 0 or out < 0:
                warnings.append(f"[llm.prices] {model!r} needs non-negative input and output prices; ignored")
                continue
            prices[str(model)] = ModelPrice(input=inp, output=out, cached_input=None if cached < 0 else cached)
        return read_fields(cls, r, prices=prices)


@dataclass(frozen=True, kw_only=True, slots=True)
class DreamingConfig:
    """The whole configuration of one workspace."""

    timezone: str = DEFAULT_TIMEZONE
    """IANA timezone for day bucketing and the schedule."""
    lock_timeout_seconds: float = DEFAULT_LOCK_TIMEOUT_SECONDS
    """How long a second run waits for the consolidation lock before exiting with code 3."""
    schedule: ScheduleConfig = field(default_factory=ScheduleConfig)
    """``[schedule]``."""
    deep: DeepConfig = field(default_factory=DeepConfig)
    """``[deep]``."""
    recall: RecallConfig = field(default_factory=RecallConfig)
    """``[recall]``."""
    verdicts: VerdictsConfig = field(default_factory=VerdictsConfig)
    """``[verdicts]``."""
    diary: DiaryConfig = field(default_factory=DiaryConfig)
    """``[diary]``."""
    search: SearchConfig = field(default_factory=SearchConfig)
    """``[search]``."""
    autoresearch: AutoresearchConfig = field(default_factory=AutoresearchConfig)
    """``[autoresearch]``."""
    budget: BudgetConfig = field(default_factory=BudgetConfig)
    """``[budget]``."""
    llm: LLMConfig = field(default_factory=LLMConfig)
    """``[llm]``."""
    warnings: tuple[str, ...] = ()
    """What was wrong with the file (unknown keys, invalid values replaced by defaults)."""

    @property
    def tz(self) -> ZoneInfo:
        """The configured timezone."""
        return ZoneInfo(self.timezone)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> DreamingConfig:
        """Parse a decoded ``dreaming.toml``; never raises for bad values, only collects warnings."""
        warnings: list[str] = []
        top = TableReader(data, "dreaming.toml", warnings)
        tz = top.text("timezone", DEFAULT_TIMEZONE) or DEFAULT_TIMEZONE
        try:
            ZoneInfo(tz)
        except (ZoneInfoNotFoundError, ValueError):
            warnings.append(f"[dreaming.toml] timezone = {tz!r} is not a known IANA timezone; using 'UTC'")
            tz = DEFAULT_TIMEZONE
        lock_timeout = top.number("lock_timeout_seconds", DEFAULT_LOCK_TIMEOUT_SECONDS)
        sections = ("schedule", "deep", "recall", "verdicts", "diary", "search", "autoresearch", "budget", "llm")

        def section(key: str) -> TableReader:
            return TableReader(table(data, key, warnings), key, warnings)

        sched = section("schedule")
        cron = sched.text("cron", DEFAULT_CRON) or DEFAULT_CRON
        if len(cron.split()) != 5:
            warnings.append(f"[schedule] cron = {cron!r} is not a five-field cron expression; using {DEFAULT_CRON!r}")
            cron = DEFAULT_CRON
        sched.finish()
        config = cls(
            timezone=tz,
            lock_timeout_seconds=lock_timeout,
            schedule=ScheduleConfig(cron=cron),
            deep=read_fields(DeepConfig, section("deep")),
            recall=read_fields(RecallConfig, section("recall")),
            verdicts=read_fields(VerdictsConfig, section("verdicts")),
            diary=read_fields(DiaryConfig, section("diary")),
            search=read_fields(SearchConfig, section("search")),
            autoresearch=AutoresearchConfig.from_reader(section("autoresearch")),
            budget=read_fields(BudgetConfig, section("budget")),
            llm=LLMConfig.from_reader(section("llm")),
        )
        top.finish(nested=sections)
        return replace(config, warnings=tuple(warnings))


def load_config(path: Path) -> DreamingConfig:
    """Read ``dreaming.toml`` at ``path``; a missing file gives the defaults.

    Raises:
        ConfigError: the file exists but is not UTF-8 (the message names the line) or not valid TOML. A run refuses
            such a file rather than guess: falling back to the defaults could lift a budget cap the user set.
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return DreamingConfig()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(f"{path}:{line}: not UTF-8 (byte 0x{raw[exc.start]:02x})") from exc
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
    except RecursionError as exc:
        raise ConfigError(f"{path}: not valid TOML: nested too deeply") from exc
    return DreamingConfig.from_mapping(data)


# Cron (the schedule's, the fleet's and the scheduler's). croniter (with dateutil) is imported by the two functions
# that read an expression: reading the configuration, and every command but status and the schedulers, never needs it.


def validate_cron(expression: str) -> str:
    """Return ``expression`` normalized (single spaces) when it is a valid five-field cron expression.

    Raises:
        ConfigError: not five fields, or a field out of range (``0 25 * * *``) or unreadable.
    """
    fields = expression.split()
    if len(fields) != 5:
        raise ConfigError(f"cron {expression!r} is not a five-field expression (minute hour day month weekday)")
    normalized = " ".join(fields)
    from croniter import croniter

    if not croniter.is_valid(normalized):
        raise ConfigError(f"cron {expression!r} is not a valid cron expression (a field is out of range?)")
    return normalized


def zone_info(name: str) -> ZoneInfo:
    """Return the IANA timezone ``name``.

    Raises:
        ConfigError: ``name`` is not a known IANA timezone.
    """
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ConfigError(f"timezone {name!r} is not a known IANA timezone") from exc


def next_run(expression: str, timezone: str, after: datetime) -> datetime:
    """Return the first instant after ``after`` at which ``expression``, read in ``timezone``, fires (in UTC).

    Raises:
        ConfigError: ``expression`` is not a valid cron expression or ``timezone`` is unknown.
    """
    from croniter import croniter

    local = after.astimezone(zone_info(timezone))
    fire: datetime = croniter(validate_cron(expression), local).get_next(datetime)
    return fire.astimezone(UTC)
