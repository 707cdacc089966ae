"""`reproduce`: a results file against the lines a replay derives again, byte for byte.

A published results file is checked by deriving every line again from the data and the
cassette and comparing the bytes. Both sides are streams (the file is read line by line, the
lines come from an executor in input order), so a file of millions of lines costs the memory
of a few; the sha256 of the results file is taken on the same pass.

When a line differs, the first differing field is named by its path (``result.score``,
``axes.coverage``, ``result.preprocessStepResult.alignment[0].supported``), which says more
than a byte offset: a different ``digest`` alone means the data row, the scorer options or the
judge identity differ from the run's, not the judge's answers.

Replay is byte-identical only under the offline-scorer version that wrote the file: a later
version may show or replace other texts of the same answers, or build other requests. So when
lines differ and the cassette was created by another version, the reader is told which one.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from offline_scorer.batch.results import file_header
from offline_scorer.errors import InputError
from offline_scorer.files import open_binary
from offline_scorer.formats import FORMAT_1_KIND
from offline_scorer.version import __version__

__all__ = [
    "Difference",
    "Reproduction",
    "compare_lines",
    "first_differing_field",
    "first_kind",
    "other_version",
    "version_advice",
]

SHOWN = 10
"""Differing lines listed in full; the rest are counted."""


@dataclass(frozen=True)
class Difference:
    line: int  # 1-based line number in the results file
    id: str | None  # the line's id (the reproduced one when the file's line is unreadable)
    field: str  # path of the first differing field, or what is wrong with the line
    recorded: str  # the file's value there, as JSON (shortened)
    reproduced: str  # the reproduced value there

    def describe(self) -> str:
        what = "the header" if self.line == 1 and self.field.startswith("recipe") else None
        return (
            f"line {self.line} ({what or f'id {self.id}'}): {self.field} differs: "
            f"file has {self.recorded}, reproduced {self.reproduced}"
        )


@dataclass
class Reproduction:
    lines: int = 0  # lines compared (the longer of the two sides)
    identical: int = 0
    differences: list[Difference] = field(default_factory=list)  # the first SHOWN
    differing: int = 0
    sha256: str = ""  # of the results file as read

    @property
    def ok(self) -> bool:
        return self.differing == 0 and self.lines > 0


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "..."


def first_differing_field(recorded: Any, reproduced: Any, path: str = "") -> tuple[str, Any, Any]:
    """(path, recorded value, reproduced value) of the first place two JSON values differ, in
    the reproduced value's key order; ("", a, b) when they are equal as JSON."""
    if isinstance(recorded, dict) and isinstance(reproduced, dict):
        for key in (*reproduced, *(k for k in recorded if k not in reproduced)):
            where = f"{path}.{key}" if path else key
            if key not in recorded:
                return where, "(absent)", reproduced[key]
            if key not in reproduced:
                return where, recorded[key], "(absent)"
            found = first_differing_field(recorded[key], reproduced[key], where)
            if found[0]:
                return found
        if list(recorded) != list(reproduced):
            return (path or "line") + " (key order)", list(recorded), list(reproduced)
        return "", recorded, reproduced
    if isinstance(recorded, list) and isinstance(reproduced, list):
        for index, (a, b) in enumerate(zip(recorded, reproduced, strict=False)):
            found = first_differing_field(a, b, f"{path}[{index}]")
            if found[0]:
                return found
        if len(recorded) != len(reproduced):
            return f"{path} (length)", len(recorded), len(reproduced)
        return "", recorded, reproduced
    if recorded == reproduced and type(recorded) is type(reproduced):
        return "", recorded, reproduced
    return path or "line", recorded, reproduced


def _difference(number: int, raw: bytes | None, line: str | None) -> Difference:
    reproduced = None if line is None else json.loads(line)
    reproduced_id = reproduced.get("id") if isinstance(reproduced, dict) else None
    if raw is None:
        return Difference(number, reproduced_id, "line", "(no such line)", "a line")
    try:
        recorded = json.loads(raw)
    except ValueError:
        return Difference(number, reproduced_id, "line", "(not JSON)", "a line")
    recorded_id = recorded.get("id") if isinstance(recorded, dict) else None
    if reproduced is None:
        return Difference(number, recorded_id, "line", "a line", "(no data row for it)")
    where, a, b = first_differing_field(recorded, reproduced)
    if not where:  # same JSON, other bytes: spacing, escapes or number spelling
        where, a, b = "bytes (same JSON, another layout)", raw.decode("utf-8", "replace"), line
    if where == "digest":
        where = "digest (the data row, scorer options or judge identity differ from the run's)"
    return Difference(number, recorded_id or reproduced_id, where, _short(a), _short(b))


def compare_lines(results: Path, reproduced: Iterable[str]) -> Reproduction:
    """Compare the results file with reproduced lines (no line breaks), streaming both."""
    outcome = Reproduction()
    digest = hashlib.sha256()
    with open_binary(results, "results file") as handle:
        recorded: Iterator[bytes] = iter(handle)
        produced = iter(reproduced)
        number = 0
        while True:
            raw = next(recorded, None)
            if raw is not None:
                digest.update(raw)
            line = next(produced, None)
            if raw is None and line is None:
                break
            number += 1
            body = None if raw is None else raw.removesuffix(b"\n")
            if body is not None and line is not None and body == line.encode("utf-8"):
                outcome.identical += 1
                continue
            outcome.differing += 1
            if len(outcome.differences) < SHOWN:
                outcome.differences.append(_difference(number, body, line))
        outcome.lines = number
    outcome.sha256 = digest.hexdigest()
    return outcome


def first_kind(results: Path) -> str:
    """The scorer kind the header's recipe or the first line of a results file names (a format
    1 line names none: `formats.FORMAT_1_KIND`)."""
    header = file_header(results)
    if header is not None:
        kind = header.recipe.get("scorer")
        if not isinstance(kind, str):
            raise InputError(f"{results}: the header's recipe names no scorer kind")
        return kind
    with open_binary(results, "results file") as handle:
        first = handle.readline()
    if not first.strip():
        raise InputError(f"{results}: the results file is empty")
    try:
        record = json.loads(first)
    except ValueError:
        raise InputError(f"{results}: line 1 is not JSON; is this a results file?") from None
    if not isinstance(record, dict) or not isinstance(record.get("id"), str):
        raise InputError(f"{results}: line 1 is not a results line")
    kind = record.get("scorer", FORMAT_1_KIND)
    if not isinstance(kind, str):
        raise InputError(f"{results}: line 1 names no scorer kind")
    return kind


_WRITER_VERSION = re.compile(r"offline-scorer/(\d+(?:\.\d+)+)(?:\s|$)")
"""A released version in a cassette's writer; a build run from an uninstalled source tree writes
"offline-scorer/dev", which no `pip install` can fetch, so it gets no advice."""


def other_version(writer: str) -> str | None:
    """The offline-scorer release named by a cassette's writer ("offline-scorer/0.2.0
    msgpack/1.1.0") when it is not this one; None when it is this one or names no release."""
    found = _WRITER_VERSION.match(writer)
    if found is None or found.group(1) == __version__:
        return None
    return found.group(1)


def version_advice(writer: str) -> str | None:
    """What to tell a reader whose reproduction differs, when another version wrote the run."""
    writing = other_version(writer)
    if writing is None:
        return None
    return (
        f"the cassette was created by offline-scorer {writing} and this is {__version__}: a "
        "version may build other requests or show other texts of the same answers "
        f"(CHANGELOG.md); reproduce with that version: pip install 'offline-scorer=={writing}'"
    )
