"""The results file on disk: whole lines only, and --resume keeping the prefix that still holds.

The file is written in input order, one `write` per line followed by fsync, so an interrupted
run leaves only whole lines (a kill -9 in mid-write can leave one torn last line, which resume
drops). Resume keeps the longest prefix of lines that match the data (by id and content digest)
and continues after it, so a resumed run ends with the same bytes as an uninterrupted one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from offline_scorer import jsontext
from offline_scorer.batch.results import with_metadata
from offline_scorer.errors import InputError
from offline_scorer.files import atomic_write_bytes


def existing_prefix(
    out: Path, expected: Sequence[tuple[str, str, Mapping[str, Any]]]
) -> tuple[list[bytes], bool]:
    """The lines of an existing results file that match the data, each brought up to date.

    A line matches its item by id and content digest. Its metadata is taken from the data (it
    never changes a score): a line written before results lines carried metadata gains the
    key, and an edited label replaces the old one. Returns the kept lines (without their line
    breaks) and whether any of them differs from the file's bytes. Refuses a mismatch.
    """
    lines = out.read_bytes().split(b"\n")
    complete = lines[:-1]  # the last piece is empty, or a torn line from a killed run
    kept: list[bytes] = []
    changed = False
    for number, raw in enumerate(complete):
        try:
            record = json.loads(raw)
            found = (record["id"], record["digest"])
        except (ValueError, KeyError, TypeError):
            raise InputError(
                f"{out}: line {number + 1} is not a results line; use another "
                "--out, or --overwrite to start again"
            ) from None
        if number >= len(expected) or found != expected[number][:2]:
            raise InputError(
                f"{out}: line {number + 1} (id {found[0]!r}) does not match item "
                f"{number + 1} of the data (changed data or options?); use another --out, or "
                "--overwrite to start again"
            )
        line = jsontext.line(with_metadata(record, expected[number][2])).encode("utf-8")
        if line != raw:
            changed = True
            raw = line
        kept.append(raw)
    return kept, changed


def rewrite(out: Path, lines: Sequence[bytes]) -> int:
    """Replace `out` by `lines` atomically; returns the bytes written."""
    data = b"".join(line + b"\n" for line in lines)
    try:
        atomic_write_bytes(out, data)
    except OSError as error:
        raise InputError(f"cannot update {out}: {error.strerror or error}") from None
    return len(data)


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
