"""Claims cite evidence ids; code, not the model, decides which citations are real."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from dreaming.memory.research._evidence import EvidencePool

__all__ = ["Claim", "clean_claims"]


@dataclass(frozen=True, kw_only=True, slots=True)
class Claim:
    """One statement and the evidence ids it rests on."""

    text: str
    """The statement, one or two sentences."""
    evidence_ids: tuple[str, ...]
    """Ids of the pool's evidence (``E1`` ...) that support it."""

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict."""
        return {"text": self.text, "evidence_ids": list(self.evidence_ids)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Claim:
        """Rebuild a claim from :meth:`to_dict` output."""
        return cls(text=str(data["text"]), evidence_ids=tuple(str(i) for i in data.get("evidence_ids", ())))


def clean_claims(claims: Iterable[Claim], pool: EvidencePool) -> list[Claim]:
    """Drop cited ids unknown to ``pool``, then drop claims that are blank or left without evidence.

    Ids are stripped and deduplicated in order; the surviving claims keep their order. This is how an invented
    citation (an id no tool returned) loses its claim.
    """
    cleaned: list[Claim] = []
    for claim in claims:
        text = " ".join(claim.text.split())
        ids = tuple(dict.fromkeys(i.strip() for i in claim.evidence_ids if i.strip() in pool))
        if text and ids:
            cleaned.append(Claim(text=text, evidence_ids=ids))
    return cleaned
