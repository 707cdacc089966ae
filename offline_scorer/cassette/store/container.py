"""The cassette container: framing, integrity, locking, repair and strict decoding.

A cassette is an append-only file of CRC-checked frames holding msgpack payloads, so that model
exchanges can be recorded once and replayed byte-identically. This module is the whole on-disk
format (docs/cassette-format.md describes it byte by byte); what the exchange maps *mean* is left
to the record/replay layer above it.

Design points, each for a reason:

* Opening only walks frame headers and checksums, never decodes payloads, so that a cassette with
  100,000 exchanges opens in well under a second; payloads are decoded lazily and strictly.
* Every byte read from disk is untrusted: any problem surfaces as a ``CassetteError`` subclass with
  a one-line message for end users, with bounded time and memory.
* Writers hold an exclusive lock for the whole append and catch up on frames other processes
  appended first, so blob deduplication and the index stay right across processes.
"""

from __future__ import annotations

import bisect
import contextlib
import errno
import hashlib
import importlib.metadata
import itertools
import mmap
import os
import secrets
import shlex
import struct
import threading
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn, Self

import msgpack
import portalocker

from offline_scorer.errors import CassetteFileError

__all__ = [
    "FORMAT_VERSION",
    "MAGIC",
    "MARKER",
    "MAX_DEPTH",
    "MAX_PAYLOAD",
    "CassetteCorruptError",
    "CassetteError",
    "CassetteFile",
    "CassetteFormatError",
    "RepairReport",
    "VerifyReport",
    "blob_key",
    "default_writer",
    "encode_blob",
    "encode_exchange",
    "encode_header",
    "repair",
    "verify",
]

MAGIC = b"OSCAS\x00\r\n"
"""File signature; the NUL and CR LF catch text-mode and transfer mangling early."""
MARKER = b"\xabREC"
"""Start of every frame; lets repair find the next frame after damaged bytes."""
FORMAT_VERSION = 1
MAX_PAYLOAD = 16 * 1024 * 1024
"""Upper bound on a payload, so a damaged length field can never make a reader allocate more."""
MAX_DEPTH = 16
"""Deepest container nesting in a payload (the top-level map is depth 1)."""
INT_MIN = -(2**63)
INT_MAX = 2**64 - 1

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
OVERHEAD = _HEAD_SIZE + _CRC.size  # 45 bytes of framing around every payload
_HEADER_OFFSET = len(MAGIC)
_O_BINARY = getattr(os, "O_BINARY", 0)  # Windows would otherwise translate line endings

# A crafted file full of fake markers could make resynchronisation checksum the same bytes again
# and again; repair gives up on the rest of the file after this much work beyond one pass.
_RESYNC_BUDGET_FACTOR = 16
_RESYNC_BUDGET_FLOOR = 64 * 1024 * 1024

_NO_HEADER = "the header frame is missing"

_Entry = tuple[bytes, int, int]
"""(key, frame offset, payload length) of one indexed frame."""


class CassetteError(CassetteFileError):
    """Base of every error this module raises for a cassette's contents or state."""


class CassetteFormatError(CassetteError):
    """The file is not a cassette, or is one in a format version this code cannot read."""

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")

    def __reduce__(self) -> tuple[type[Self], tuple[str, str]]:
        return type(self), (self.path, self.reason)


class CassetteCorruptError(CassetteError):
    """The cassette is damaged; the message says where, and how to keep the intact records."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        offset: int,
        record: int | None,
        problem: str,
        intact_records: int,
    ) -> None:
        self.path = str(path)
        self.offset = offset
        self.record = record
        self.problem = problem
        self.intact_records = intact_records
        where = "header" if record is None else f"record {record}"
        super().__init__(
            f"{self.path}: corrupt cassette at byte {offset} ({where}): {problem}; "
            f"run `offline-scorer cassette repair {shlex.quote(self.path)}` "
            f"to keep the {intact_records} intact records"
        )

    def __reduce__(self) -> tuple[type[Self], tuple[str, int, int | None, str, int]]:
        return type(self), (self.path, self.offset, self.record, self.problem, self.intact_records)


class _Damage(Exception):
    """Internal: what is wrong with the bytes at hand; callers add path, offset and counts."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


