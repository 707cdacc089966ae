"""JSON text with stable bytes: the two layouts offline-scorer writes, for any JSON value.

`indented` gives exactly `json.dumps(value, ensure_ascii=False, indent=2)` (a property test
holds it to that) without the standard library's pure-Python indenting encoder, which was a
fifth of replay time. It knows no shape: every shape is serialised by dumping its model first.

The fast path is pydantic-core's Rust encoder, which writes the same bytes except for floats
Python writes with an exponent (`1e-05`; it writes `0.00001`) and text that is not valid UTF-8
(lone surrogates, which it refuses). It runs only when the caller vouches for every number in
the value, and a refusal falls back to the pure-Python layout, so the bytes never depend on
which path ran.
"""

from __future__ import annotations

import json
import json.encoder
from collections.abc import Iterable
from typing import Any

import pydantic_core

_text = json.encoder.encode_basestring  # what json.dumps(ensure_ascii=False) uses for str
_scalar = json.JSONEncoder(ensure_ascii=False).encode


def line(value: Any) -> str:
    """Compact one-line JSON (results lines): UTF-8 text kept as is."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _scalar_or_none(value: Any) -> str | None:
    """A leaf's JSON text, or None for a container (the common leaves checked by exact type)."""
    kind = type(value)
    if kind is str:
        return _text(value)
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return int.__repr__(value)
    if kind is dict or kind is list or kind is tuple:
        return None
    return _scalar(value)  # floats (NaN and infinities as json.dumps spells them), subclasses


def _python_writes_it_plainly(number: float | int) -> bool:
    """Python's repr uses no exponent for 0 and for magnitudes in [1e-4, 1e16)."""
    return type(number) is int or number == 0 or 1e-4 <= abs(number) < 1e16


def indented(value: Any, numbers: Iterable[float | int] | None = None) -> str:
    """Two-space indented JSON, byte-identical to json.dumps(indent=2, ensure_ascii=False).

    `numbers`: every number in `value`, when the caller knows them (a model does). When all are
    written the same way by both encoders, the fast one runs.
    """
    if numbers is not None and all(_python_writes_it_plainly(n) for n in numbers):
        try:
            return pydantic_core.to_json(value, indent=2).decode("utf-8")
        except (pydantic_core.PydanticSerializationError, ValueError):
            pass
    return _indented(value)


def _indented(value: Any, depth: int = 0) -> str:
    leaf = _scalar_or_none(value)
    if leaf is not None:
        return leaf
    inner = "\n" + "  " * (depth + 1)
    if type(value) is dict:
        if not value:
            return "{}"
        items = []
        for key, item in value.items():
            text = _scalar_or_none(item)
            items.append(
                f"{_text(str(key))}: {_indented(item, depth + 1) if text is None else text}"
            )
    else:
        if not value:
            return "[]"
        items = []
        for item in value:
            text = _scalar_or_none(item)
            items.append(_indented(item, depth + 1) if text is None else text)
    close = "}" if type(value) is dict else "]"
    return (
        ("{" if close == "}" else "[")
        + inner
        + ("," + inner).join(items)
        + "\n"
        + ("  " * depth)
        + close
    )
