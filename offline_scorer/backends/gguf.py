"""The chat template a GGUF file holds, read from its metadata without llama-cpp-python.

Both backends render prompts with the template the GGUF carries, and its digest is part of
every cassette key. A replay of a model given by path (no registry pins) needs that digest,
and replay must not need the runtime: so the metadata is read here, by walking the file's
key/value section (GGUF versions 2 and 3, little-endian) up to the template's key. The tensor
data after it is never read.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import BinaryIO

__all__ = ["gguf_chat_template"]

_TEMPLATE_KEY = "tokenizer.chat_template"
_STRING = 8
_ARRAY = 9
# Sizes of the fixed-width value types, by GGUF type number (strings and arrays vary).
_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}


class _NotGGUF(Exception):
    """The bytes are not the metadata of a GGUF file this reader knows."""


def gguf_chat_template(path: Path) -> str | None:
    """The template text the GGUF at `path` holds; None when it holds none, or the file is not
    a GGUF this reader knows (the caller then falls back to what the cassette says)."""
    try:
        with path.open("rb") as handle:
            return _read_template(handle)
    except (OSError, _NotGGUF, struct.error, UnicodeDecodeError):
        return None


def _read_template(handle: BinaryIO) -> str | None:
    if handle.read(4) != b"GGUF":
        raise _NotGGUF
    version, _tensors, entries = struct.unpack("<IQQ", _exactly(handle, 20))
    if version not in (2, 3):
        raise _NotGGUF
    for _ in range(entries):
        key = _string(handle)
        kind = _unpack(handle, "<I")
        if key == _TEMPLATE_KEY:
            if kind != _STRING:
                raise _NotGGUF
            return _string(handle)
        _skip(handle, kind)
    return None


def _skip(handle: BinaryIO, kind: int) -> None:
    if kind == _STRING:
        handle.seek(_unpack(handle, "<Q"), 1)
    elif kind == _ARRAY:
        item, count = struct.unpack("<IQ", _exactly(handle, 12))
        if item in _SIZES:
            handle.seek(_SIZES[item] * count, 1)
        else:
            for _ in range(count):
                _skip(handle, item)
    elif kind in _SIZES:
        handle.seek(_SIZES[kind], 1)
    else:
        raise _NotGGUF


def _string(handle: BinaryIO) -> str:
    return _exactly(handle, _unpack(handle, "<Q")).decode("utf-8")


def _unpack(handle: BinaryIO, layout: str) -> int:
    value: int = struct.unpack(layout, _exactly(handle, struct.calcsize(layout)))[0]
    return value


def _exactly(handle: BinaryIO, size: int) -> bytes:
    if size > 1 << 30:
        raise _NotGGUF  # a damaged length: never allocate for it
    data = handle.read(size)
    if len(data) != size:
        raise _NotGGUF
    return data
