"""Payload values: one set of type rules, applied when writing and when reading.

Payloads may hold only None, bool, int, float, str, list and str-keyed dict, nested at most
`MAX_DEPTH` deep, so that every cassette decodes the same way in any msgpack implementation.

* Writing canonicalises (`pack`): values are validated and map keys sorted, so the same payload
  always packs to the same bytes whatever order the caller built it in.
* Reading (`decode`) treats the bytes as untrusted: strict unpacking with size limits, then the
  type rules are checked in place without a copy, because reading is the replay hot path. Every
  failure becomes `Damage`.
* Replay needs the response of an exchange map (and its token counts), not the request it was
  keyed by (the key already proves that). `decode_exchange_fields` walks the top-level map with
  msgpack's C skipper and decodes just the fields asked for, as strictly as `decode` would; the
  skipped values are still parsed as msgpack, and `cassette verify` decodes everything.
"""

from __future__ import annotations

import hashlib
from typing import NoReturn

import msgpack

from offline_scorer.cassette.store.errors import Damage

__all__ = [
    "MAX_DEPTH",
    "blob_key",
    "decode",
    "decode_blob",
    "decode_exchange",
    "decode_exchange_fields",
    "pack",
]

MAX_DEPTH = 16
"""Deepest container nesting in a payload (the top-level map is depth 1)."""
INT_MIN = -(2**63)
INT_MAX = 2**64 - 1

_ALLOWED = "only None, bool, int, float, str, list and str-keyed dict"
_SCALARS = frozenset({type(None), bool, int, float, str})


def _canonical(value: object, depth: int, where: str) -> object:
    """Validate `value` against the payload type rules and return it with map keys sorted.

    Raises TypeError or ValueError naming the offending position.
    """
    if value is None or value is True or value is False:
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        if not INT_MIN <= value <= INT_MAX:
            raise ValueError(f"{where}: integer outside the 64-bit range")
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, list | dict):
        if depth > MAX_DEPTH:
            raise ValueError(f"{where}: nested deeper than {MAX_DEPTH} levels")
        if isinstance(value, list):
            return [_canonical(item, depth + 1, f"{where}[{i}]") for i, item in enumerate(value)]
        items: list[tuple[str, object]] = []
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"{where}: map key of type {type(key).__name__}, only str allowed")
            items.append((str.__str__(key), item))
        items.sort(key=lambda pair: pair[0])
        return {key: _canonical(item, depth + 1, f"{where}[{key!r}]") for key, item in items}
    raise TypeError(f"{where}: {type(value).__name__} not allowed ({_ALLOWED})")


def pack(value: object) -> bytes:
    """Deterministic msgpack: canonical key order, str as str, floats as float64."""
    return msgpack.packb(_canonical(value, 1, "payload"), use_bin_type=True)


def blob_key(text: str) -> bytes:
    """The key a blob of `text` is stored under: sha256 of its UTF-8 bytes."""
    if not isinstance(text, str):
        raise TypeError(f"blob text must be a str, not {type(text).__name__}")
    return hashlib.sha256(text.encode("utf-8")).digest()


def _reject_ext(code: int, data: bytes) -> NoReturn:
    raise ValueError(f"msgpack ext type {code} not allowed")


def _unique_map(pairs: list[tuple[object, object]]) -> dict[object, object]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise ValueError("duplicate map key")
    return result


def decode(payload: bytes) -> object:
    """Strictly decode an untrusted payload; every failure becomes Damage."""
    limit = len(payload)
    try:
        value = msgpack.unpackb(
            payload,
            raw=False,
            use_list=True,
            strict_map_key=True,
            object_pairs_hook=_unique_map,
            ext_hook=_reject_ext,
            max_str_len=limit,
            max_bin_len=limit,
            max_array_len=limit,
            max_map_len=limit,
            max_ext_len=limit,
        )
    except (ValueError, TypeError, OverflowError, RecursionError, msgpack.UnpackException) as exc:
        raise Damage(f"payload is not valid msgpack ({_one_line(exc)})") from None
    try:
        _check(value, 1)
    except _TypeRule as exc:
        raise Damage(f"payload breaks the type rules (payload{exc.where}: {exc.what})") from None
    return value


