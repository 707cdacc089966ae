"""The exchange key: a sha256 over everything that determines the model's answer.

What goes into it, and in which order, is `fields.FIELDS`; this module holds the values of one
exchange (`KeyParts`) and turns them into the canonical bytes the digest is taken over.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import operator
from dataclasses import dataclass
from typing import Any

import msgpack

from offline_scorer.cassette.fields import FIELDS
from offline_scorer.judging.protocol import JudgeIdentity, JudgeRequest

__all__ = ["KeyParts", "key_parts"]


@dataclass(frozen=True)
class KeyParts:
    """The value of every key field for one exchange; attributes in `FIELDS` order."""

    key_format: int
    model_sha256: str
    chat_template_sha256: str
    backend: str
    verdict_threshold: float | None
    messages: tuple[tuple[str, str], ...]  # (role, content)
    sampling: tuple[tuple[str, Any], ...]  # sorted (name, value)
    grammar: str | None  # key formats 1 and 2 only
    schema: str | None  # key format 3 on: canonical JSON

    def canonical(self) -> bytes:
        """Deterministic bytes: a msgpack array of the fields in table order.

        A field joins at the key format that introduced it and leaves after the last one that
        had it, so format 1 keys (no threshold) and format 2 keys (grammar text, no schema)
        still verify, an old cassette reads as intact, and a miss can say which format it holds.
        """
        values = _fields_of_format(self.key_format)(self)
        return msgpack.packb(values, use_bin_type=True)  # tuples pack as arrays, like lists

    def digest(self) -> bytes:
        return hashlib.sha256(self.canonical()).digest()


if tuple(f.name for f in dataclasses.fields(KeyParts)) != tuple(f.name for f in FIELDS):
    raise AssertionError("KeyParts must have exactly the attributes of fields.FIELDS, in order")


@functools.cache
def _fields_of_format(key_format: int) -> operator.attrgetter[tuple[Any, ...]]:
    """A key's values in table order, those its format has (precomputed: replay is hot)."""
    return operator.attrgetter(*(f.name for f in FIELDS if f.in_format(key_format)))


def key_parts(request: JudgeRequest, identity: JudgeIdentity) -> KeyParts:
    """The key's values for a live request to a judge with this identity."""
    return KeyParts(*[f.read(request, identity) for f in FIELDS])  # same order, checked above
