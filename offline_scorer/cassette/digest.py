"""A cassette's content digest: one sha256 a paper can cite for what the judge answered.

CRCs detect damage, not edits: whoever flips a verdict can recompute them. The content digest
is taken over what a replay returns, so a reader who checks it against a published value knows
the recording is the one the results were derived from. It is defined over content only, never
the file's framing, blob layout or record order, so `cassette merge` into an empty file,
`cassette repair` of an intact file and re-recording the same exchanges all keep it.

Definition, content digest version 1 (printed as ``oscas-content-v1:sha256:<64 hex>``):

* the exchanges are those replay answers from: per key, the latest record (a superseded record
  of the same key does not count);
* each record's key must equal the sha256 of its request fields (`KeyParts.digest`), else the
  digest is refused: the key then stands for the whole request (messages, schema, sampling,
  model and chat template sha256, backend, verdict threshold, key format);
* per exchange: ``e = sha256(b"oscas-content-v1\\0" + key + R)``, where ``R`` is the msgpack
  encoding (`msgpack.packb(..., use_bin_type=True)`, floats as float64) of the array
  ``[text, verdict_probabilities or nil]``, with the finish reason appended as a third item
  when the answer was cut at its budget (``"length"``; only chat requests allow that), so every
  digest of a cassette without cut answers is what it was before cut answers existed;
* the digest: ``sha256`` of the concatenation of every ``e``, sorted bytewise.

Not covered: the step name (a label), the record's "meta" (runtime versions, token counts), the
file header's writer. Changing any response byte, any verdict probability, or any request
field changes the digest; so does adding or removing an exchange.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import msgpack

from offline_scorer.cassette.records import Exchange, from_payload
from offline_scorer.cassette.store.file import CassetteFile
from offline_scorer.errors import CassetteFileError, InputError
from offline_scorer.formats import DIGEST_VERSION
from offline_scorer.judging.protocol import JudgeIdentity

__all__ = [
    "DIGEST_PREFIX",
    "ContentDigest",
    "content_digest",
    "exchange_digest",
    "parse_digest",
]

DIGEST_PREFIX = f"oscas-content-v{DIGEST_VERSION}:sha256:"
_DOMAIN = f"oscas-content-v{DIGEST_VERSION}\0".encode("ascii")


@dataclass(frozen=True)
class ContentDigest:
    hex: str
    exchanges: int  # distinct keys the digest covers
    judges: tuple[JudgeIdentity, ...] = field(default=(), compare=False)
    """Every judge identity the exchanges were recorded under (model and chat template sha256,
    backend, verdict threshold), sorted: what a report names beside the digest."""
    runtimes: tuple[tuple[tuple[str, str], ...], ...] = field(default=(), compare=False)
    """Every set of runtime versions the records' meta names (not covered by the digest, so
    two digests compare equal by their hex and count alone)."""

    writer: str = field(default="", compare=False)
    """The header's "offline-scorer VERSION" that created the file, read in the same pass: what
    `reproduce` names when a run differs (not covered by the digest)."""

    def __str__(self) -> str:
        return DIGEST_PREFIX + self.hex


def exchange_digest(exchange: Exchange) -> bytes:
    """``e`` of the module docstring for one exchange whose key is known to hold."""
    completion = exchange.completion
    probabilities = completion.verdict_probabilities
    items: list[object] = [exchange.text, None if probabilities is None else list(probabilities)]
    if completion.finish_reason != "stop":
        items.append(completion.finish_reason)
    response = msgpack.packb(items, use_bin_type=True)
    return hashlib.sha256(_DOMAIN + exchange.key + response).digest()


def _latest(cassette: CassetteFile) -> Iterator[Exchange]:
    """The exchange replay answers from, per key (a later record supersedes an earlier one)."""
    for key, payload in cassette.iter_latest_exchanges():
        yield from_payload(cassette, key, payload)


def content_digest(path: str | os.PathLike[str]) -> ContentDigest:
    """The content digest of the cassette at `path`.

    Raises InputError for a missing file, CassetteFileError for a damaged one or for a record
    whose key does not match its request (an edited request).
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"no such cassette: {path}")
    digests: list[bytes] = []
    judges: set[JudgeIdentity] = set()
    runtimes: set[tuple[tuple[str, str], ...]] = set()
    with CassetteFile(path, create=False) as cassette:
        writer = cassette.writer
        for exchange in _latest(cassette):
            parts = exchange.parts
            judges.add(
                JudgeIdentity(
                    parts.model_sha256,
                    parts.chat_template_sha256,
                    parts.backend,
                    parts.verdict_threshold,
                )
            )
            runtime = exchange.meta.get("runtime")
            if isinstance(runtime, Mapping):
                runtimes.add(tuple(sorted((str(k), str(v)) for k, v in runtime.items())))
            if exchange.parts.digest() != exchange.key:
                raise CassetteFileError(
                    f"DAMAGED {path}: exchange {exchange.key.hex()[:12]} does not match its key; "
                    "no content digest is given for an edited recording"
                )
            digests.append(exchange_digest(exchange))
    digests.sort()
    return ContentDigest(
        hashlib.sha256(b"".join(digests)).hexdigest(),
        len(digests),
        tuple(sorted(judges, key=repr)),
        tuple(sorted(runtimes)),
        writer,
    )


def parse_digest(text: str) -> str:
    """The hex of a digest as a user gives it: the printed form, ``sha256:<hex>`` or bare hex.

    InputError (one line) for anything else, including another digest version."""
    value = text.strip().lower()
    if value.startswith("oscas-content-v"):
        if not value.startswith(DIGEST_PREFIX):
            version = value.removeprefix("oscas-content-v").split(":", 1)[0]
            raise InputError(
                f"content digest version {version} is not one this version computes "
                f"({DIGEST_VERSION}); upgrade offline-scorer"
            )
        value = value.removeprefix(DIGEST_PREFIX)
    value = value.removeprefix("sha256:")
    if len(value) != 64 or any(c not in "0123456789abcdef" for c in value):
        raise InputError(
            f"--digest {text!r} is not a content digest (expected {DIGEST_PREFIX}<64 hex digits>)"
        )
    return value
