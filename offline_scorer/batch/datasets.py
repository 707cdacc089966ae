"""Reading evaluation datasets: JSONL and CSV rows into items, bad rows into row errors.

A dataset is read as a stream (`iter_dataset`), one row at a time, so a million-row file costs
the memory of one row; a malformed row becomes a failed item with its line number, and the run
goes on. `count_rows` is the cheap first pass that gives a progress bar its total.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from offline_scorer.errors import InputError
from offline_scorer.files import open_binary

CONTENT_FIELDS = ("id", "source", "summary", "input", "output")


@dataclass(frozen=True)
class DataItem:
    """One thing to evaluate: a Mastra run (input, output), or plain source/summary texts.

    `metadata` holds every other field of the row (labels, domains, notes), JSON-ready, in row
    order; it travels into the results line and is never shown to the judge.
    """

    id: str
    line: int | None = None
    input: Any = None
    output: Any = None
    has_output: bool = True
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def content(self) -> Any:
        """What decides the item's result, for the resume digest.

        Metadata is left out on purpose: it cannot change a score, so a row's digest is the
        same with or without extra fields (digests written before metadata existed still
        match), and `--resume` takes the metadata of kept lines from the data instead.
        """
        return {"input": self.input, "output": self.output if self.has_output else None}


@dataclass(frozen=True)
class RowError:
    """A row that could not be read; it becomes a failed result, and the run goes on."""

    id: str
    line: int | None
    message: str
    raw: bytes = b""


Item = DataItem | RowError  # what a dataset yields: a row to score, or one that failed to read


def _jsonable(value: Any, name: str) -> Any:
    """A metadata value as JSON can carry it: mappings with string keys, lists, scalars.

    Rows read from files are JSON already; rows given to `run_evals` may hold other objects,
    which become their `repr`. NaN and infinities are refused: a results line must stay JSON.
    """
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InputError(f"field '{name}' holds {value}, which JSON cannot carry")
        return value
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v, name) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v, name) for v in value]
    return repr(value)


def row_metadata(row: Mapping[str, Any]) -> dict[str, Any]:
    """Every field of a row but the content fields, in row order.

    A field named `metadata` that holds an object is unpacked: its keys join the others at its
    place in the row. A key given both at the top level and inside `metadata` keeps the
    top-level value (at the place it first appears), so a column added next to a nested object
    overrides it. A `metadata` field that is not an object is kept as is, under that name.
    """
    top = {str(k): v for k, v in row.items() if k not in CONTENT_FIELDS and k != "metadata"}
    out: dict[str, Any] = {}
    for key, value in row.items():
        if key in CONTENT_FIELDS:
            continue
        if key == "metadata" and isinstance(value, Mapping):
            for inner, inner_value in value.items():
                name = str(inner)
                if name not in out:
                    out[name] = _jsonable(top.get(name, inner_value), name)
            continue
        if str(key) not in out:
            out[str(key)] = _jsonable(value, str(key))
    return out


def item_from_mapping(row: Mapping[str, Any], line: int | None, fallback_id: str) -> DataItem:
    """`{id, source, summary}` or Mastra's `{id, input, output}`, any other fields becoming
    metadata; raises InputError otherwise."""
    row_id = row.get("id", fallback_id)
    if isinstance(row_id, int) and not isinstance(row_id, bool):
        row_id = str(row_id)
    if not isinstance(row_id, str) or not row_id:
        raise InputError("'id' must be a non-empty string or an integer")
    if "source" in row or "summary" in row:
        if "input" in row or "output" in row:
            raise InputError(
                "a row has 'source' and 'summary', or Mastra's 'input' and 'output', not both"
            )
        for name in ("source", "summary"):
            if not isinstance(row.get(name), str):
                raise InputError(
                    f"'{name}' must be a string" if name in row else f"missing field '{name}'"
                )
        return DataItem(
            id=row_id,
            line=line,
            input=row["source"],
            output=row["summary"],
            metadata=row_metadata(row),
        )
    if "input" not in row:
        raise InputError("a row needs 'source' and 'summary', or Mastra's 'input' (and 'output')")
    return DataItem(
        id=row_id,
        line=line,
        input=row["input"],
        output=row.get("output"),
        has_output="output" in row,
        metadata=row_metadata(row),
    )


def _jsonl(lines: Iterable[bytes]) -> Iterator[DataItem | RowError]:
    for number, raw in enumerate(lines, start=1):
        raw = raw.removesuffix(b"\n")
        if not raw.strip():
            continue
        fallback = f"line-{number}"
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            yield RowError(
                fallback,
                number,
                f"line {number}: not valid UTF-8 (byte "
                f"0x{raw[error.start]:02x} at column {error.start + 1})",
                raw,
            )
            continue
        try:
            row = json.loads(text)
        except json.JSONDecodeError as error:
            yield RowError(
                fallback,
                number,
                f"line {number}: not valid JSON ({error.msg} at column {error.colno})",
                raw,
            )
            continue
        if not isinstance(row, dict):
            yield RowError(
                fallback,
                number,
                f"line {number}: expected a JSON object, got {type(row).__name__}",
                raw,
            )
            continue
        try:
            yield item_from_mapping(row, number, fallback)
        except InputError as error:
            given = row.get("id")
            yield RowError(
                given if isinstance(given, str) and given else fallback,
                number,
                f"line {number}: {error}",
                raw,
            )


def _csv(handle: BinaryIO) -> Iterator[DataItem | RowError]:
    text = io.TextIOWrapper(handle, encoding="utf-8-sig", errors="surrogateescape", newline="")
    reader = csv.DictReader(text)
    header = reader.fieldnames or []
    missing = {"source", "summary"} - set(header)
    if missing:
        raise InputError(
            f"CSV header must have 'source' and 'summary' columns (and optionally "
            f"'id'); it has {', '.join(header) or 'no columns'}"
        )
    previous_end = 1
    for row in reader:
        line = previous_end + 1
        previous_end = reader.line_num
        fallback = f"line-{line}"
        if None in row or any(value is None for value in row.values()):
            yield RowError(fallback, line, f"line {line}: wrong number of columns")
            continue
        if any("\udc80" <= ch <= "\udcff" for value in row.values() for ch in value):
            yield RowError(fallback, line, f"line {line}: not valid UTF-8")
            continue
        try:
            yield item_from_mapping({k: v for k, v in row.items() if k}, line, fallback)
        except InputError as error:
            yield RowError(row.get("id") or fallback, line, f"line {line}: {error}")


def _kind(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return "csv"
    if suffix in (".jsonl", ".json", ".ndjson"):
        return "jsonl"
    raise InputError(f"{path}: unknown dataset type {suffix or '(no suffix)'}; use .jsonl or .csv")


def iter_dataset(path: Path) -> Iterator[DataItem | RowError]:
    """Every row of a .jsonl (or .json lines) or .csv file, in order, read as a stream."""
    kind = _kind(path)
    with open_binary(path, "dataset") as handle:
        yield from _csv(handle) if kind == "csv" else _jsonl(handle)


def load_dataset(path: Path) -> list[DataItem | RowError]:
    """Every row, in a list (for small files: calibration sets, tests)."""
    return list(iter_dataset(path))


def count_rows(path: Path) -> int:
    """How many items `iter_dataset` yields, without building them (JSONL: non-blank lines)."""
    if _kind(path) == "csv":
        return sum(1 for _ in iter_dataset(path))
    with open_binary(path, "dataset") as handle:
        return sum(1 for raw in handle if raw.strip())


def content_digest(content: Any, context: Iterable[Any]) -> str:
    """sha256 of an item's content plus what else decides its result (options, judge)."""
    payload = json.dumps(
        [content, list(context)],
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
        default=repr,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()
