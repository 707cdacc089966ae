"""Reading evaluation datasets: JSONL and CSV rows into items, bad rows into row errors.

A dataset is read whole before a run starts, so every malformed row is known (with its line
number) up front, and a resumed run can check that the data did not change under it.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from offline_scorer.errors import InputError


@dataclass(frozen=True)
class DataItem:
    """One thing to evaluate: a Mastra run (input, output), or plain source/summary texts."""

    id: str
    line: int | None = None
    input: Any = None
    output: Any = None
    has_output: bool = True

    def content(self) -> Any:
        return {"input": self.input, "output": self.output if self.has_output else None}


@dataclass(frozen=True)
class RowError:
    """A row that could not be read; it becomes a failed result, and the run goes on."""

    id: str
    line: int | None
    message: str
    raw: bytes = b""


def item_from_mapping(row: Mapping[str, Any], line: int | None, fallback_id: str) -> DataItem:
    """`{id, source, summary}` or Mastra's `{id, input, output}`; raises InputError otherwise."""
    row_id = row.get("id", fallback_id)
    if isinstance(row_id, int) and not isinstance(row_id, bool):
        row_id = str(row_id)
    if not isinstance(row_id, str) or not row_id:
        raise InputError("'id' must be a non-empty string or an integer")
    if "source" in row or "summary" in row:
        for name in ("source", "summary"):
            if not isinstance(row.get(name), str):
                raise InputError(f"'{name}' must be a string" if name in row
                                 else f"missing field '{name}'")
        extra = set(row) - {"id", "source", "summary", "kind", "metadata"}
        if extra:
            raise InputError(f"unexpected field(s) {', '.join(sorted(extra))}")
        return DataItem(id=row_id, line=line, input=row["source"], output=row["summary"])
    if "input" not in row:
        raise InputError("a row needs 'source' and 'summary', or Mastra's 'input' (and 'output')")
    return DataItem(id=row_id, line=line, input=row["input"], output=row.get("output"),
                    has_output="output" in row)


def _jsonl(data: bytes) -> Iterator[DataItem | RowError]:
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        fallback = f"line-{number}"
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            yield RowError(fallback, number, f"line {number}: not valid UTF-8 (byte "
                           f"0x{raw[error.start]:02x} at column {error.start + 1})", raw)
            continue
        try:
            row = json.loads(text)
        except json.JSONDecodeError as error:
            yield RowError(fallback, number, f"line {number}: not valid JSON ({error.msg} at "
                           f"column {error.colno})", raw)
            continue
        if not isinstance(row, dict):
            yield RowError(fallback, number, f"line {number}: expected a JSON object, got "
                           f"{type(row).__name__}", raw)
            continue
        try:
            yield item_from_mapping(row, number, fallback)
        except InputError as error:
            row_id = row.get("id") if isinstance(row.get("id"), str) and row.get("id") else fallback
            yield RowError(row_id, number, f"line {number}: {error}", raw)


def _csv(data: bytes) -> Iterator[DataItem | RowError]:
    text = data.decode("utf-8", errors="surrogateescape").removeprefix("\ufeff")
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = reader.fieldnames or []
    missing = {"source", "summary"} - set(header)
    if missing:
        raise InputError(f"CSV header must have 'source' and 'summary' columns (and optionally "
                         f"'id'); it has {', '.join(header) or 'no columns'}")
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


def load_dataset(path: Path) -> list[DataItem | RowError]:
    """Every row of a .jsonl (or .json lines) or .csv file, in order."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"no such dataset: {path}") from None
    except IsADirectoryError:
        raise InputError(f"{path} is a directory, not a dataset file") from None
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror}") from None
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return list(_csv(data))
    if suffix in (".jsonl", ".json", ".ndjson"):
        return list(_jsonl(data))
    raise InputError(f"{path}: unknown dataset type {suffix or '(no suffix)'}; use .jsonl or .csv")


def digest(content: Any, context: Iterable[Any]) -> str:
    """sha256 of an item's content plus what else decides its result (options, judge)."""
    payload = json.dumps([content, list(context)], sort_keys=True, ensure_ascii=False,
                         separators=(",", ":"), default=repr)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()