# --------------------------------------------------------------------------------------------
# Payload values, one set of type rules: writing canonicalises (`_canonical`: validated, keys
# sorted, deterministic bytes); reading validates untrusted data in place (`_check`, below
# `_decode`), because reading is the replay hot path and needs no copy.

_ALLOWED = "only None, bool, int, float, str, list and str-keyed dict"


def _canonical(value: object, depth: int, where: str) -> object:
    """Validate `value` against the payload type rules and return it with map keys sorted.

    Sorting keys makes packing deterministic whatever order the caller built the map in.
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


def _pack(value: object) -> bytes:
    """Deterministic msgpack: canonical key order, str as str, floats as float64."""
    return msgpack.packb(_canonical(value, 1, "payload"), use_bin_type=True)


def _reject_ext(code: int, data: bytes) -> NoReturn:
    raise ValueError(f"msgpack ext type {code} not allowed")


def _unique_map(pairs: list[tuple[object, object]]) -> dict[object, object]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise ValueError("duplicate map key")
    return result


def _decode(payload: bytes) -> object:
    """Strictly decode an untrusted payload; every failure becomes _Damage."""
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
        raise _Damage(f"payload is not valid msgpack ({_one_line(exc)})") from None
    try:
        _check(value, 1)
    except _TypeRule as exc:
        raise _Damage(f"payload breaks the type rules (payload{exc.where}: {exc.what})") from None
    return value


_SCALARS = frozenset({type(None), bool, int, float, str})


class _TypeRule(Exception):
    """Internal: a decoded value breaks the payload type rules; `where` grows as it propagates."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what
        self.where = ""


