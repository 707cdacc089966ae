"""OpenAI's response and chunk shapes for one answered request, derived only from the exchange.

`id`, `created` and `system_fingerprint` come from the exchange key and the judge identity, not
from a clock, so a replayed response is the same bytes as the recorded one. `created` is
therefore not the time of the request: it is `CREATED_BASE` plus a number taken from the key.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any

from offline_scorer.judging.protocol import Completion, JudgeIdentity
from offline_scorer.serve.errors import ApiError
from offline_scorer.serve.translate import Prepared

__all__ = ["Reply", "chunks", "completion_body", "dumps", "reply_of"]

CREATED_BASE = 1_700_000_000
_CREATED_SPAN = 100_000_000


def dumps(value: object) -> str:
    """The one JSON encoding of every body and chunk: compact, UTF-8, key order as built."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class Reply:
    """The parts every shape shares: ids, the reply text and the token counts."""

    def __init__(
        self, prepared: Prepared, completion: Completion, key: bytes, identity: JudgeIdentity
    ) -> None:
        self.id = "chatcmpl-" + key.hex()[:32]
        self.created = CREATED_BASE + int.from_bytes(key[:4], "big") % _CREATED_SPAN
        self.model = prepared.model
        fingerprint = f"{identity.model_sha256} {identity.backend} {identity.verdict_threshold}"
        self.fingerprint = "fp_" + hashlib.sha256(fingerprint.encode()).hexdigest()[:12]
        self.text = _text(prepared, completion)
        self.finish_reason = completion.finish_reason
        usage = completion.usage
        prompt = usage.prompt_tokens if usage else 0
        answer = usage.completion_tokens if usage else 0
        self.usage = {
            "prompt_tokens": prompt,
            "completion_tokens": answer,
            "total_tokens": prompt + answer,
        }

    def head(self, kind: str) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": kind,
            "created": self.created,
            "model": self.model,
            "system_fingerprint": self.fingerprint,
        }


def reply_of(
    prepared: Prepared, completion: Completion, key: bytes, identity: JudgeIdentity
) -> Reply:
    return Reply(prepared, completion, key, identity)


def _text(prepared: Prepared, completion: Completion) -> str:
    if not prepared.text_reply:
        return completion.text
    try:
        value = json.loads(completion.text)
    except ValueError:
        value = None
    if not isinstance(value, str):
        raise ApiError(500, "the judge's free-text answer was not the JSON string it must be")
    return value if prepared.shown is None else prepared.shown(value)


def completion_body(reply: Reply) -> dict[str, Any]:
    return {
        **reply.head("chat.completion"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply.text, "refusal": None},
                "logprobs": None,
                "finish_reason": reply.finish_reason,
            }
        ],
        "usage": reply.usage,
    }


def chunks(reply: Reply, include_usage: bool) -> Iterator[dict[str, Any]]:
    """The stream of one reply: role, the whole text, the finish reason, then usage if asked."""

    def choice(delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
        body = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return {**reply.head("chat.completion.chunk"), "choices": [body]}

    yield choice({"role": "assistant", "content": ""}, None)
    if reply.text:
        yield choice({"content": reply.text}, None)
    yield choice({}, reply.finish_reason)
    if include_usage:
        yield {**reply.head("chat.completion.chunk"), "choices": [], "usage": reply.usage}
