"""The judge interface: the only thing the scorer talks to.

A request is complete (step, messages, output schema, sampling), so a live model, a cassette or a
scripted judge can each answer it, and the scorer cannot tell which one did.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

Step = Literal["preprocess", "analyze", "reason"]
STEPS: tuple[Step, ...] = ("preprocess", "analyze", "reason")


@dataclass(frozen=True)
class Message:
    role: str
    content: str


@dataclass(frozen=True)
class SamplingSettings:
    """Greedy by default: the judge must give the same answer to the same request."""

    temperature: float = 0.0
    seed: int = 0
    max_tokens: int = 1024

    def normalized(self) -> dict[str, Any]:
        """Settings as they affect output: the seed is irrelevant when decoding is greedy."""
        greedy = self.temperature == 0
        return {
            "temperature": 0.0 if greedy else float(self.temperature),
            "seed": None if greedy else int(self.seed),
            "max_tokens": int(self.max_tokens),
        }


@dataclass(frozen=True)
class JudgeRequest:
    step: str
    messages: tuple[Message, ...]
    output_schema: Mapping[str, Any] | None = None
    sampling: SamplingSettings = field(default_factory=SamplingSettings)

    def text(self) -> str:
        """Everything this request sends to a model, as one string (for audits and tests)."""
        return "\n".join(f"[{m.role}]\n{m.content}" for m in self.messages)


@runtime_checkable
class Judge(Protocol):
    def complete(self, request: JudgeRequest) -> str:
        """The model's raw text for `request`."""
        ...


@dataclass(frozen=True)
class JudgeIdentity:
    """What, besides the request, determines a model's answer: used in cassette keys."""

    model_sha256: str
    chat_template_sha256: str
    backend: str
