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
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from offline_scorer import jsontext
from offline_scorer.batch.datasets import Item
from offline_scorer.batch.results import is_header
from offline_scorer.errors import InputError
from offline_scorer.files import open_binary, temp_sibling

Expected = Callable[[Item], tuple[str, str, Mapping[str, Any]]]  # (id, digest, metadata)


@dataclass(frozen=True)
class Kept:
    """What `keep_prefix` kept of a results file, and where scoring starts again."""

    lines: int
    size: int  # bytes of the kept lines
    redo: Item | None = None  # the first item whose line no longer holds: scored again
    dropped: int = 0  # lines from `redo`'s on, scored again because they were stale


@dataclass
class _Scan:
    """Where reading stopped early: the first stale line's number and its item."""

    stale: tuple[int, Item] | None = None


def keep_prefix(out: Path, items: Iterator[Item], expected: Expected, header: str) -> Kept:
    """Keep the lines of `out` that still hold for the data, each brought up to date.

    The file's header must be `header` (the run's recipe) for any line to be kept: a file
    written under another recipe is scored again whole (Kept with no bytes, so the caller
    writes the header anew). A file without a header (format 2 or 1) is refused with what to
    do: its recipe is not known.
    Reads `out` and the data as streams, taking one item from `items` per kept line, so the
    caller continues with the next item (and first with `Kept.redo`, if any). A line holds when
    its id and content digest match its item; the digest covers the scorer's kind, options and
    sampling and the judge's whole identity, so a line scored under an old verdict threshold
    does not hold: from the first such line on, the file is cut and the items scored again.
    A different id (the data changed shape) is refused. Metadata is taken from the data (it
    never changes a score): an edited label replaces the old one, and only then is the file
    rewritten (atomically). A torn last line (a kill -9 in mid-write) is dropped.
    """
    scan = _Scan()
    with open_binary(out, "results file") as handle:
        first = handle.readline()
        if not first.endswith(b"\n"):  # empty, or a header torn mid-write
            return Kept(0, 0)
        if first[:-1] != header.encode("utf-8"):
            _check_header(out, first)
            return Kept(0, 0, dropped=sum(1 for raw in handle if raw.endswith(b"\n")))
        lines = _updated_lines(out, handle, items, expected, scan)
        count, size = 0, len(first)
        for raw, line in lines:
            if line != raw:
                rewritten, size = _rewrite(out, size, line, lines)
                count += rewritten
                break
            count += 1
            size += len(raw) + 1
        if scan.stale is None:
            return Kept(count, size)
        dropped = 1 + sum(1 for raw in handle if raw.endswith(b"\n"))
        return Kept(count, size, scan.stale[1], dropped)


def _check_header(out: Path, first: bytes) -> None:
    """Refuse a first line that is no results header: a file of an earlier format, or not a
    results file at all."""
    try:
        record = json.loads(first)
    except ValueError:
        record = None
    if is_header(record):
        return
    if isinstance(record, dict) and "id" in record and "format" not in record:
        raise InputError(
            f"{out} holds results format 1 (offline-scorer 0.2), whose digests do not "
            "cover the whole judge identity, so it cannot be resumed; score into another "
            "--out, or --overwrite to start again (report still reads it)"
        )
    if isinstance(record, dict) and "id" in record:
        raise InputError(
            f"{out} is a results file of an earlier format, without the recipe header that "
            f"--resume continues from; bring it forward with `offline-scorer migrate results "
            f"{out} --data DATA --out NEW` (with the run's --model and options), or "
            "--overwrite to start again"
        )
    raise InputError(
        f"{out}: line 1 is not a results header; use another --out, or --overwrite to start again"
    )


def _updated_lines(
    out: Path, handle: BinaryIO, items: Iterator[Item], expected: Expected, scan: _Scan
) -> Iterator[tuple[bytes, bytes]]:
    """(line as read, line as it should be now) for each line that holds; stops at the first
    stale one, which `scan` records."""
    for number, raw in enumerate(handle, start=2):
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
        if item is None or want is None or found[0] != want[0]:
            raise InputError(
                f"{out}: line {number} (id {found[0]!r}) does not match item "
                f"{number - 1} of the data (changed data?); use another --out, or "
                "--overwrite to start again"
            )
        if found[1] != want[1]:
            scan.stale = (number, item)
            return
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


def with_metadata(record: Mapping[str, Any], metadata: Mapping[str, Any]) -> dict[str, Any]:
    """A parsed results line with its "metadata" set from the data, in its place (last)."""
    out: dict[str, Any] = {k: v for k, v in record.items() if k != "metadata"}
    out["metadata"] = dict(metadata)
    return out


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
