"""Framing: the byte layout of a cassette (docs/cassette-format.md describes it byte by byte).

A cassette is the magic followed by frames: one header frame, then blob and exchange frames,
appended and never rewritten. Each frame is ``marker kind length key | payload | crc32``; the
CRC covers everything after the marker. Checking a frame never decodes its payload, so that
opening a large cassette costs only a walk over frame headers and checksums.
"""

from __future__ import annotations

import importlib.metadata
import mmap
import struct
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import TypeAlias

import msgpack

from offline_scorer.cassette.store.codec import blob_key, decode, pack
from offline_scorer.cassette.store.errors import CassetteFormatError, Damage
from offline_scorer.formats import CASSETTE_FORMAT

__all__ = [
    "HEADER_OFFSET",
    "KIND_BLOB",
    "KIND_EXCHANGE",
    "KIND_HEADER",
    "MAGIC",
    "MARKER",
    "MAX_PAYLOAD",
    "NO_HEADER",
    "OVERHEAD",
    "Buffer",
    "check_magic",
    "claimed_length",
    "decode_header",
    "default_writer",
    "encode_blob",
    "encode_exchange",
    "encode_header",
    "frame",
    "parse_frame",
    "payload_of",
    "read_header",
]

MAGIC = b"OSCAS\x00\r\n"
"""File signature; the NUL and CR LF catch text-mode and transfer mangling early."""
MARKER = b"\xabREC"
"""Start of every frame; lets repair find the next frame after damaged bytes."""
MAX_PAYLOAD = 16 * 1024 * 1024
"""Upper bound on a payload, so a damaged length field can never make a reader allocate more."""

KIND_HEADER = b"H"
KIND_BLOB = b"B"
KIND_EXCHANGE = b"X"
_KINDS = frozenset((KIND_HEADER, KIND_BLOB, KIND_EXCHANGE))
_ZERO_KEY = bytes(32)

# marker(4) kind(1) length(4) key(32) | payload(length) | crc(4)
_HEAD = struct.Struct(">4scI32s")
_LENGTH = struct.Struct(">I")
_CRC = struct.Struct(">I")
_HEAD_SIZE = _HEAD.size  # 41
_LENGTH_AT = len(MARKER) + 1
OVERHEAD = _HEAD_SIZE + _CRC.size  # 45 bytes of framing around every payload
HEADER_OFFSET = len(MAGIC)
"""Where the header frame starts."""
NO_HEADER = "the header frame is missing"

Buffer: TypeAlias = bytes | mmap.mmap
"""Frames are read from whole-file memory maps or from bytes read at an offset."""


def frame(kind: bytes, key: bytes, payload: bytes) -> bytes:
    """One complete frame around an already packed payload."""
    if len(payload) > MAX_PAYLOAD:
        raise ValueError(f"payload of {len(payload)} bytes exceeds the {MAX_PAYLOAD}-byte limit")
    body = kind + _LENGTH.pack(len(payload)) + key + payload
    return MARKER + body + _CRC.pack(zlib.crc32(body))


def default_writer() -> str:
    """The writer string recorded in new cassettes: who wrote it, for later forensics."""
    try:
        version = importlib.metadata.version("offline-scorer")
    except importlib.metadata.PackageNotFoundError:
        version = "dev"
    return f"offline-scorer/{version} msgpack/{'.'.join(map(str, msgpack.version))}"


def encode_header(writer: str, recipe: Mapping[str, object] | None = None) -> bytes:
    """Magic plus header frame: the complete content of a new, empty cassette.

    `recipe`, when given, is the run that creates the file (an opaque map here: the assembly
    layer gives it its shape), so a replay can take the model and options from the file."""
    if not isinstance(writer, str):
        raise TypeError("writer must be a str")
    header: dict[str, object] = {"format": CASSETTE_FORMAT, "writer": writer}
    if recipe is not None:
        header["recipe"] = dict(recipe)
    return MAGIC + frame(KIND_HEADER, _ZERO_KEY, pack(header))


def encode_blob(text: str) -> bytes:
    """One blob frame (exported so tools and benchmarks can build files in bulk)."""
    return frame(KIND_BLOB, blob_key(text), pack(text))