def _check(value: object, depth: int) -> None:
    """Enforce the payload type rules on freshly unpacked data, without copying it.

    Reading is the replay hot path, so this only walks containers: msgpack already bounds
    integers to 64 bits and the unpacker's limits bound sizes. Key order is irrelevant on read.
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


def _decode_exchange(payload: bytes) -> dict[str, object]:
    value = _decode(payload)
    if not isinstance(value, dict):
        raise _Damage(f"exchange payload is a {type(value).__name__}, not a map")
    return value


def _decode_blob(key: bytes, payload: bytes) -> str:
    value = _decode(payload)
    if not isinstance(value, str):
        raise _Damage(f"blob payload is a {type(value).__name__}, not a str")
    if blob_key(value) != key:
        raise _Damage("blob text does not match its sha256 key")
    return value


# --------------------------------------------------------------------------------------------
# Frames


def _frame(kind: bytes, key: bytes, payload: bytes) -> bytes:
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


def encode_header(writer: str) -> bytes:
    """Magic plus header frame: the complete content of a new, empty cassette."""
    if not isinstance(writer, str):
        raise TypeError("writer must be a str")
    return MAGIC + _frame(
        KIND_HEADER, _ZERO_KEY, _pack({"format": FORMAT_VERSION, "writer": writer})
    )


def blob_key(text: str) -> bytes:
    """The key a blob of `text` is stored under: sha256 of its UTF-8 bytes."""
    if not isinstance(text, str):
        raise TypeError(f"blob text must be a str, not {type(text).__name__}")
    return hashlib.sha256(text.encode("utf-8")).digest()


def encode_blob(text: str) -> bytes:
    """One blob frame (exported so tools and benchmarks can build files in bulk)."""
    return _frame(KIND_BLOB, blob_key(text), _pack(text))


def encode_exchange(key: bytes, payload: Mapping[str, object]) -> bytes:
    """One exchange frame; validates the key and the payload types before anything is written."""
    if not isinstance(key, bytes) or len(key) != 32:
        raise ValueError("exchange key must be 32 bytes (a sha256 digest)")
    if not isinstance(payload, dict):
        raise TypeError(f"exchange payload must be a dict, not {type(payload).__name__}")
    return _frame(KIND_EXCHANGE, key, _pack(payload))


def _parse_frame(buf: bytes | mmap.mmap, pos: int, size: int) -> tuple[bytes, bytes, int]:
    """Check framing and CRC of the frame at `pos` (no decoding); return kind, key, length."""
    if size - pos < _HEAD_SIZE:
        raise _Damage(f"truncated frame (the file ends {size - pos} bytes into a frame header)")
    marker, kind, length, key = _HEAD.unpack_from(buf, pos)
    if marker != MARKER:
        raise _Damage("no frame marker")
    if kind not in _KINDS:
        raise _Damage(f"unknown frame kind {kind!r}")
    if length > MAX_PAYLOAD:
        raise _Damage(f"payload length {length} exceeds the {MAX_PAYLOAD}-byte limit")
    end = pos + OVERHEAD + length
    if end > size:
        present, needed = size - pos, OVERHEAD + length
        raise _Damage(f"truncated frame (the file ends {present} bytes into a frame of {needed})")
    (crc,) = _CRC.unpack_from(buf, end - _CRC.size)
    if zlib.crc32(memoryview(buf)[pos + len(MARKER) : end - _CRC.size]) != crc:
        raise _Damage("checksum mismatch")
    return kind, key, length


def _payload_of(buf: bytes | mmap.mmap, pos: int, length: int) -> bytes:
    return buf[pos + _HEAD_SIZE : pos + _HEAD_SIZE + length]


def _check_magic(path: Path, buf: bytes | mmap.mmap) -> None:
    if len(buf) == 0:
        raise CassetteFormatError(path, "not a cassette (the file is empty)")
    if buf[: len(MAGIC)] != MAGIC:
        raise CassetteFormatError(path, "not a cassette (it does not start with the OSCAS magic)")


def _decode_header(path: Path, kind: bytes, key: bytes, payload: bytes) -> tuple[int, str]:
    if kind != KIND_HEADER:
        raise _Damage(f"first frame is of kind {kind!r}, not a header")
    if key != _ZERO_KEY:
        raise _Damage("header key is not zero")
    header = _decode(payload)
    if not isinstance(header, dict):
        raise _Damage("header payload is not a map")
    version = header.get("format")
    if not isinstance(version, int) or isinstance(version, bool):
        raise _Damage("header has no integer 'format'")
    if version != FORMAT_VERSION:
        raise CassetteFormatError(
            path,
            f"unsupported cassette format version {version} "
            f"(this offline-scorer reads version {FORMAT_VERSION}; upgrade it)",
        )
    writer = header.get("writer")
    if not isinstance(writer, str):
        raise _Damage("header has no str 'writer'")
    return version, writer


def _read_header(path: Path, buf: bytes | mmap.mmap, size: int) -> tuple[int, str, int]:
    """Version, writer and end offset of the header frame; _Damage if it is not intact."""
    if size <= _HEADER_OFFSET:
        raise _Damage(_NO_HEADER)
    kind, key, length = _parse_frame(buf, _HEADER_OFFSET, size)
    version, writer = _decode_header(path, kind, key, _payload_of(buf, _HEADER_OFFSET, length))
    return version, writer, _HEADER_OFFSET + OVERHEAD + length


def _check_record(kind: bytes, key: bytes, payload: bytes) -> None:
    """Strict content check of a record frame whose framing is already known to be intact."""
    if kind == KIND_EXCHANGE:
        _decode_exchange(payload)
    elif kind == KIND_BLOB:
        _decode_blob(key, payload)
    else:
        raise _Damage("unexpected second header frame")


# --------------------------------------------------------------------------------------------
# Salvage: the full strict scan behind verify, repair and the counts in error messages.


@dataclass
class _Salvage:
    header: bytes | None
    """The intact header frame's bytes, or None when it is damaged."""
    format_version: int | None
    writer: str | None
    kept: list[tuple[int, int, bytes, bytes]]
    """(offset, end, kind, key) of every record frame that is intact, in file order."""
    framed: list[int]
    """Offsets of every record frame whose framing is intact (content may still be bad)."""
    damaged: list[tuple[int, int, str]]
    """(start, end, what) of every damaged byte range, in file order."""


def _resync(buf: bytes | mmap.mmap, pos: int, size: int, budget: list[int]) -> int:
    """Offset of the next frame with intact framing at or after `pos`, or `size`."""
    while budget[0] > 0:
        pos = buf.find(MARKER, pos, size)
        if pos < 0:
            break
        try:
            _parse_frame(buf, pos, size)
        except _Damage:
            claimed = _LENGTH.unpack(buf[pos + 5 : pos + 9])[0] if size - pos >= 9 else 0
            checksummed = claimed if pos + OVERHEAD + claimed <= size else 0
            budget[0] -= OVERHEAD + checksummed
            pos += 1
        else:
            return pos
    return size


