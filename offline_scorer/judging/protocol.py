"""The judge interface: the only thing the scorer talks to.

A request is complete (step, messages, output schema, sampling), so a live model, a cassette or a
scripted judge can each answer it, and the scorer cannot tell which one did.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, Self, runtime_checkable

from offline_scorer.errors import GenerationError


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
    # Free text (where the grammar allows many tokens) may not repeat a run of this many tokens
    # within itself, nor copy one from `no_copy`: a small model's loops and prompt-copying end
    # in decoding. 0 turns both off.
    no_repeat_ngram: int = 0
    no_copy: tuple[str, ...] = ()
    # An answer that reaches max_tokens is returned cut, with finish_reason "length", instead
    # of failing. Scorers never set it (no verdict is taken from a cut answer); a chat client
    # asking for a budget expects OpenAI's behaviour.
    cut_at_limit: bool = False
    # The P(true) at or above which this request's boolean verdicts are committed `true`, where
    # the judge reads verdict probabilities; None: the judge's own threshold. A judge may be
    # calibrated differently for different questions (is a claim supported; is a question
    # answered), and the request knows which it asks.
    verdict_threshold: float | None = None

    def normalized(self) -> dict[str, Any]:
        """Settings as they affect output: the seed is irrelevant when decoding is greedy."""
        greedy = self.temperature == 0
        settings: dict[str, Any] = {
            "temperature": 0.0 if greedy else float(self.temperature),
            "seed": None if greedy else int(self.seed),
            "max_tokens": int(self.max_tokens),
        }
        if self.no_repeat_ngram:
            settings["no_repeat_ngram"] = int(self.no_repeat_ngram)
            settings["no_copy"] = list(self.no_copy)
        if self.cut_at_limit:  # absent when off, so keys recorded before it are unchanged
            settings["cut_at_limit"] = True
        if self.verdict_threshold is not None:  # absent when the judge's own, likewise
            settings["verdict_threshold"] = float(self.verdict_threshold)
        return settings


@dataclass(frozen=True)
class JudgeRequest:
    step: str
    messages: tuple[Message, ...]
    output_schema: Mapping[str, Any] | None = None
    sampling: SamplingSettings = field(default_factory=SamplingSettings)

    def text(self) -> str:
        """Everything this request sends to a model, as one string (for audits and tests)."""
        return "\n".join(f"[{m.role}]\n{m.content}" for m in self.messages)


@dataclass(frozen=True)
class Usage:
    """Token counts of one exchange; kept beside a recording, never part of its key."""

    prompt_tokens: int
    completion_tokens: int
    forced_tokens: int  # of completion_tokens, those the grammar allowed no alternative to


@dataclass(frozen=True)
class Completion:
    """A judge's answer: the text, and what a model can say about its verdicts.

    `verdict_probabilities` holds, for each boolean verdict in the answer in order, the model's
    probability of `true` renormalised over what the grammar allowed there. A judge that cannot
    observe probabilities (scripted, other backends) leaves it None; nothing downstream needs it.
    """

    text: str
    verdict_probabilities: tuple[float, ...] | None = None
    verdict_threshold: float | None = None  # the P(true) at or above which `true` was chosen
    usage: Usage | None = None
    finish_reason: str = "stop"  # "length": cut at max_tokens (only with cut_at_limit)


def as_completion(answer: str | Completion) -> Completion:
    return answer if isinstance(answer, Completion) else Completion(answer)


@dataclass(frozen=True)
class JudgeIdentity:
    """What, besides the request, determines a model's answer: used in cassette keys."""

    model_sha256: str
    chat_template_sha256: str
    backend: str
    verdict_threshold: float | None = None  # decoder's decision rule for boolean verdicts


@runtime_checkable
class Judge(Protocol):
    """What a scorer may use of a judge, all of it: no attribute is reached any other way."""

    @property
    def identity(self) -> JudgeIdentity | None:
        """What besides the request decides its answers (None: not a model, e.g. scripted)."""
        ...

    def complete(self, request: JudgeRequest) -> Completion:
        """The answer to `request`, with what the judge can tell about it."""
        ...

    def runtime_versions(self) -> dict[str, str]:
        """Versions worth keeping beside a recording; never part of a key."""
        ...

    def close(self) -> None: ...

    def __enter__(self) -> Judge: ...

    def __exit__(self, *exc: object) -> None: ...


class JudgeBase:
    """The parts of `Judge` most judges share: no identity, no runtime, nothing to close."""

    @property
    def identity(self) -> JudgeIdentity | None:
        return None

    def complete(self, request: JudgeRequest) -> Completion:
        raise NotImplementedError

    def runtime_versions(self) -> dict[str, str]:
        return {}

    def close(self) -> None:
        return None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class TextJudge(Protocol):
    """The smallest judge a user can write: `complete` returning the answer's text."""

    def complete(self, request: JudgeRequest) -> str | Completion: ...


class AdaptedJudge(JudgeBase):
    """A user's `TextJudge` seen through the full protocol."""

    def __init__(self, inner: TextJudge) -> None:
        self.inner = inner

    def complete(self, request: JudgeRequest) -> Completion:
        answer = self.inner.complete(request)
        if not isinstance(answer, str | Completion):
            raise GenerationError(
                f"{request.step}: the judge returned {type(answer).__name__}, expected the "
                "model's text or a Completion"
            )
        return as_completion(answer)


def as_judge(candidate: object) -> Judge:
    """A full judge for anything with a `complete(request)` method; TypeError otherwise."""
    if isinstance(candidate, JudgeBase | Judge):
        return candidate
    if callable(getattr(candidate, "complete", None)):
        return AdaptedJudge(candidate)  # type: ignore[arg-type]
    raise TypeError(
        "a judge needs a complete(request) -> str | Completion method, e.g. "
        "offline_scorer.backends.llama_cpp.load_judge() or offline_scorer.testing.ScriptedJudge"
    )
