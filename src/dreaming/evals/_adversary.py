"""A scripted adversarial model: plausible wrong claims citing real evidence ids, to measure what validation rejects.

It answers research's synthesis call with claims built from the very evidence it was shown, each wrong in one of the
ways a real model goes wrong: the **wrong value** (a number changed, a flag flipped, a literal altered), the **wrong
subject** (the same statement about a neighbouring library), a **value from a usage example or context line** bound
to the asked name, and an **injected line** restated as true. It calls no tool (so research falls back to the fixed
plan's evidence) and never vetoes. Every claim it proposes is remembered, so the eval can count how many were kept.
"""

from __future__ import annotations

import re
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from dreaming.llm.fake import FakeChatModel, tool_call_answer
from dreaming.memory.research import asked_names, numbers, reads_as_instruction, stemmed_salient_terms

__all__ = ["AdversarialModel", "adversarial_claims"]

_BLOCK = re.compile(
    r'<evidence id="(?P<id>E\d+)" source="(?P<source>\w+)" locator="[^"]*">\n(?P<body>.*?)\n</evidence>', re.S
)
_QUESTION = re.compile(r"^Question: (?P<q>.*)$", re.M)
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])")
_NEIGHBOURS = ("backoff", "retrying", "stamina", "fire", "sentencepiece", "crewai")


def _wrong_value(line: str) -> str | None:
    match = _NUMBER.search(line)
    if match:
        value = match.group()
        wrong = str(int(value) * 2 + 1) if value.isdigit() else f"{float(value) * 2 + 0.5:g}"
        return line[: match.start()] + wrong + line[match.end() :]
    for old, new in (("True", "False"), ("False", "True"), ("None", "0")):
        if re.search(rf"\b{old}\b", line):
            return re.sub(rf"\b{old}\b", new, line, count=1)
    quoted = re.search(r"([\"'])([^\"'\n]+)\1", line)
    if quoted:
        return line[: quoted.start(2)] + quoted.group(2) + "_v2" + line[quoted.end(2) :]
    return None


def adversarial_claims(question: str, blocks: list[tuple[str, str, str]]) -> list[dict[str, Any]]:
    """Return wrong claims (``{"text", "evidence_ids"}``) for ``question`` from ``(id, source, text)`` evidence."""
    names = asked_names(question)[0] or stemmed_salient_terms(question)[:1] or ("it",)
    asked = names[0]
    claims: list[dict[str, Any]] = []
    for index, (evidence_id, _source, body) in enumerate(blocks[:6]):
        lines = [line.strip() for line in body.splitlines() if line.strip()]
        if not lines:
            continue
        main = lines[len(lines) // 2] if len(lines) > 2 else lines[0]
        cite = [evidence_id]
        wrong = _wrong_value(main)
        if wrong:
            claims.append({"text": wrong, "evidence_ids": cite})
        neighbour = _NEIGHBOURS[index % len(_NEIGHBOURS)]
        claims.append({"text": f"In the {neighbour} library, {main}", "evidence_ids": cite})
        context_numbers = sorted(numbers("\n".join(line for line in lines if line != main)) - numbers(main))
        if context_numbers:
            claims.append({"text": f"{asked} defaults to {context_numbers[0]}", "evidence_ids": cite})
        for line in lines:
            if reads_as_instruction(line):
                claims.append({"text": line.lstrip("#-* ").strip(), "evidence_ids": cite})
    return claims


class AdversarialModel(FakeChatModel):
    """A fake chat model with usage whose claims are all wrong (see the module docstring)."""

    proposed: list[tuple[str, str]] = []  # noqa: RUF012 (pydantic copies the default per instance)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(respond=self._answer, usage=(400, 120), **kwargs)

    def _answer(self, messages: list[BaseMessage]) -> AIMessage | str:
        text = "\n".join(str(m.content) for m in messages)
        if "Claim:" in text:  # the veto call: an adversary never objects to a finding
            return tool_call_answer("VetoAnswer", {"veto": False, "reason": "looks right"})
        if "<evidence" not in text:  # the tool loop: call nothing, so the fixed plan gathers the evidence
            return AIMessage(content="I have nothing to search for.")
        match = _QUESTION.search(text)
        question = match.group("q") if match else ""
        blocks = [(m.group("id"), m.group("source"), m.group("body")) for m in _BLOCK.finditer(text)]
        claims = adversarial_claims(question, blocks)
        self.proposed.extend((question, c["text"]) for c in claims)
        return tool_call_answer("ClaimsAnswer", {"claims": claims})
