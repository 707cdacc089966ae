"""The exchange key's fields: one table from which the key, the record, misses and dumps derive.

Like vcrpy's matcher table, which drives both request matching and the explanation of a miss,
each `KeyField` in `FIELDS` says for one input that determines the model's answer:

* how it is read from a request and the judge's identity (`read`), which builds the key;
* how an exchange record stores it under "request" and reads it back strictly (`store`, `load`);
* how a replay miss words a difference in it (`diff`), and how `cassette dump` shows it (`show`).

The key's canonical form is the values in table order, so the order is part of the format.
Covered: the key format version, the model's sha256, the chat template's sha256, the decoding
backend (which names its schema compiler), the verdict threshold (since key format 2, with
verdict probabilities), the messages, the normalized sampling settings and the request's output
schema as canonical JSON (since key format 3; formats 1 and 2 held the GBNF text one backend
compiled it to, which tied storage to that backend). Not covered (stored as metadata at most):
runtime versions, threads, timings, host. The step name is a label, not an input, so it is
stored beside the key rather than in it.

Nothing here knows a backend: a live judge turns the schema into whatever its decoder runs.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any, Protocol

from offline_scorer.cassette.schema import canonical_schema
from offline_scorer.formats import KEY_FORMAT
from offline_scorer.judging.protocol import (
    JudgeIdentity,
    JudgeRequest,
    SamplingSettings,
)

__all__ = [
    "DUMPED",
    "FIELDS",
    "Blobs",
    "IdentityField",
    "KeyField",
    "first_differing_char",
    "require",
    "sampling_settings",
]

CONTEXT = 30
"""Characters of context either side of the first difference a miss quotes."""


class Blobs(Protocol):
    """Where records keep large texts once, under the hex sha256 they reference them by."""

    def append_blob(self, text: str) -> bytes: ...

    def blob_text(self, key: bytes | str) -> str: ...


def require(mapping: Any, name: str, kind: type | tuple[type, ...], where: str) -> Any:
    """`mapping[name]`, which must be present and a `kind` (a bool is no int); else ValueError."""
    if not isinstance(mapping, Mapping) or name not in mapping:
        raise ValueError(f"{where} has no {name!r}")
    value = mapping[name]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ValueError(f"{where}.{name} has the wrong type")
    return value


def _blob(blobs: Blobs, key: str, where: str) -> str:
    try:
        return blobs.blob_text(key)
    except KeyError:
        raise ValueError(f"{where} references blob {key[:16]} that the cassette lacks") from None


def first_differing_char(recorded: str, requested: str) -> int:
    """Index of the first character at which the texts differ (the shorter length if none)."""
    limit = min(len(recorded), len(requested))
    for index in range(limit):
        if recorded[index] != requested[index]:
            return index
    return limit


def _excerpt(text: str, at: int) -> str:
    start = max(0, at - CONTEXT)
    piece = text[start : at + CONTEXT].replace("\n", "\\n")
    return ("..." if start else "") + piece + ("..." if at + CONTEXT < len(text) else "")


def _text_diff(label: str, recorded: str, requested: str) -> str:
    at = first_differing_char(recorded, requested)
    return (
        f"{label} first differs at character {at}: recorded {_excerpt(recorded, at)!r} "
        f"vs now {_excerpt(requested, at)!r}"
    )


class KeyField:
    """One input of the key: a plain value, stored as is, a change worded with its repr.

    Subclasses change where the value comes from, how it is stored and how it is compared.
    """

    dumped = True
    """Whether `cassette dump` shows it."""
    bulky = False
    """A text stored as blobs; the dump shows these after the short fields, for readability."""

    def __init__(
        self,
        name: str,
        label: str,
        kind: type | tuple[type, ...] = str,
        *,
        optional: bool = False,
        since: int = 1,
        until: int | None = None,
    ) -> None:
        self.name = name
        """The `KeyParts` attribute, the record's "request" key and the dump's key."""
        self.label = label
        """How a replay miss names the field."""
        self.kind = kind
        """The type of the stored value, checked when a record is read back."""
        self.optional = optional
        """A record may omit it or hold None, which reads back as None."""
        self.since = since
        """The first key format whose canonical form includes the field."""
        self.until = until
        """The last key format that includes it (None: still in the current one)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"

    def in_format(self, key_format: int) -> bool:
        """Whether keys (and records) of `key_format` hold this field."""
        return self.since <= key_format and (self.until is None or key_format <= self.until)

    def read(self, request: JudgeRequest, identity: JudgeIdentity) -> Any:
        """The field's value for a live request."""
        raise NotImplementedError

    def store(self, value: Any, blobs: Blobs) -> Any:
        """The value as the record's "request" map holds it (may append blobs)."""
        return value

    def load(self, request: Mapping[str, Any], blobs: Blobs, where: str) -> Any:
        """The value back from a record's "request" map; ValueError if it is malformed."""
        if not self.optional:
            return self.decode(
                require(request, self.name, self.kind, where + ".request"), blobs, where
            )
        raw = request.get(self.name)
        if raw is None:
            return None
        if not isinstance(raw, self.kind):
            raise ValueError(f"{where}.request.{self.name} has the wrong type")
        return self.decode(raw, blobs, where)

    def decode(self, raw: Any, blobs: Blobs, where: str) -> Any:
        """The value from a stored one already checked to be a `kind`."""
        return raw

    def show(self, value: Any) -> Any:
        """The value as JSON for `cassette dump`."""
        return value

    def diff(self, recorded: Any, now: Any) -> str:
        """How a replay miss says that the value changed."""
        return f"{self.label}: recorded {recorded!r} vs now {now!r}"


