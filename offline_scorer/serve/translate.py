"""An OpenAI chat request to the judge request it asks for: messages, schema and sampling.

Rules, in order:

1. Fields this server cannot honour are refused by name (see `wire`), never ignored.
2. Text parts of a message are joined with a line break ("\\n"); a developer message is a system
   message. The messages are rendered with the model's own chat template, as in the library.
3. Mastra's summarization prompts are decoded under grounded constraints (`mastra`).
4. Otherwise the schema is `response_format`'s json_schema, else a schema written into the
   prompt in a recognised wording (`inline_schema`), else for json_object any JSON object.
5. Sampling: greedy with the project's seed when no sampling field is given; the budget is
   `max_tokens` (or `max_completion_tokens`), else `DEFAULT_MAX_TOKENS`, and an answer that
   reaches it comes back cut with finish_reason "length", as from OpenAI. Given values enter
   the cassette key through the request's sampling; the seed only matters when not greedy.
   Mastra's recognised steps use the library's own budgets, which a grounded answer stays under.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from offline_scorer.judging.protocol import JudgeRequest, Message, SamplingSettings
from offline_scorer.scorers.summarization.options import ScorerOptions
from offline_scorer.scorers.summarization.prompts import SEED
from offline_scorer.serve.errors import ApiError
from offline_scorer.serve.inline_schema import inline_schema
from offline_scorer.serve.mastra import recognise
from offline_scorer.serve.wire import ChatRequest, TextPart

__all__ = ["DEFAULT_MAX_TOKENS", "PART_SEPARATOR", "Prepared", "prepare"]

DEFAULT_MAX_TOKENS = 1024
"""Output budget of a request that names none: bounded, so a looping answer ends."""
PART_SEPARATOR = "\n"
ANY_OBJECT: dict[str, Any] = {"type": "object"}
"""The schema of `response_format: {"type": "json_object"}`."""


@dataclass(frozen=True)
class Prepared:
    """A request ready for the judge, and how its answer goes back to the client."""

    request: JudgeRequest
    model: str
    stream: bool
    include_usage: bool
    text_reply: bool = False  # the answer is a JSON string whose value is the reply text
    shown: Callable[[str], str] | None = None  # what the client is shown of that text


def prepare(chat: ChatRequest, options: ScorerOptions | None = None) -> Prepared:
    """The judge request of `chat`; Mastra's recognised steps run with the served judge's
    summarization `options` (`mastra.served_options`)."""
    _refuse_unhonoured(chat)
    messages = tuple(_message(i, m.role, m.content, m.name) for i, m in enumerate(chat.messages))
    if not any(m.content.strip() for m in messages if m.role == "user"):
        raise ApiError(
            400,
            "the messages hold no user text: send at least one non-empty user message",
            param="messages",
        )
    include_usage = bool(chat.stream_options and chat.stream_options.include_usage)
    if chat.stream_options is not None and not chat.stream:
        raise ApiError(400, "stream_options is only allowed with stream: true", param="stream")
    grounded = recognise(messages, options)
    if grounded is not None:
        request = JudgeRequest(grounded.step, messages, grounded.schema, grounded.sampling)
        return Prepared(
            request, chat.model, chat.stream, include_usage, grounded.text_reply, grounded.shown
        )
    request = JudgeRequest("chat", messages, _schema(chat, messages), _sampling(chat))
    return Prepared(request, chat.model, chat.stream, include_usage)


def _message(index: int, role: str, content: str | list[TextPart], name: str | None) -> Message:
    if name is not None:
        raise ApiError(
            400,
            f"messages[{index}].name is not supported: names do not reach the chat template",
            param=f"messages.{index}.name",
        )
    text = content if isinstance(content, str) else PART_SEPARATOR.join(p.text for p in content)
    return Message("system" if role == "developer" else role, text)


def _schema(chat: ChatRequest, messages: tuple[Message, ...]) -> dict[str, Any] | None:
    fmt = chat.response_format
    if fmt is not None and fmt.type == "json_schema":
        if fmt.json_schema is None or fmt.json_schema.schema_ is None:
            raise ApiError(
                400,
                "response_format json_schema needs json_schema.schema (the JSON schema)",
                param="response_format.json_schema.schema",
            )
        return fmt.json_schema.schema_
    if fmt is not None and fmt.type == "text":
        return None
    found = inline_schema(messages)
    if found is not None:
        return found
    return ANY_OBJECT if fmt is not None and fmt.type == "json_object" else None


def _sampling(chat: ChatRequest) -> SamplingSettings:
    if chat.temperature not in (None, 0):
        raise ApiError(
            400,
            f"temperature {chat.temperature} is not supported: this server decodes "
            "greedily (omit temperature or send 0), so every answer can be replayed",
            param="temperature",
        )
    budget = chat.max_completion_tokens or chat.max_tokens
    both = chat.max_tokens is not None and chat.max_completion_tokens is not None
    if both and chat.max_tokens != chat.max_completion_tokens:
        raise ApiError(
            400,
            "max_tokens and max_completion_tokens differ; send one of them",
            param="max_tokens",
        )
    seed = SEED if chat.seed is None else chat.seed
    return SamplingSettings(
        temperature=0.0, seed=seed, max_tokens=budget or DEFAULT_MAX_TOKENS, cut_at_limit=True
    )


_NEUTRAL: tuple[tuple[str, tuple[object, ...], str], ...] = (
    ("n", (None, 1), "one choice per request"),
    ("top_p", (None, 1), "greedy decoding (top_p 1)"),
    ("presence_penalty", (None, 0), "no penalties"),
    ("frequency_penalty", (None, 0), "no penalties"),
    ("stop", (None, []), "no stop sequences"),
    ("logprobs", (None, False), "no logprobs"),
    ("tools", (None, []), "no tools"),
    ("tool_choice", (None, "none"), "no tools"),
)


def _refuse_unhonoured(chat: ChatRequest) -> None:
    for field, neutral, supported in _NEUTRAL:
        value = getattr(chat, field)
        if value not in neutral:
            raise ApiError(
                400,
                f"{field} {value!r:.40} is not supported: this server gives {supported}",
                code="unsupported_parameter",
                param=field,
            )
