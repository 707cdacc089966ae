"""Reading and writing files: one atomic-write helper and one read-text helper for all modules.

A crash while writing leaves either the old bytes or the new ones, never a mix.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from offline_scorer.errors import InputError


def temp_name(target: Path) -> Path:
    """A hidden sibling name of `target` that no other process or call picks."""
    return target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")


def temp_sibling(target: Path, chunks: Iterable[bytes]) -> Path:
    """Write `chunks` to a fresh, fsynced sibling of `target`; the caller renames or links it.

    Created exclusively with the usual umask permissions, as a file the user edits by hand (a
    registry) or shares (a report) should.
    """
    tmp = temp_name(target)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
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


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Replace `path` with `data`: a crash leaves the old bytes or the new ones."""
    os.replace(temp_sibling(path, [data]), path)


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def decode_text(data: bytes, what: str, name: str) -> str:
    """UTF-8 text (a leading BOM dropped), or one InputError line saying how to fix it."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(
            f"{what}: {name} is not valid UTF-8 (byte 0x{data[error.start]:02x} at offset "
            f"{error.start}); convert it to UTF-8 first"
        ) from None


def read_bytes(path: Path, noun: str, prefix: str = "") -> bytes:
    """A file's bytes; missing, a folder, or unreadable is one InputError line.

    `noun` names what the file should be ("dataset", "results file"); `prefix` names the option
    it came from, if any ("--source: ").
    """
    with open_binary(path, noun, prefix) as handle:
        return handle.read()


@contextlib.contextmanager
def open_binary(path: Path, noun: str, prefix: str = "") -> Iterator[BinaryIO]:
    """A file opened for streaming reads; missing, a folder, or unreadable (when opened or
    while read in the with-block) is one InputError."""
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        raise InputError(f"{prefix}no such {noun}: {path}") from None
    except IsADirectoryError:
        raise InputError(f"{prefix}{path} is a directory, not a {noun}") from None
    except OSError as error:
        raise InputError(f"{prefix}cannot read {path}: {error.strerror}") from None
    with handle:
        try:
            yield handle
        except OSError as error:
            raise InputError(f"{prefix}cannot read {path}: {error.strerror}") from None


def read_text(path: Path, what: str) -> str:
    """A UTF-8 text file given by option `what`; a leading BOM is dropped."""
    return decode_text(read_bytes(path, "file", f"{what}: "), what, str(path))