def _salvage(path: Path, buf: bytes | mmap.mmap) -> _Salvage:
    """Walk the whole file, resynchronising after damage, and decode every frame strictly."""
    _check_magic(path, buf)
    size = len(buf)
    budget = [_RESYNC_BUDGET_FACTOR * size + _RESYNC_BUDGET_FLOOR]
    scan = _Salvage(None, None, None, [], [], [])
    pos = _HEADER_OFFSET
    while pos < size:
        try:
            kind, key, length = _parse_frame(buf, pos, size)
        except _Damage as damage:
            nxt = _resync(buf, pos + 1, size, budget)
            scan.damaged.append((pos, nxt, damage.what))
            pos = nxt
            continue
        end = pos + OVERHEAD + length
        payload = _payload_of(buf, pos, length)
        try:
            if pos == _HEADER_OFFSET and kind == KIND_HEADER:
                scan.format_version, scan.writer = _decode_header(path, kind, key, payload)
                scan.header = bytes(buf[pos:end])
            else:
                if pos == _HEADER_OFFSET:  # header lost, but this record is intact: keep it
                    scan.damaged.append(
                        (pos, pos, f"first frame is of kind {kind!r}, not a header")
                    )
                scan.framed.append(pos)
                _check_record(kind, key, payload)
                scan.kept.append((pos, end, kind, key))
        except _Damage as damage:
            scan.damaged.append((pos, end, damage.what))
        pos = end
    if size <= _HEADER_OFFSET:
        scan.damaged.append((size, size, _NO_HEADER))
    return scan


def _error_at(path: Path, scan: _Salvage, offset: int, what: str) -> CassetteCorruptError:
    """The user-facing error for a problem at `offset`, counting what repair would keep."""
    record = None if offset <= _HEADER_OFFSET else bisect.bisect_left(scan.framed, offset)
    return CassetteCorruptError(path, offset, record, what, len(scan.kept))


def _corruption(path: Path, buf: bytes | mmap.mmap, offset: int, what: str) -> CassetteCorruptError:
    return _error_at(path, _salvage(path, buf), offset, what)


# --------------------------------------------------------------------------------------------
# Low-level file helpers


@contextlib.contextmanager
def _locked(fd: int, *, exclusive: bool) -> Iterator[None]:
    portalocker.lock(
        fd, portalocker.LockFlags.EXCLUSIVE if exclusive else portalocker.LockFlags.SHARED
    )
    try:
        yield
    finally:
        portalocker.unlock(fd)


@contextlib.contextmanager
def _mapped(fd: int) -> Iterator[bytes | mmap.mmap]:
    """The whole file as a buffer without copying it into memory (empty files cannot be mapped)."""
    if os.fstat(fd).st_size == 0:
        yield b""
        return
    with mmap.mmap(fd, 0, access=mmap.ACCESS_READ) as buf:
        yield buf


def _pread(fd: int, size: int, offset: int) -> bytes:
    if hasattr(os, "pread"):
        return os.pread(fd, size, offset)
    os.lseek(fd, offset, os.SEEK_SET)  # pragma: no cover - Windows has no pread
    return os.read(fd, size)  # pragma: no cover


def _fsync_dir(directory: Path) -> None:
    """Make a rename or link durable; only POSIX can open a directory for this."""
    if os.name != "posix":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _temp_file(target: Path, chunks: Iterable[bytes]) -> Path:
    """Write `chunks` to a fresh, fsynced sibling of `target`; the caller links or renames it."""
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_BINARY, 0o666)
    try:
        with os.fdopen(fd, "wb") as out:
            for chunk in chunks:
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def _create(path: Path, writer: str) -> None:
    """Create a cassette holding only its header, unless one already exists.

    Hard-linking a complete temp file into place fails if the name exists, so two processes
    creating at once cannot both write a header and no reader ever sees a half-written one.
    """
    tmp = _temp_file(path, [encode_header(writer)])
    try:
        try:
            os.link(tmp, path)
        except FileExistsError:
            return
        except OSError:
            # No hard links on this filesystem: O_EXCL still guarantees a single header.
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_BINARY, 0o666)
            except FileExistsError:
                return
            try:
                os.write(fd, tmp.read_bytes())
                os.fsync(fd)
            finally:
                os.close(fd)
    finally:
        tmp.unlink(missing_ok=True)
    _fsync_dir(path.parent)


