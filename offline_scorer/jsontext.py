"""JSON text with stable bytes: the two layouts offline-scorer writes, for any JSON value.

`indented` gives exactly `json.dumps(value, ensure_ascii=False, indent=2)` (a property test
holds it to that) without the standard library's pure-Python indenting encoder, which was a
fifth of replay time. It knows no shape: every shape is serialised by dumping its model first.
"""

from __future__ import annotations

import json
import json.encoder
from typing import Any

_text = json.encoder.encode_basestring  # what json.dumps(ensure_ascii=False) uses for str
_scalar = json.JSONEncoder(ensure_ascii=False).encode


def line(value: Any) -> str:
    """Compact one-line JSON (results lines): UTF-8 text kept as is."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def indented(value: Any, depth: int = 0) -> str:
    """Two-space indented JSON, byte-identical to json.dumps(indent=2, ensure_ascii=False)."""
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, dict):
        if not value:
            return "{}"
        inner = "\n" + "  " * (depth + 1)
        items = [f"{_text(str(k))}: {indented(v, depth + 1)}" for k, v in value.items()]
        return "{" + inner + ("," + inner).join(items) + "\n" + "  " * depth + "}"
    if isinstance(value, list | tuple):
        if not value:
            return "[]"
        inner = "\n" + "  " * (depth + 1)
        return (
            "["
            + inner
            + ("," + inner).join(indented(v, depth + 1) for v in value)
            + "\n"
            + ("  " * depth)
            + "]"
        )
    return _scalar(value)
