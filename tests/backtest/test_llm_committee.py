"""The LLM committee (``--policy llm``) over the shipped fake chat model: prompts, pairing, the budget, no look-ahead."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, get_args

from langchain_core.messages import AIMessage, BaseMessage

from dreaming.backtest import Backtest, run_backtest
from dreaming.config import BudgetConfig, DreamingConfig
from dreaming.graph.backtest_committee import CommitteeAnswer, LLMCommittee
from dreaming.llm import FakeChatModel, build_gateway, tool_call_answer
from dreaming.memory.verdicts import VERDICTS

from ._markets import trending_market

MARKET = trending_market(5, phases=2)
FROM, TO = date(2010, 7, 1), date(2010, 12, 31)
NOW = datetime(2026, 1, 1, 3, 0, tzinfo=UTC)


def _inputs(messages: list[BaseMessage]) -> dict[str, Any]:
    text = str(messages[-1].content)
    return dict(json.loads(text.split("\n", 2)[1]))


def _answer(messages: list[BaseMessage]) -> AIMessage:
    """Keep the proposal, except that a committee warned by a caution insight buys."""
    text = str(messages[-1].content)
    verdict = "BUY" if "- caution:" in text else _inputs(messages)["proposal"]
    return tool_call_answer("CommitteeAnswer", {"verdict": verdict, "reason": "scripted"})


def _run(tmp_path: Path, fake: FakeChatModel, **budget: Any) -> Backtest:
    ws = MARKET.write(tmp_path / "ws")
    config = DreamingConfig(budget=BudgetConfig(**{"max_llm_calls_per_run": 1000, **budget}))
    gateway = build_gateway(config, ws, env={"OPENAI_API_KEY": "k"}, now=lambda: NOW, model_factory=fake.factory)
    return run_backtest(ws, config, start=FROM, end=TO, policy="llm", committee=LLMCommittee(gateway))


def _offline(tmp_path: Path) -> Backtest:
    return run_backtest(MARKET.write(tmp_path / "offline"), DreamingConfig(), start=FROM, end=TO)


def test_the_dreaming_prompt_holds_the_insights_of_its_night_and_the_baseline_none(tmp_path: Path) -> None:
    fake = FakeChatModel(respond=_answer)
    result = _run(tmp_path, fake)
    offline = _offline(tmp_path)
    assert result.decisions and len(fake.calls) == 2 * len(result.decisions)
    nights = {n.date: n for n in result.nights}
    warned = 0
    for k, decision in enumerate(result.decisions):
        base, dream = (str(fake.calls[2 * k + i][0][-1].content) for i in (0, 1))
        assert "Prior insights" not in base and "caution" not in base and "reliable" not in base
        assert dream.startswith(base + "\n\nPrior insights:\n")
        expected = [f"- {i.kind}: {i.verdict} on {i.asset} in a {i.regime} regime ({i.window} window)"
                    for i in nights[decision.night].insights]  # fmt: skip
        listed = dream.split("Prior insights:\n", 1)[1]
        assert [line.split(": score")[0] for line in listed.splitlines() if line.startswith("- ")] == expected
        assert _inputs(fake.calls[2 * k][0])["proposal"] == offline.decisions[k].baseline
        warned += "- caution:" in dream
        assert decision.dreaming == ("BUY" if "- caution:" in dream else offline.decisions[k].baseline)
        assert decision.baseline == offline.decisions[k].baseline
    assert warned, "no decision read a caution insight: the test would prove nothing"
    report = result.report
    assert report["policy"] == "llm"
    assert report["changed"] == sum(d.changed for d in result.decisions) > 0
    assert report["llm"] == {"model": "gpt-4.1-mini", "calls": 2 * len(result.decisions), "decided":
                             len(result.decisions), "fallbacks": 0, "fallbacks_by_reason": {}, "refusals": 0,
                             "stopped_by": None}  # fmt: skip


def test_no_close_after_the_decision_date_is_in_any_prompt(tmp_path: Path) -> None:
    fake = FakeChatModel(respond=_answer)
    result = _run(tmp_path, fake)
    for k, decision in enumerate(result.decisions):
        for i in (0, 1):
            messages = fake.calls[2 * k + i][0]
            closes = _inputs(messages)["recent_closes"]
            seen = [c[0] for c in closes]
            known = [d.isoformat() for d, _ in MARKET.rows if d <= decision.day]
            assert seen == known[-20:]
            text = "\n".join(str(m.content) for m in messages)
            assert not [d for d, _ in MARKET.rows if d > decision.day and d.isoformat() in text]


def test_a_refused_budget_falls_back_to_the_proposal_for_both_and_is_counted(tmp_path: Path) -> None:
    fake = FakeChatModel(respond=lambda messages: tool_call_answer("CommitteeAnswer", {"verdict": "SELL"}))
    result = _run(tmp_path, fake, max_llm_calls_per_run=3)
    offline = _offline(tmp_path)
    decisions = len(result.decisions)
    assert decisions > 2 and len(fake.calls) == 3
    assert (result.decisions[0].baseline, result.decisions[0].dreaming) == ("SELL", "SELL")
    for k in range(1, decisions):
        proposal = offline.decisions[k].baseline
        assert (result.decisions[k].baseline, result.decisions[k].dreaming) == (proposal, proposal)
    summary = result.report["llm"]
    assert (summary["calls"], summary["decided"], summary["refusals"], summary["fallbacks"]) == (
        3, 1, decisions - 1, decisions - 1)  # fmt: skip
    assert summary["stopped_by"] == "call_limit"


def test_a_malformed_answer_falls_back_for_both(tmp_path: Path) -> None:
    fake = FakeChatModel(respond=lambda messages: AIMessage(content="buy, probably"))
    result = _run(tmp_path, fake)
    assert all(d.baseline == d.dreaming for d in result.decisions) and result.report["changed"] == 0
    assert result.report["llm"]["fallbacks_by_reason"] == {"malformed": len(result.decisions)}


def test_the_answer_schema_offers_exactly_the_verdicts() -> None:
    assert get_args(CommitteeAnswer.model_fields["verdict"].annotation) == VERDICTS