class _TypeRule(Exception):
    """A decoded value breaks the payload type rules; `where` grows as it propagates."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what
        self.where = ""


def _check(value: object, depth: int) -> None:
    """Enforce the payload type rules on freshly unpacked data, without copying it.

    Only containers are walked: msgpack already bounds integers to 64 bits and the unpacker's
    limits bound sizes. Key order is irrelevant on read.
    """
    kind = type(value)
    if kind in _SCALARS:
        return
    if kind is not list and kind is not dict:
        raise _TypeRule(f"{kind.__name__} not allowed ({_ALLOWED})")
    if depth > MAX_DEPTH:
        raise _TypeRule(f"nested deeper than {MAX_DEPTH} levels")
    items = value.items() if kind is dict else enumerate(value)  # type: ignore[attr-defined,arg-type]
    for key, item in items:
        if kind is dict and type(key) is not str:
            raise _TypeRule(f"map key of type {type(key).__name__}, only str allowed")
        if type(item) not in _SCALARS:
            try:
                _check(item, depth + 1)
            except _TypeRule as exc:
                exc.where = f"[{key!r}]{exc.where}"
                raise


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 120 else text[:117] + "..."


def decode_exchange(payload: bytes) -> dict[str, object]:
    """An exchange payload: any map (its shape is the record layer's business)."""
    value = decode(payload)
    if not isinstance(value, dict):
        raise Damage(f"exchange payload is a {type(value).__name__}, not a map")
    return value


def decode_exchange_fields(payload: bytes, names: tuple[str, ...]) -> dict[str, object]:
    """The top-level fields `names` of an exchange map that it has, each decoded strictly.

    The map itself is checked as `decode_exchange` would (a map, str keys, no duplicates, nothing
    after it); the other fields are parsed and skipped, not decoded.
    """
    limit = len(payload)
    spans: dict[str, tuple[int, int]] = {}
    try:
        unpacker = msgpack.Unpacker(
            raw=False,
            strict_map_key=True,
            ext_hook=_reject_ext,
            max_buffer_size=max(limit, 1),
            max_str_len=limit,
            max_bin_len=limit,
            max_array_len=limit,
            max_map_len=limit,
            max_ext_len=limit,
        )
        unpacker.feed(payload)
        count = unpacker.read_map_header()
        seen: set[object] = set()
        for _ in range(count):
            key = unpacker.unpack()
            if type(key) is not str:
                raise Damage(f"exchange payload has a map key of type {type(key).__name__}")
            if key in seen:
                raise Damage("payload is not valid msgpack (duplicate map key)")
            seen.add(key)
            start = unpacker.tell()
            unpacker.skip()
            if key in names:
                spans[key] = (start, unpacker.tell())
        if unpacker.tell() != limit:
            raise Damage("payload is not valid msgpack (extra data after the map)")
    except msgpack.UnpackValueError as exc:
        if "Unexpected type header" in str(exc):  # read_map_header on a non-map
            raise Damage("exchange payload is not a map") from None
        raise Damage(f"payload is not valid msgpack ({_one_line(exc)})") from None
    except (ValueError, TypeError, OverflowError, RecursionError, msgpack.UnpackException) as exc:
        raise Damage(f"payload is not valid msgpack ({_one_line(exc)})") from None
    found: dict[str, object] = {}
    for name, (start, end) in spans.items():
        try:
            found[name] = decode(payload[start:end])
        except Damage as damage:
            raise Damage(damage.what.replace("(payload", f"(payload[{name!r}]", 1)) from None
    return found


def decode_blob(key: bytes, payload: bytes) -> str:
    """A blob payload: a str whose sha256 is the key it is stored under."""
    value = decode(payload)
    if not isinstance(value, str):
        raise Damage(f"blob payload is a {type(value).__name__}, not a str")
    if blob_key(value) != key:
        raise Damage("blob text does not match its sha256 key")
    return value