def encode_exchange(key: bytes, payload: Mapping[str, object]) -> bytes:
    """One exchange frame; validates the key and the payload types before anything is written."""
    if not isinstance(key, bytes) or len(key) != 32:
        raise ValueError("exchange key must be 32 bytes (a sha256 digest)")
    if not isinstance(payload, dict):
        raise TypeError(f"exchange payload must be a dict, not {type(payload).__name__}")
    return frame(KIND_EXCHANGE, key, pack(payload))


def parse_frame(buf: Buffer, pos: int, size: int) -> tuple[bytes, bytes, int]:
    """Check framing and CRC of the frame at `pos` (no decoding); return kind, key, length."""
    if size - pos < _HEAD_SIZE:
        raise Damage(f"truncated frame (the file ends {size - pos} bytes into a frame header)")
    marker, kind, length, key = _HEAD.unpack_from(buf, pos)
    if marker != MARKER:
        raise Damage("no frame marker")
    if kind not in _KINDS:
        raise Damage(f"unknown frame kind {kind!r}")
    if length > MAX_PAYLOAD:
        raise Damage(f"payload length {length} exceeds the {MAX_PAYLOAD}-byte limit")
    end = pos + OVERHEAD + length
    if end > size:
        present, needed = size - pos, OVERHEAD + length
        raise Damage(f"truncated frame (the file ends {present} bytes into a frame of {needed})")
    (crc,) = _CRC.unpack_from(buf, end - _CRC.size)
    if zlib.crc32(memoryview(buf)[pos + len(MARKER) : end - _CRC.size]) != crc:
        raise Damage("checksum mismatch")
    return kind, key, length


def claimed_length(buf: Buffer, pos: int, size: int) -> int:
    """The payload length a (possibly damaged) frame at `pos` claims; 0 if it is cut off."""
    end = pos + _LENGTH_AT + _LENGTH.size
    return _LENGTH.unpack(buf[pos + _LENGTH_AT : end])[0] if end <= size else 0


def payload_of(buf: Buffer, pos: int, length: int) -> bytes:
    """The payload bytes of the frame at `pos`, whose framing has been checked."""
    return buf[pos + _HEAD_SIZE : pos + _HEAD_SIZE + length]


def check_magic(path: Path, buf: Buffer) -> None:
    """CassetteFormatError unless `buf` starts like a cassette."""
    if len(buf) == 0:
        raise CassetteFormatError(path, "not a cassette (the file is empty)")
    if buf[: len(MAGIC)] != MAGIC:
        raise CassetteFormatError(path, "not a cassette (it does not start with the OSCAS magic)")


def decode_header(
    path: Path, kind: bytes, key: bytes, payload: bytes
) -> tuple[int, str, dict[str, object] | None]:
    """Format version, writer and recipe (None: the file has none) of an intact header frame.

    Damage if it is not a valid header; CassetteFormatError if it is one from another version,
    since then nothing after it can be read.
    """
    if kind != KIND_HEADER:
        raise Damage(f"first frame is of kind {kind!r}, not a header")
    if key != _ZERO_KEY:
        raise Damage("header key is not zero")
    header = decode(payload)
    if not isinstance(header, dict):
        raise Damage("header payload is not a map")
    version = header.get("format")
    if not isinstance(version, int) or isinstance(version, bool):
        raise Damage("header has no integer 'format'")
    if version != CASSETTE_FORMAT:
        raise CassetteFormatError(
            path,
            f"unsupported cassette format version {version} "
            f"(this offline-scorer reads version {CASSETTE_FORMAT}; upgrade it)",
        )
    writer = header.get("writer")
    if not isinstance(writer, str):
        raise Damage("header has no str 'writer'")
    recipe = header.get("recipe")
    if recipe is not None and not isinstance(recipe, dict):
        raise Damage("header 'recipe' is not a map")
    return version, writer, recipe


def read_header(
    path: Path, buf: Buffer, size: int
) -> tuple[int, str, dict[str, object] | None, int]:
    """Version, writer, recipe and end offset of the header frame; Damage if it is not
    intact."""
    if size <= HEADER_OFFSET:
        raise Damage(NO_HEADER)
    kind, key, length = parse_frame(buf, HEADER_OFFSET, size)
    version, writer, recipe = decode_header(path, kind, key, payload_of(buf, HEADER_OFFSET, length))
    return version, writer, recipe, HEADER_OFFSET + OVERHEAD + length
