"""Filesystem primitives the store relies on for durability and cross-process safety.

* Whole-file advisory locks (portalocker), shared for reading and exclusive for writing.
* Memory maps, so indexing and salvage never copy a large file into memory.
* fsync of files *and* their directory, so a crash never leaves a renamed or linked file that
  is not really there.
* Creation by hard link of a finished temp file, so nobody ever sees a half-written header.
"""

from __future__ import annotations

import contextlib
import mmap
import os
from collections.abc import Iterator, Mapping
from pathlib import Path

import portalocker

from offline_scorer.cassette.store.frames import Buffer, encode_header
from offline_scorer.files import temp_sibling

__all__ = [
    "O_BINARY",
    "create_cassette",
    "fsync_dir",
    "locked",
    "mapped",
    "pread",
    "write_frame",
]

O_BINARY = getattr(os, "O_BINARY", 0)
"""Windows would otherwise translate line endings."""


@contextlib.contextmanager
def locked(fd: int, *, exclusive: bool) -> Iterator[None]:
    """Hold the whole-file lock on `fd` for the duration of the block."""
    portalocker.lock(
        fd, portalocker.LockFlags.EXCLUSIVE if exclusive else portalocker.LockFlags.SHARED
    )
    try:
        yield
    finally:
        portalocker.unlock(fd)


@contextlib.contextmanager
def mapped(fd: int) -> Iterator[Buffer]:
    """The whole file as a buffer without copying it into memory (empty files cannot be mapped)."""
    if os.fstat(fd).st_size == 0:
        yield b""
        return
    with mmap.mmap(fd, 0, access=mmap.ACCESS_READ) as buf:
        yield buf


def pread(fd: int, size: int, offset: int) -> bytes:
    """Read at an offset without moving a file position other threads may share."""
    if hasattr(os, "pread"):
        return os.pread(fd, size, offset)
    os.lseek(fd, offset, os.SEEK_SET)  # pragma: no cover - Windows has no pread
    return os.read(fd, size)  # pragma: no cover


def fsync_dir(directory: Path) -> None:
    """Make a rename or link durable; only POSIX can open a directory for this."""
    if os.name != "posix":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def create_cassette(path: Path, writer: str, recipe: Mapping[str, object] | None = None) -> None:
    """Create a cassette holding only its header (with the recipe of the run creating it),
    unless one already exists.

    Hard-linking a complete temp file into place fails if the name exists, so two processes
    creating at once cannot both write a header and no reader ever sees a half-written one.
    """
    tmp = temp_sibling(path, [encode_header(writer, recipe)])
    try:
        try:
            os.link(tmp, path)
        except FileExistsError:
            return
        except OSError:
            # No hard links on this filesystem: O_EXCL still guarantees a single header.
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_BINARY, 0o666)
            except FileExistsError:
                return
            try:
                os.write(fd, tmp.read_bytes())
                os.fsync(fd)
            finally:
                os.close(fd)
    finally:
        tmp.unlink(missing_ok=True)
    fsync_dir(path.parent)


def write_frame(fd: int, frame: bytes, offset: int) -> None:
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
