"""What an exchange record holds, and reading it back strictly.

The container (`container.py`) stores opaque, type-checked msgpack maps; this module gives them
their shape. Large texts (messages, grammars) are stored once as blobs and referenced by the hex
sha256 of their text, so a shared system prompt costs its bytes once per cassette.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from offline_scorer.cassette.key import KeyParts
from offline_scorer.cassette.store.container import CassetteFile
from offline_scorer.errors import CassetteFileError
from offline_scorer.judging.protocol import Completion


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
    """The exchange map to append; appends the blobs it references first."""
    messages = [
        {"role": role, "content": cassette.append_blob(content).hex()}
        for role, content in parts.messages
    ]
    grammar = None if parts.grammar is None else cassette.append_blob(parts.grammar).hex()
    return {
        "step": step,
        "request": {
            "key_format": parts.key_format,
            "model_sha256": parts.model_sha256,
            "chat_template_sha256": parts.chat_template_sha256,
            "backend": parts.backend,
            "verdict_threshold": parts.verdict_threshold,
            "messages": messages,
            "sampling": dict(parts.sampling),
            "grammar": grammar,
        },
        "response": _response(completion),
        "meta": dict(meta),
    }


def _response(completion: Completion) -> dict[str, Any]:
    response: dict[str, Any] = {"text": completion.text}
    if completion.verdict_probabilities is not None:
        response["verdict_probabilities"] = list(completion.verdict_probabilities)
    return response


def _field(mapping: Any, name: str, kind: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(mapping, Mapping) or name not in mapping:
        raise ValueError(f"{where} has no {name!r}")
    value = mapping[name]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ValueError(f"{where}.{name} has the wrong type")
    return value


def _blob(cassette: CassetteFile, key: str, where: str) -> str:
    try:
        return cassette.blob_text(key)
    except KeyError:
        raise ValueError(f"{where} references blob {key[:16]} that the cassette lacks") from None


def from_payload(cassette: CassetteFile, key: bytes, payload: Mapping[str, Any]) -> Exchange:
    """Rebuild an exchange, raising CassetteFileError for any record of the wrong shape."""
    where = f"exchange {key.hex()[:12]}"
    try:
        request = _field(payload, "request", Mapping, where)
        messages = []
        for message in _field(request, "messages", list, where + ".request"):
            role = _field(message, "role", str, where + ".message")
            content = _blob(cassette, _field(message, "content", str, where + ".message"), where)
            messages.append((role, content))
        grammar_ref = request.get("grammar")
        if grammar_ref is not None and not isinstance(grammar_ref, str):
            raise ValueError(f"{where}.request.grammar has the wrong type")
        sampling = _field(request, "sampling", Mapping, where + ".request")
        threshold = request.get("verdict_threshold")
        if threshold is not None and not isinstance(threshold, float):
            raise ValueError(f"{where}.request.verdict_threshold has the wrong type")
        parts = KeyParts(
            model_sha256=_field(request, "model_sha256", str, where + ".request"),
            chat_template_sha256=_field(request, "chat_template_sha256", str, where + ".request"),
            backend=_field(request, "backend", str, where + ".request"),
            verdict_threshold=threshold,
            messages=tuple(messages),
            sampling=tuple(sorted(sampling.items())),
            grammar=None if grammar_ref is None else _blob(cassette, grammar_ref, where),
            key_format=_field(request, "key_format", int, where + ".request"),
        )
        return Exchange(
            key=key,
            step=_field(payload, "step", str, where),
            parts=parts,
            completion=_completion(payload, threshold, where),
            meta=meta if isinstance(meta := payload.get("meta"), Mapping) else {},
        )
    except ValueError as error:
        raise CassetteFileError(f"{cassette.path}: malformed exchange record: {error}") from None


def _completion(payload: Mapping[str, Any], threshold: float | None, where: str) -> Completion:
    response = _field(payload, "response", Mapping, where)
    text = _field(response, "text", str, where + ".response")
    found = response.get("verdict_probabilities")
    if found is None:
        return Completion(text)
    if not isinstance(found, list) or not all(
        isinstance(p, float) and 0.0 <= p <= 1.0 for p in found
    ):
        raise ValueError(f"{where}.response.verdict_probabilities must be numbers from 0 to 1")
    return Completion(text, tuple(found), threshold)


def response_completion(
    cassette: CassetteFile, key: bytes, payload: Mapping[str, Any], threshold: float | None
) -> Completion:
    """Just the recorded answer: the replay hot path, which need not expand the request."""
    try:
        return _completion(payload, threshold, "exchange")
    except ValueError as error:
        raise CassetteFileError(
            f"{cassette.path}: malformed exchange record {key.hex()[:12]}: {error}"
        ) from None