def _write_frame(fd: int, frame: bytes, offset: int) -> None:
    """Append one frame durably; on failure cut the file back so no torn frame is left."""
    view = memoryview(frame)
    written = 0
    try:
        while written < len(frame):
            written += os.write(fd, view[written:])
        os.fsync(fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, offset)
        raise


# --------------------------------------------------------------------------------------------
# The cassette file


class CassetteFile:
    """An open cassette: an index of its frames plus lazy, strict access and durable appends.

    Use as a context manager (or call ``close()``): the handle keeps the file open so lookups read
    the same file that was indexed, even if ``repair`` later replaces it.
    """

    def __init__(
        self, path: str | os.PathLike[str], *, create: bool, writer: str | None = None
    ) -> None:
        """Open `path`; with ``create=True`` make a new empty cassette first if it is missing.

        Raises FileNotFoundError, CassetteFormatError or CassetteCorruptError.
        """
        self._path = Path(path)
        if create and not self._path.exists():
            _create(self._path, default_writer() if writer is None else writer)
        try:
            self._fd = os.open(self._path, os.O_RDWR | os.O_APPEND | _O_BINARY)
            self._writable = True
        except OSError as exc:
            if exc.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
                raise
            self._fd = os.open(self._path, os.O_RDONLY | _O_BINARY)
            self._writable = False
        self._lock = threading.RLock()
        self._exchanges: dict[bytes, _Entry] = {}
        self._blobs: dict[bytes, _Entry] = {}
        self._log: list[_Entry] = []
        self._records = 0
        self._end = 0
        self._format_version = 0
        self._writer = ""
        try:
            with _locked(self._fd, exclusive=False), _mapped(self._fd) as buf:
                _check_magic(self._path, buf)
                try:
                    self._format_version, self._writer, self._end = _read_header(
                        self._path, buf, len(buf)
                    )
                except _Damage as damage:
                    raise _corruption(self._path, buf, _HEADER_OFFSET, damage.what) from None
                self._index(buf)
        except BaseException:
            os.close(self._fd)
            raise

    @classmethod
    def open(
        cls, path: str | os.PathLike[str], *, create: bool, writer: str | None = None
    ) -> CassetteFile:
        """Same as the constructor; reads better at call sites."""
        return cls(path, create=create, writer=writer)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the file descriptor; the handle is unusable afterwards."""
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1

    # -- properties

    @property
    def path(self) -> Path:
        return self._path

    @property
    def format_version(self) -> int:
        return self._format_version

    @property
    def writer(self) -> str:
        """Who created the file (from its header)."""
        return self._writer

    @property
    def exchange_count(self) -> int:
        """Distinct exchange keys; a re-recorded exchange counts once."""
        return len(self._exchanges)

    @property
    def blob_count(self) -> int:
        return len(self._blobs)

    @property
    def size_bytes(self) -> int:
        """Bytes of the file this handle has indexed (grows with appends and refresh)."""
        return self._end

    # -- indexing

    def _index(self, buf: bytes | mmap.mmap) -> int:
        """Index frames from self._end to the end of `buf` without decoding; return how many."""
        size = len(buf)
        pos = self._end
        exchanges, blobs, log = self._exchanges, self._blobs, self._log
        start_records = records = self._records
        try:
            while pos < size:
                kind, key, length = _parse_frame(buf, pos, size)
                entry = (key, pos, length)
                if kind == KIND_EXCHANGE:
                    exchanges[key] = entry
                    log.append(entry)
                elif kind == KIND_BLOB:
                    blobs.setdefault(key, entry)
                else:
                    raise _Damage("unexpected second header frame")
                pos += OVERHEAD + length
                records += 1
        except _Damage as damage:
            raise _corruption(self._path, buf, pos, damage.what) from None
        finally:
            self._records = records
            self._end = pos
        return records - start_records

    def _catch_up(self) -> int:
        """Index frames other handles appended since we last read; caller holds the file lock."""
        fd = self._require_open()
        here = os.fstat(fd)
        try:
            there = os.stat(self._path)
        except FileNotFoundError:
            there = None
        if there is None or (there.st_dev, there.st_ino) != (here.st_dev, here.st_ino):
            raise CassetteError(
                f"{self._path}: the file was replaced or removed after it was opened "
                "(by `offline-scorer cassette repair`?); open it again"
            )
        with _mapped(fd) as buf:
            if len(buf) < self._end:
                raise _corruption(
                    self._path, buf, len(buf), f"file shrank from {self._end} to {len(buf)} bytes"
                )
            return self._index(buf)

    def refresh(self) -> int:
        """Pick up records other processes appended since this handle read; return how many."""
        with self._lock, _locked(self._require_open(), exclusive=False):
            return self._catch_up()

    # -- reading

    def _require_open(self) -> int:
        if self._fd < 0:
            raise ValueError(f"{self._path}: cassette handle is closed")
        return self._fd

    def _corrupt(self, offset: int, what: str) -> CassetteCorruptError:
        with _mapped(self._require_open()) as buf:
            return _corruption(self._path, buf, offset, what)

    def _payload(self, entry: _Entry, kind: bytes) -> bytes:
        """Re-read one indexed frame, re-checking its CRC in case the file changed since."""
        key, offset, length = entry
        frame = _pread(self._require_open(), OVERHEAD + length, offset)
        try:
            got_kind, got_key, got_length = _parse_frame(frame, 0, len(frame))
            if (got_kind, got_key, got_length) != (kind, key, length):
                raise _Damage("frame changed since the file was opened")
        except _Damage as damage:
            raise self._corrupt(offset, damage.what) from None
        return _payload_of(frame, 0, length)

    def _exchange(self, entry: _Entry) -> dict[str, object]:
        try:
            return _decode_exchange(self._payload(entry, KIND_EXCHANGE))
        except _Damage as damage:
            raise self._corrupt(entry[1], damage.what) from None

    def get_exchange(self, key: bytes) -> dict[str, object] | None:
        """The latest exchange recorded under `key`, or None if there is none."""
        entry = self._exchanges.get(key)
        return None if entry is None else self._exchange(entry)

    def iter_exchanges(self) -> Iterator[tuple[bytes, dict[str, object]]]:
        """Every exchange in file order, superseded ones included, as (key, map)."""
        for entry in list(self._log):
            yield entry[0], self._exchange(entry)

    def has_blob(self, key: bytes) -> bool:
        return key in self._blobs

    def get_blob(self, key: bytes) -> str:
        """The text stored under a blob key; KeyError if the cassette has no such blob."""
        entry = self._blobs.get(key)
        if entry is None:
            raise KeyError(f"{self._path}: no blob {key.hex()}")
        try:
            return _decode_blob(key, self._payload(entry, KIND_BLOB))
        except _Damage as damage:
            raise self._corrupt(entry[1], damage.what) from None

    def blob_text(self, key: bytes | str) -> str:
        """Like get_blob, also accepting the hex form exchanges use to reference blobs."""
        if isinstance(key, str):
            try:
                key = bytes.fromhex(key)
            except ValueError:
                raise KeyError(f"{self._path}: {key!r} is not a hex blob key") from None
        return self.get_blob(key)

    # -- appending

    @contextlib.contextmanager
    def _appending(self) -> Iterator[None]:
        """Exclusive lock, caught up with other writers; refuses to write after damage."""
        fd = self._require_open()
        if not self._writable:
            raise CassetteError(f"{self._path}: opened read-only (no write permission)")
        with self._lock, _locked(fd, exclusive=True):
            self._catch_up()
            yield

    def _append(self, kind: bytes, key: bytes, frame: bytes) -> None:
        offset = self._end
        _write_frame(self._fd, frame, offset)
        entry = (key, offset, len(frame) - OVERHEAD)
        if kind == KIND_EXCHANGE:
            self._exchanges[key] = entry
            self._log.append(entry)
        else:
            self._blobs.setdefault(key, entry)
        self._end = offset + len(frame)
        self._records += 1

    def append_blob(self, text: str) -> bytes:
        """Store `text` once and return its key; a no-op when the cassette already has it."""
        key = blob_key(text)
        if key not in self._blobs:
            frame = encode_blob(text)
            with self._appending():
                if key not in self._blobs:
                    self._append(KIND_BLOB, key, frame)
        return key

    def append_exchange(self, key: bytes, payload: Mapping[str, object]) -> None:
        """Record an exchange; it supersedes any earlier one with the same key for lookup."""
        frame = encode_exchange(key, payload)
        with self._appending():
            self._append(KIND_EXCHANGE, key, frame)


# --------------------------------------------------------------------------------------------
# Verify and repair


@dataclass(frozen=True)
class VerifyReport:
    """What a full strict check of a cassette found."""

    path: Path
    size_bytes: int
    format_version: int | None
    writer: str | None
    records: int
    """Intact record frames (what repair would keep)."""
    exchange_records: int
    exchanges: int
    """Distinct exchange keys among the intact records."""
    blob_records: int
    blobs: int
    damaged_ranges: int
    damaged_bytes: int
    problem: str | None
    """The first problem, as the one-line message a reader would raise; None when intact."""

    @property
    def ok(self) -> bool:
        return self.problem is None


@dataclass(frozen=True)
class RepairReport:
    """What repair kept and dropped."""

    path: Path
    backup_path: Path | None
    """Where the original was saved; None when the file was intact and left untouched."""
    kept_records: int
    kept_bytes: int
    dropped_ranges: int
    dropped_bytes: int

    @property
    def changed(self) -> bool:
        return self.backup_path is not None


def verify(path: str | os.PathLike[str]) -> VerifyReport:
    """Check every frame and decode every payload strictly.

    Damage is reported, not raised; CassetteFormatError is raised for files that are not
    cassettes or use an unsupported format version, since nothing meaningful can be counted.
    """
    path = Path(path)
    fd = os.open(path, os.O_RDONLY | _O_BINARY)
    try:
        with _locked(fd, exclusive=False), _mapped(fd) as buf:
            scan = _salvage(path, buf)
            size = len(buf)
    finally:
        os.close(fd)
    kinds = [kind for _, _, kind, _ in scan.kept]
    first = scan.damaged[0] if scan.damaged else None
    return VerifyReport(
        path=path,
        size_bytes=size,
        format_version=scan.format_version,
        writer=scan.writer,
        records=len(scan.kept),
        exchange_records=kinds.count(KIND_EXCHANGE),
        exchanges=len({key for _, _, kind, key in scan.kept if kind == KIND_EXCHANGE}),
        blob_records=kinds.count(KIND_BLOB),
        blobs=len({key for _, _, kind, key in scan.kept if kind == KIND_BLOB}),
        damaged_ranges=len(scan.damaged),
        damaged_bytes=sum(end - start for start, end, _ in scan.damaged),
        problem=str(_error_at(path, scan, first[0], first[2])) if first else None,
    )


def repair(path: str | os.PathLike[str]) -> RepairReport:
    """Rewrite a damaged cassette with every intact frame, keeping the original as PATH.bak.

    Frames after a damaged stretch are kept too: the scan resynchronises on the next marker
    whose frame checks out. A damaged header is replaced by a fresh one. The rewrite is atomic
    (temp file, fsync, rename) and happens under the exclusive lock, so no append is lost; open
    handles notice the replacement on their next append. An intact file is left untouched.
    """
    path = Path(path)
    fd = os.open(path, os.O_RDWR | _O_BINARY)
    try:
        with _locked(fd, exclusive=True), _mapped(fd) as buf:
            scan = _salvage(path, buf)
            kept_records = len(scan.kept)
            if not scan.damaged:
                return RepairReport(path, None, kept_records, len(buf), 0, 0)
            header = scan.header or encode_header(default_writer())[len(MAGIC) :]
            kept_bytes = (
                len(MAGIC) + len(header) + sum(end - start for start, end, _, _ in scan.kept)
            )
            backup = path.with_name(path.name + ".bak")
            step = 1 << 24
            original = (buf[i : i + step] for i in range(0, len(buf), step))
            os.replace(_temp_file(backup, original), backup)
            kept = (buf[start:end] for start, end, _, _ in scan.kept)
            os.replace(_temp_file(path, itertools.chain((MAGIC, header), kept)), path)
            _fsync_dir(path.parent)
            dropped = sum(end - start for start, end, _ in scan.damaged)
            return RepairReport(path, backup, kept_records, kept_bytes, len(scan.damaged), dropped)
    finally:
        os.close(fd)
