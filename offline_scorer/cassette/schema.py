"""The output schema as the exchange key holds it: canonical JSON text, computed cheaply.

The canonical form is `json.dumps(schema, ensure_ascii=False, separators=(",", ":"))`: compact,
UTF-8 text kept as is, and key order kept, not sorted. The order of `properties` is the order a
decoder writes an answer's fields in, so two schemas that differ only there must not share
recorded answers (and `cassette verify --live` rebuilds the schema from this text with its order
intact); any other reordering only costs a spurious miss, never a wrong answer.

Replay computes it for every request, where the standard library's encoder cost a sixth of a
replayed evaluation. So:

* pydantic-core's encoder writes it when the value is plain JSON (exact dicts, lists, str, bool
  and 64-bit ints; no None, float or bytes), for which both encoders write the same bytes (a
  property test holds them to it). msgpack's strict packer proves a value plain: it refuses
  subclasses, tuples and lone surrogates, and marks None, bytes and floats with bytes that
  UTF-8 text rarely holds. Anything else, or any doubt, takes the standard library's path.
* The packed bytes identify the value exactly, so they also key a small cache: a long-lived
  process that meets the same schemas again pays for the packing only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import msgpack
import pydantic_core

from offline_scorer.bytecache import BytesCache

__all__ = ["canonical_schema"]

_JSON = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), check_circular=False, allow_nan=False
).encode
"""The definition of the canonical form (one encoder: `json.dumps` builds one per call)."""
_NOT_PLAIN = b"\xc0\xc4\xc5\xc6\xca\xcb"
"""msgpack's nil, bin and float markers: a value holding None, bytes or a float packs one."""

_cache = BytesCache(256)


def canonical_schema(schema: Mapping[str, Any] | None) -> str | None:
    """The canonical JSON text of a request's output schema (None: no schema)."""
    if schema is None:
        return None
    try:
        packed = msgpack.packb(schema, use_bin_type=True, strict_types=True)
    except (TypeError, ValueError, OverflowError):
        return _JSON(schema)  # not plain, and not cacheable by its packing
    text = _cache.get(packed)
    if text is None:
        if len(packed.translate(None, _NOT_PLAIN)) == len(packed):  # one pass, no regex
            text = pydantic_core.to_json(schema).decode("utf-8")
        else:
            text = _JSON(schema)
        _cache.put(packed, text)
    return text