class _KeyFormat(KeyField):
    dumped = False

    def read(self, request: JudgeRequest, identity: JudgeIdentity) -> Any:
        return KEY_FORMAT


class IdentityField(KeyField):
    """A field of the judge's identity, read from the `JudgeIdentity` attribute of its name."""

    def read(self, request: JudgeRequest, identity: JudgeIdentity) -> Any:
        return self.of(identity)

    def of(self, identity: JudgeIdentity) -> Any:
        return getattr(identity, self.name)


class _Digest(IdentityField):
    def diff(self, recorded: Any, now: Any) -> str:
        return f"{self.label}: recorded sha256 {recorded[:16]}... vs now {now[:16]}..."


class _Messages(KeyField):
    """(role, content) pairs; each content is stored once as a blob."""

    bulky = True

    def read(self, request: JudgeRequest, identity: JudgeIdentity) -> Any:
        return tuple((m.role, m.content) for m in request.messages)

    def store(self, value: Any, blobs: Blobs) -> Any:
        return [
            {"role": role, "content": blobs.append_blob(content).hex()} for role, content in value
        ]

    def decode(self, raw: Any, blobs: Blobs, where: str) -> Any:
        messages = []
        for message in raw:
            role = require(message, "role", str, where + ".message")
            content = _blob(blobs, require(message, "content", str, where + ".message"), where)
            messages.append((role, content))
        return tuple(messages)

    def show(self, value: Any) -> Any:
        return [{"role": role, "content": content} for role, content in value]

    def diff(self, recorded: Any, now: Any) -> str:
        if len(recorded) != len(now):
            return f"{self.label}: recorded {len(recorded)} messages vs now {len(now)}"
        index, old, new = next(
            (i, old, new)
            for i, (old, new) in enumerate(zip(recorded, now, strict=True))
            if old != new
        )
        label = f"{self.label}: message {index + 1} ({new[0]})"
        if old[0] != new[0]:
            return f"{label}: role recorded {old[0]!r} vs now {new[0]!r}"
        return _text_diff(label, old[1], new[1])


@functools.lru_cache(maxsize=64)
def _normalized(settings: SamplingSettings) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted(settings.normalized().items()))


def sampling_settings(sampling: tuple[tuple[str, Any], ...]) -> SamplingSettings:
    """Settings that normalize to the recorded `sampling` again (to re-run an exchange)."""
    values = dict(sampling)
    return SamplingSettings(
        temperature=values["temperature"],
        seed=values["seed"] or 0,
        max_tokens=values["max_tokens"],
        no_repeat_ngram=values.get("no_repeat_ngram", 0),
        no_copy=tuple(values.get("no_copy", ())),
        cut_at_limit=bool(values.get("cut_at_limit", False)),
        verdict_threshold=values.get("verdict_threshold"),
    )


class _Sampling(KeyField):
    """The sampling settings as they affect output, as sorted (name, value) pairs."""

    def read(self, request: JudgeRequest, identity: JudgeIdentity) -> Any:
        return _normalized(request.sampling)

    def store(self, value: Any, blobs: Blobs) -> Any:
        return dict(value)

    def decode(self, raw: Any, blobs: Blobs, where: str) -> Any:
        return tuple(sorted(raw.items()))

    def show(self, value: Any) -> Any:
        return dict(value)

    def diff(self, recorded: Any, now: Any) -> str:
        before, after = dict(recorded), dict(now)
        changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        return f"{self.label}: " + ", ".join(
            f"{k} recorded {before.get(k)!r} vs now {after.get(k)!r}" for k in changed
        )


class _BlobText(KeyField):
    """An optional long text (None: absent), stored once as a blob and compared by position."""

    bulky = True

    def store(self, value: Any, blobs: Blobs) -> Any:
        return None if value is None else blobs.append_blob(value).hex()

    def decode(self, raw: Any, blobs: Blobs, where: str) -> Any:
        return _blob(blobs, raw, where)

    def diff(self, recorded: Any, now: Any) -> str:
        return _text_diff(self.label, recorded or "", now or "")


class _Grammar(_BlobText):
    """Formats 1 and 2: the GBNF text the llama.cpp backend compiled the schema to.

    Read back so old records still verify and can be upgraded; a live request has none (its
    grammar is the backend's business, built only where it decodes).
    """

    def read(self, request: JudgeRequest, identity: JudgeIdentity) -> Any:
        return None


class _Schema(_BlobText):
    """Since format 3: the request's output schema as canonical JSON (None: unconstrained)."""

    def read(self, request: JudgeRequest, identity: JudgeIdentity) -> Any:
        return canonical_schema(request.output_schema)

    def show(self, value: Any) -> Any:
        return None if value is None else json.loads(value)


FIELDS: tuple[KeyField, ...] = (
    _KeyFormat("key_format", "key format", int),
    _Digest("model_sha256", "model"),
    _Digest("chat_template_sha256", "chat template"),
    IdentityField("backend", "backend"),
    IdentityField("verdict_threshold", "verdict threshold", float, optional=True, since=2),
    _Messages("messages", "prompt", list),
    _Sampling("sampling", "settings", Mapping),
    _Grammar("grammar", "grammar", optional=True, until=2),
    _Schema("schema", "output schema", optional=True, since=3),
)
"""Every key field, in the order of the key's canonical form (and of a miss's differences)."""

DUMPED: tuple[KeyField, ...] = tuple(
    sorted((field for field in FIELDS if field.dumped), key=lambda field: field.bulky)
)
"""The fields `cassette dump` shows, in its column order: short values first, then texts."""
