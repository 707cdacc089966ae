"""What can be wrong with a cassette file, as one-line errors for the person running the tool.

Both carry their parts as attributes and pickle (``__reduce__``), so they cross process boundaries.
`Damage` is internal to `store/`: the low layers know *what* is wrong with some bytes but not
where the file is or how many records survive, so the layer that knows adds that and raises
`CassetteCorruptError`.
"""

from __future__ import annotations

import os
import shlex
from typing import Self

from offline_scorer.errors import CassetteFileError

__all__ = ["CassetteCorruptError", "CassetteError", "CassetteFormatError", "Damage"]


class CassetteError(CassetteFileError):
    """Base of every error the cassette store raises for a cassette's contents or state."""


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


class Damage(Exception):
    """Internal: what is wrong with the bytes at hand; callers add path, offset and counts."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what
