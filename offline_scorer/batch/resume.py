"""The results file on disk: whole lines only, and --resume keeping the prefix that still holds.

The file is written in input order, one `write` per line followed by fsync, so an interrupted
run leaves only whole lines (a kill -9 in mid-write can leave one torn last line, which resume
drops). Resume keeps the longest prefix of lines that match the data (by id and content digest)
and continues after it, so a resumed run ends with the same bytes as an uninterrupted one.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

from offline_scorer import jsontext
from offline_scorer.batch.datasets import Item
from offline_scorer.batch.results import with_metadata
from offline_scorer.errors import InputError
from offline_scorer.files import open_binary, temp_sibling

Expected = Callable[[Item], tuple[str, str, Mapping[str, Any]]]  # (id, digest, metadata)


def keep_prefix(out: Path, items: Iterator[Item], expected: Expected) -> tuple[int, int]:
    """Keep the lines of `out` that match the data, each brought up to date; (lines, bytes).

    Reads `out` and the data as streams, taking one item from `items` per kept line, so the
    caller continues with the next item. A line matches its item by id and content digest.
    Its metadata is taken from the data (it never changes a score): a line written before
    results lines carried metadata gains the key, and an edited label replaces the old one;
    only then is the file rewritten (atomically). Refuses a mismatch. A torn last line (a
    kill -9 in mid-write) is dropped.
    """
    with open_binary(out, "results file") as handle:
        lines = _updated_lines(out, handle, items, expected)
        count = offset = 0
        for raw, line in lines:
            if line != raw:
                rewritten, size = _rewrite(out, offset, line, lines)
                return count + rewritten, size
            count += 1
            offset += len(raw) + 1
        return count, offset


def _updated_lines(
    out: Path, handle: BinaryIO, items: Iterator[Item], expected: Expected
) -> Iterator[tuple[bytes, bytes]]:
    for number, raw in enumerate(handle, start=1):
        if not raw.endswith(b"\n"):
            return
        raw = raw[:-1]
        try:
            record = json.loads(raw)
            found = (record["id"], record["digest"])
        except (ValueError, KeyError, TypeError):
            raise InputError(
                f"{out}: line {number} is not a results line; use another "
                "--out, or --overwrite to start again"
            ) from None
        item = next(items, None)
        want = None if item is None else expected(item)
        if want is None or found != want[:2]:
            raise InputError(
                f"{out}: line {number} (id {found[0]!r}) does not match item "
                f"{number} of the data (changed data or options?); use another --out, or "
                "--overwrite to start again"
            )
        yield raw, jsontext.line(with_metadata(record, want[2])).encode("utf-8")


def _rewrite(
    out: Path, prefix: int, first: bytes, rest: Iterator[tuple[bytes, bytes]]
) -> tuple[int, int]:
    """Replace `out` by its first `prefix` bytes, then `first` and the updated `rest` lines;
    returns (lines written after the prefix, bytes in the file)."""
    written = 0

    def chunks() -> Iterator[bytes]:
        nonlocal written
        with out.open("rb") as again:
            left = prefix
            while left:
                block = again.read(min(left, 1 << 20))
                left -= len(block)
                yield block
        for line in itertools.chain([first], (updated for _raw, updated in rest)):
            written += 1
            yield line + b"\n"

    try:
        tmp = temp_sibling(out, chunks())
        size = tmp.stat().st_size
        os.replace(tmp, out)
    except OSError as error:
        raise InputError(f"cannot update {out}: {error.strerror or error}") from None
    return written, size


class LineWriter:
    """Appends whole lines after the first `keep_bytes` bytes, each one fsynced."""

    def __init__(self, path: Path, keep_bytes: int) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
        os.ftruncate(self.fd, keep_bytes)
        os.lseek(self.fd, keep_bytes, os.SEEK_SET)

    def write(self, line: str) -> None:
        os.write(self.fd, (line + "\n").encode("utf-8"))
        os.fsync(self.fd)

    def close(self) -> None:
        os.close(self.fd)
