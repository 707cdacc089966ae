"""`CassetteFile`: an open cassette, its index, lazy strict reads and locked, durable appends.

* Opening only walks frame headers and checksums, never decodes payloads, so a cassette with
  100,000 exchanges opens in well under a second; payloads are decoded lazily and strictly.
* Every byte read from disk is untrusted: any problem surfaces as a ``CassetteError`` subclass
  with a one-line message, in bounded time and memory.
* Writers hold an exclusive lock for the whole append and first catch up on frames other
  processes appended, so blob deduplication and the index stay right across processes.
"""

from __future__ import annotations

import contextlib
import errno
import os
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Self

from offline_scorer.cassette.store.codec import (
    blob_key,
    decode_blob,
    decode_exchange,
    decode_exchange_fields,
)
from offline_scorer.cassette.store.errors import CassetteCorruptError, CassetteError, Damage
from offline_scorer.cassette.store.frames import (
    HEADER_OFFSET,
    KIND_BLOB,
    KIND_EXCHANGE,
    OVERHEAD,
    Buffer,
    check_magic,
    default_writer,
    encode_blob,
    encode_exchange,
    parse_frame,
    payload_of,
    read_header,
)
from offline_scorer.cassette.store.fs import (
    O_BINARY,
    create_cassette,
    locked,
    mapped,
    pread,
    write_frame,
)
from offline_scorer.cassette.store.salvage import corruption

__all__ = ["CassetteFile"]

_Entry = tuple[bytes, int, int]  # (key, frame offset, payload length) of one indexed frame
REPLAYED_KEPT = 4096
"""Decoded replay reads kept per open cassette (see `get_exchange_fields`)."""


