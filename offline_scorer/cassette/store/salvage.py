"""Salvage: the full strict scan behind `verify`, `repair` and the counts in error messages.

Unlike opening, which stops at the first damaged frame, the scan resynchronises on the next
marker whose frame checks out, so everything intact after a damaged stretch is counted (and kept
by repair). Every error message can then tell the user how many records repair would keep.
"""

from __future__ import annotations

import bisect
import itertools
import os
from dataclasses import dataclass
from pathlib import Path

from offline_scorer.cassette.store.codec import decode_blob, decode_exchange
from offline_scorer.cassette.store.errors import CassetteCorruptError, Damage
from offline_scorer.cassette.store.frames import (
    HEADER_OFFSET,
    KIND_BLOB,
    KIND_EXCHANGE,
    KIND_HEADER,
    MAGIC,
    MARKER,
    NO_HEADER,
    OVERHEAD,
    Buffer,
    check_magic,
    claimed_length,
    decode_header,
    default_writer,
    encode_header,
    parse_frame,
    payload_of,
)
from offline_scorer.cassette.store.fs import O_BINARY, fsync_dir, locked, mapped
from offline_scorer.files import temp_sibling

__all__ = ["RepairReport", "VerifyReport", "corruption", "repair", "verify"]

# A crafted file full of fake markers could make resynchronisation checksum the same bytes again
# and again; the scan gives up on the rest of the file after this much work beyond one pass.
_RESYNC_BUDGET_FACTOR = 16
_RESYNC_BUDGET_FLOOR = 64 * 1024 * 1024


@dataclass
class _Scan:
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


def _check_record(kind: bytes, key: bytes, payload: bytes) -> None:
    """Strict content check of a record frame whose framing is already known to be intact."""
    if kind == KIND_EXCHANGE:
        decode_exchange(payload)
    elif kind == KIND_BLOB:
        decode_blob(key, payload)
    else:
        raise Damage("unexpected second header frame")


def _resync(buf: Buffer, pos: int, size: int, budget: list[int]) -> int:
    """Offset of the next frame with intact framing at or after `pos`, or `size`."""
    while budget[0] > 0:
        pos = buf.find(MARKER, pos, size)
        if pos < 0:
            break
        try:
            parse_frame(buf, pos, size)
        except Damage:
            claimed = claimed_length(buf, pos, size)
            checksummed = claimed if pos + OVERHEAD + claimed <= size else 0
            budget[0] -= OVERHEAD + checksummed
            pos += 1
        else:
            return pos
    return size


def _scan(path: Path, buf: Buffer) -> _Scan:
    """Walk the whole file, resynchronising after damage, and decode every frame strictly."""
    check_magic(path, buf)
    size = len(buf)
    budget = [_RESYNC_BUDGET_FACTOR * size + _RESYNC_BUDGET_FLOOR]
    scan = _Scan(None, None, None, [], [], [])
    pos = HEADER_OFFSET
    while pos < size:
        try:
            kind, key, length = parse_frame(buf, pos, size)
        except Damage as damage:
            nxt = _resync(buf, pos + 1, size, budget)
            scan.damaged.append((pos, nxt, damage.what))
            pos = nxt
            continue
        end = pos + OVERHEAD + length
        payload = payload_of(buf, pos, length)
        try:
            if pos == HEADER_OFFSET and kind == KIND_HEADER:
                scan.format_version, scan.writer, _recipe = decode_header(path, kind, key, payload)
                scan.header = bytes(buf[pos:end])
            else:
                if pos == HEADER_OFFSET:  # header lost, but this record is intact: keep it
                    scan.damaged.append(
                        (pos, pos, f"first frame is of kind {kind!r}, not a header")
                    )
                scan.framed.append(pos)
                _check_record(kind, key, payload)
                scan.kept.append((pos, end, kind, key))
        except Damage as damage:
            scan.damaged.append((pos, end, damage.what))
        pos = end
    if size <= HEADER_OFFSET:
        scan.damaged.append((size, size, NO_HEADER))
    return scan


def _error_at(path: Path, scan: _Scan, offset: int, what: str) -> CassetteCorruptError:
    """The user-facing error for a problem at `offset`, counting what repair would keep."""
    record = None if offset <= HEADER_OFFSET else bisect.bisect_left(scan.framed, offset)
    return CassetteCorruptError(path, offset, record, what, len(scan.kept))


def corruption(path: Path, buf: Buffer, offset: int, what: str) -> CassetteCorruptError:
    """The error to raise for damage found at `offset` of the file mapped as `buf`."""
    return _error_at(path, _scan(path, buf), offset, what)


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
    fd = os.open(path, os.O_RDONLY | O_BINARY)
    try:
        with locked(fd, exclusive=False), mapped(fd) as buf:
            scan = _scan(path, buf)
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

    Frames after a damaged stretch are kept too. A damaged header is replaced by a fresh one.
    The rewrite is atomic (temp file, fsync, rename) and happens under the exclusive lock, so no
    append is lost; open handles notice the replacement on their next append. An intact file is
    left untouched.
    """
    path = Path(path)
    fd = os.open(path, os.O_RDWR | O_BINARY)
    try:
        with locked(fd, exclusive=True), mapped(fd) as buf:
            scan = _scan(path, buf)
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
            os.replace(temp_sibling(backup, original), backup)
            kept = (buf[start:end] for start, end, _, _ in scan.kept)
            os.replace(temp_sibling(path, itertools.chain((MAGIC, header), kept)), path)
            fsync_dir(path.parent)
            dropped = sum(end - start for start, end, _ in scan.damaged)
            return RepairReport(path, backup, kept_records, kept_bytes, len(scan.damaged), dropped)
    finally:
        os.close(fd)
