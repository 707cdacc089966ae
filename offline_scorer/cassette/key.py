"""The exchange key: a digest over everything that determines the model's answer.

Covered: the key format version, the model's sha256, the chat template's sha256, the decoding
backend, the verdict threshold, the messages, the normalized sampling settings and the grammar
text. Format 2 added the verdict threshold (and responses gained verdict probabilities). Not covered
(stored as metadata at most): runtime versions, threads, timings, host. The step name is a label,
not an input, so it is stored beside the key rather than in it.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from typing import Any

import msgpack

from offline_scorer.backends.llama_cpp.gbnf import request_grammar
from offline_scorer.judging.protocol import JudgeIdentity, JudgeRequest, SamplingSettings

KEY_FORMAT = 2


@dataclass(frozen=True)
class KeyParts:
    model_sha256: str
    chat_template_sha256: str
    backend: str
    messages: tuple[tuple[str, str], ...]  # (role, content)
    sampling: tuple[tuple[str, Any], ...]  # sorted (name, value)
    grammar: str | None
    verdict_threshold: float | None = None
    key_format: int = KEY_FORMAT

    def canonical(self) -> bytes:
        """Deterministic bytes: a msgpack array in fixed field order.

        Format 1 keys (no threshold) still verify, so an old cassette reads as intact and a
        replay miss can say which format it holds.
        """
        threshold = () if self.key_format == 1 else (self.verdict_threshold,)
        return msgpack.packb(  # tuples pack as arrays, exactly like lists
            (
                self.key_format,
                self.model_sha256,
                self.chat_template_sha256,
                self.backend,
                *threshold,
                self.messages,
                self.sampling,
                self.grammar,
            ),
            use_bin_type=True,
        )

    def digest(self) -> bytes:
        return hashlib.sha256(self.canonical()).digest()


@functools.lru_cache(maxsize=64)
def _sampling(settings: SamplingSettings) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted(settings.normalized().items()))


def key_parts(request: JudgeRequest, identity: JudgeIdentity) -> KeyParts:
    return KeyParts(
        model_sha256=identity.model_sha256,
        chat_template_sha256=identity.chat_template_sha256,
        backend=identity.backend,
        verdict_threshold=identity.verdict_threshold,
        messages=tuple((m.role, m.content) for m in request.messages),
        sampling=_sampling(request.sampling),
        grammar=request_grammar(request.output_schema),
    )
