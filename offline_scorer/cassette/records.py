"""What an exchange record holds, and reading it back strictly.

The store (`store/`) keeps opaque, type-checked msgpack maps; this module gives them their shape:
``{"step", "request", "response", "meta"}``, where "request" holds the key fields of the
record's key format as `fields.FIELDS` stores them (fields of other formats are absent, and
read back as None). Large texts (messages, schemas) are stored once as blobs and referenced by
the hex sha256 of their text, so a shared system prompt costs its bytes once per cassette.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from offline_scorer.cassette.fields import FIELDS, require
from offline_scorer.cassette.key import KeyParts
from offline_scorer.cassette.store.file import CassetteFile
from offline_scorer.errors import CassetteFileError
from offline_scorer.formats import KEY_FORMAT
from offline_scorer.judging.protocol import Completion, Usage


@dataclass(frozen=True)
class Exchange:
    key: bytes
    step: str
    parts: KeyParts
    completion: Completion
    meta: Mapping[str, Any]

    @property
    def text(self) -> str:
        return self.completion.text


def to_payload(
    cassette: CassetteFile,
    step: str,
    parts: KeyParts,
    completion: Completion,
    meta: Mapping[str, Any],
) -> dict[str, Any]:
    """The exchange map to append; appends the blobs it references first, in table order."""
    return {
        "step": step,
        "request": {
            f.name: f.store(getattr(parts, f.name), cassette)
            for f in FIELDS
            if f.in_format(parts.key_format)
        },
        "response": _response(completion),
        "meta": dict(meta),
    }


def _response(completion: Completion) -> dict[str, Any]:
    response: dict[str, Any] = {"text": completion.text}
    if completion.verdict_probabilities is not None:
        response["verdict_probabilities"] = list(completion.verdict_probabilities)
    if completion.finish_reason != "stop":  # absent for whole answers, as before it existed
        response["finish_reason"] = completion.finish_reason
    return response


def from_payload(cassette: CassetteFile, key: bytes, payload: Mapping[str, Any]) -> Exchange:
    """Rebuild an exchange, raising CassetteFileError for any record of the wrong shape."""
    where = f"exchange {key.hex()[:12]}"
    try:
        request = require(payload, "request", Mapping, where)
        key_format = require(request, "key_format", int, where + ".request")
        values: dict[str, Any] = {
            f.name: f.load(request, cassette, where) if f.in_format(key_format) else None
            for f in FIELDS
        }
        parts = KeyParts(**values)
        return Exchange(
            key=key,
            step=require(payload, "step", str, where),
            parts=parts,
            completion=_completion(payload, parts.verdict_threshold, where),
            meta=meta if isinstance(meta := payload.get("meta"), Mapping) else {},
        )
    except ValueError as error:
        raise CassetteFileError(f"{cassette.path}: malformed exchange record: {error}") from None


def _completion(payload: Mapping[str, Any], threshold: float | None, where: str) -> Completion:
    response = require(payload, "response", Mapping, where)
    text = require(response, "text", str, where + ".response")
    finish = response.get("finish_reason", "stop")
    if finish not in ("stop", "length"):
        raise ValueError(f"{where}.response.finish_reason must be 'stop' or 'length'")
    found = response.get("verdict_probabilities")
    if found is None:
        return Completion(text, finish_reason=finish)
    if not isinstance(found, list) or not all(
        isinstance(p, float) and 0.0 <= p <= 1.0 for p in found
    ):
        raise ValueError(f"{where}.response.verdict_probabilities must be numbers from 0 to 1")
    return Completion(text, tuple(found), threshold, finish_reason=finish)


def _usage(meta: Mapping[str, Any]) -> Usage | None:
    counts = [meta.get(name) for name in ("prompt_tokens", "completion_tokens", "forced_tokens")]
    ints = [count for count in counts if type(count) is int and count >= 0]
    return Usage(*ints) if len(ints) == len(counts) else None


def response_completion(
    cassette: CassetteFile, key: bytes, payload: Mapping[str, Any], threshold: float | None
) -> Completion:
    """Just the recorded answer of a whole exchange map, without expanding its request."""
    return replayed_completion(cassette, key, payload, threshold)


REPLAYED_FIELDS = ("response", "meta")
"""What replay may read of an exchange record: the answer, then the token counts beside it."""


def replayed_completion(
    cassette: CassetteFile, key: bytes, fields: Mapping[str, Any], threshold: float | None
) -> Completion:
    """The recorded answer from an exchange's `REPLAYED_FIELDS` (usage when "meta" is among
    them): the replay hot path."""
    try:
        completion = _completion(fields, threshold, "exchange")
        meta = fields.get("meta")
        usage = _usage(meta) if isinstance(meta, Mapping) else None
        return completion if usage is None else dataclasses.replace(completion, usage=usage)
    except ValueError as error:
        raise CassetteFileError(
            f"{cassette.path}: malformed exchange record {key.hex()[:12]}: {error}"
        ) from None


def recorded_judges(cassette: CassetteFile, backend: str) -> set[tuple[str, str, float | None]]:
    """(model sha256, chat template sha256, verdict threshold) of every judge whose current-
    format records in the cassette were made by `backend`: who answered, for a replay whose
    model has no registry pins (a GGUF given by path)."""
    found = set()
    for key, payload in cassette.iter_exchanges(newest_first=True):
        parts = from_payload(cassette, key, payload).parts
        if parts.key_format == KEY_FORMAT and parts.backend == backend:
            found.add((parts.model_sha256, parts.chat_template_sha256, parts.verdict_threshold))
    return found


def recorded_models(cassette: CassetteFile) -> set[str]:
    """The model sha256 of every exchange in the cassette, any key format: which model files
    answered, for a replay of a cassette whose header names no recipe."""
    return {
        from_payload(cassette, key, payload).parts.model_sha256
        for key, payload in cassette.iter_exchanges()
    }