class CassetteFile:
    """An open cassette: an index of its frames plus lazy, strict access and durable appends.

    Use as a context manager (or call ``close()``): the handle keeps the file open so lookups read
    the same file that was indexed, even if ``repair`` later replaces it.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        create: bool,
        writer: str | None = None,
        recipe: Mapping[str, object] | None = None,
    ) -> None:
        """Open `path`; with ``create=True`` make a new empty cassette first if it is missing,
        its header holding `recipe` (the run that creates it) when one is given.

        Raises FileNotFoundError, CassetteFormatError or CassetteCorruptError.
        """
        self._path = Path(path)
        if create and not self._path.exists():
            create_cassette(self._path, default_writer() if writer is None else writer, recipe)
        try:
            self._fd = os.open(self._path, os.O_RDWR | os.O_APPEND | O_BINARY)
            self._writable = True
        except OSError as exc:
            if exc.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
                raise
            self._fd = os.open(self._path, os.O_RDONLY | O_BINARY)
            self._writable = False
        self._lock = threading.RLock()
        self._exchanges: dict[bytes, _Entry] = {}
        self._blobs: dict[bytes, _Entry] = {}
        self._log: list[_Entry] = []
        self._replayed: dict[tuple[int, tuple[str, ...]], dict[str, object]] = {}
        self._records = 0
        self._end = 0
        self._format_version = 0
        self._writer = ""
        self._recipe: dict[str, object] | None = None
        self._header_end = 0
        try:
            with locked(self._fd, exclusive=False), mapped(self._fd) as buf:
                check_magic(self._path, buf)
                try:
                    self._format_version, self._writer, self._recipe, self._end = read_header(
                        self._path, buf, len(buf)
                    )
                    self._header_end = self._end
                except Damage as damage:
                    raise corruption(self._path, buf, HEADER_OFFSET, damage.what) from None
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
    def header_end(self) -> int:
        """Where the header frame ends: the frames after it are the file's content."""
        with self._lock:
            return self._header_end

    @property
    def recipe(self) -> dict[str, object] | None:
        """The recipe of the run that created the file (from its header; None: it has none,
        as files made before recipes were written, or by a tool)."""
        return None if self._recipe is None else dict(self._recipe)

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

    def _index(self, buf: Buffer) -> int:
        """Index frames from self._end to the end of `buf` without decoding; return how many."""
        size = len(buf)
        pos = self._end
        exchanges, blobs, log = self._exchanges, self._blobs, self._log
        start_records = records = self._records
        try:
            while pos < size:
                kind, key, length = parse_frame(buf, pos, size)
                entry = (key, pos, length)
                if kind == KIND_EXCHANGE:
                    exchanges[key] = entry
                    log.append(entry)
                elif kind == KIND_BLOB:
                    blobs.setdefault(key, entry)
                else:
                    raise Damage("unexpected second header frame")
                pos += OVERHEAD + length
                records += 1
        except Damage as damage:
            raise corruption(self._path, buf, pos, damage.what) from None
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
        with mapped(fd) as buf:
            if len(buf) < self._end:
                raise corruption(
                    self._path, buf, len(buf), f"file shrank from {self._end} to {len(buf)} bytes"
                )
            return self._index(buf)

    def refresh(self) -> int:
        """Pick up records other processes appended since this handle read; return how many."""
        with self._lock, locked(self._require_open(), exclusive=False):
            return self._catch_up()

    # -- reading

    def _require_open(self) -> int:
        if self._fd < 0:
            raise ValueError(f"{self._path}: cassette handle is closed")
        return self._fd

    def _corrupt(self, offset: int, what: str) -> CassetteCorruptError:
        with mapped(self._require_open()) as buf:
            return corruption(self._path, buf, offset, what)

    def _payload(self, entry: _Entry, kind: bytes) -> bytes:
        """Re-read one indexed frame, re-checking its CRC in case the file changed since."""
        key, offset, length = entry
        frame = pread(self._require_open(), OVERHEAD + length, offset)
        try:
            got_kind, got_key, got_length = parse_frame(frame, 0, len(frame))
            if (got_kind, got_key, got_length) != (kind, key, length):
                raise Damage("frame changed since the file was opened")
        except Damage as damage:
            raise self._corrupt(offset, damage.what) from None
        return payload_of(frame, 0, length)

    def _exchange(self, entry: _Entry) -> dict[str, object]:
        try:
            return decode_exchange(self._payload(entry, KIND_EXCHANGE))
        except Damage as damage:
            raise self._corrupt(entry[1], damage.what) from None

    def get_exchange(self, key: bytes) -> dict[str, object] | None:
        """The latest exchange recorded under `key`, or None if there is none."""
        entry = self._exchanges.get(key)
        return None if entry is None else self._exchange(entry)

    def get_exchange_fields(self, key: bytes, names: tuple[str, ...]) -> dict[str, object] | None:
        """The top-level fields `names` of the latest exchange under `key` that it has (None: no
        exchange has this key). Replay's read: it decodes only what it uses.

        The first read of a frame checks its CRC and decodes it strictly; the result is kept
        (up to `REPLAYED_KEPT` per handle), so a process that replays the same exchange again (a
        server, a suite re-scoring its fixtures) skips both. A frame cannot change under an
        open handle except by an in-place edit: appends add frames, and repair and merge write a
        new file. The map returned is shared: treat it as read-only.
        """
        entry = self._exchanges.get(key)
        if entry is None:
            return None
        kept = self._replayed.get((entry[1], names))
        if kept is not None:
            return kept
        try:
            found = decode_exchange_fields(self._payload(entry, KIND_EXCHANGE), names)
        except Damage as damage:
            raise self._corrupt(entry[1], damage.what) from None
        if len(self._replayed) >= REPLAYED_KEPT:
            self._replayed.clear()
        self._replayed[(entry[1], names)] = found
        return found

    def has_exchange(self, key: bytes) -> bool:
        return key in self._exchanges

    def iter_exchanges(
        self, newest_first: bool = False
    ) -> Iterator[tuple[bytes, dict[str, object]]]:
        """Every exchange in file order (or newest first), superseded ones included, as (key,
        map)."""
        entries = list(self._log)
        for entry in reversed(entries) if newest_first else entries:
            yield entry[0], self._exchange(entry)

    def iter_latest_exchanges(self) -> Iterator[tuple[bytes, dict[str, object]]]:
        """The exchange each key answers with (its latest record), in file order, as (key, map).

        What replay sees: a content digest is taken over these, not over superseded records."""
        for entry in sorted(self._exchanges.values(), key=lambda entry: entry[1]):
            yield entry[0], self._exchange(entry)

    def has_blob(self, key: bytes) -> bool:
        return key in self._blobs

    def get_blob(self, key: bytes) -> str:
        """The text stored under a blob key; KeyError if the cassette has no such blob."""
        entry = self._blobs.get(key)
        if entry is None:
            raise KeyError(f"{self._path}: no blob {key.hex()}")
        try:
            return decode_blob(key, self._payload(entry, KIND_BLOB))
        except Damage as damage:
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
        with self._lock, locked(fd, exclusive=True):
            self._catch_up()
            yield

    def _append(self, kind: bytes, key: bytes, frame: bytes) -> None:
        offset = self._end
        write_frame(self._fd, frame, offset)
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
