"""The results line, defined once: writing it, reading it back and updating its metadata.

One JSON object per item, keys in this order: id, line, digest, status, score, the scorer's
named axes, limiting_axis, result, error, metadata. `score` to `limiting_axis` are null for an
item that failed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from offline_scorer import jsontext

HEAD = ("id", "line", "digest", "status", "score")
TAIL = ("limiting_axis", "result", "error", "metadata")


@dataclass(frozen=True)
class ItemError:
    type: str
    message: str


@dataclass(frozen=True)
class ResultsLine:
    id: str
    line: int | None
    digest: str
    score: float | int | None = None
    axes: Mapping[str, float | int | None] = field(default_factory=dict)
    limiting_axis: str | None = None
    result: Mapping[str, Any] | None = None
    error: ItemError | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @property
    def status(self) -> str:
        return "ok" if self.result is not None else "error"

    def to_record(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "line": self.line,
            "digest": self.digest,
            "status": self.status,
            "score": self.score,
            **self.axes,
            "limiting_axis": self.limiting_axis,
            "result": None if self.result is None else dict(self.result),
            "error": None if self.error is None else vars(self.error).copy(),
            "metadata": dict(self.metadata),
        }

    def to_line(self) -> str:
        """The line's bytes (compact JSON, UTF-8 text kept as is), without a line break."""
        return jsontext.line(self.to_record())


def record_axes(record: Mapping[str, Any]) -> tuple[str, ...]:
    """The axis names a parsed line carries: its keys between "score" and "limiting_axis"."""
    keys = list(record)
    if "score" not in record or "limiting_axis" not in record:
        return ()
    return tuple(keys[keys.index("score") + 1 : keys.index("limiting_axis")])


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


TIES = ("both", "none")  # limiting_axis besides an axis: all axes tie below the top / at it


def line_problem(
    record: dict[str, Any],
    axes: tuple[str, ...],
    result_problem: Callable[[Any], str | None],
) -> str | None:
    """What is wrong with one parsed results line, or None; `result_problem` checks "result".

    Lines written before rows kept their extra fields lack "metadata"; that still reads.
    """
    missing = [key for key in (*HEAD, *axes, *TAIL[:-1]) if key not in record]
    if missing:
        return "missing key " + ", ".join(repr(k) for k in missing)
    if not isinstance(record["id"], str):
        return f"'id' must be a string, found {json_type(record['id'])}"
    line = record["line"]
    if line is not None and (not isinstance(line, int) or isinstance(line, bool)):
        return f"'line' must be an integer or null, found {json_type(line)}"
    if not isinstance(record["digest"], str):
        return f"'digest' must be a string, found {json_type(record['digest'])}"
    if "metadata" in record and not isinstance(record["metadata"], dict):
        return f"'metadata' must be an object, found {json_type(record['metadata'])}"
    numbers = ("score", *axes)
    status = record["status"]
    if status == "error":
        for key in (*numbers, "limiting_axis", "result"):
            if record[key] is not None:
                return f'an error item must have "{key}": null'
        error = record["error"]
        if not (
            isinstance(error, dict)
            and isinstance(error.get("type"), str)
            and isinstance(error.get("message"), str)
        ):
            return "'error' of an error item must be an object with string 'type' and 'message'"
        return None
    if status != "ok":
        return f'\'status\' must be "ok" or "error", found {jsontext.line(status)}'
    for key in numbers:
        value = record[key]
        if not _is_number(value) or value < 0:
            return f"'{key}' of an ok item must be a number >= 0, found {jsontext.line(value)}"
    limits = (*axes, *TIES)
    if record["limiting_axis"] not in limits:
        return (
            f"'limiting_axis' of an ok item must be one of {', '.join(limits)}, found "
            f"{jsontext.line(record['limiting_axis'])}"
        )
    if record["error"] is not None:
        return 'an ok item must have "error": null'
    if record["result"] is None:
        return None  # an ok line may leave the full result out
    if not isinstance(record["result"], dict):
        return f"'result' must be an object or null, found {json_type(record['result'])}"
    return result_problem(record["result"])


def with_metadata(record: Mapping[str, Any], metadata: Mapping[str, Any]) -> dict[str, Any]:
    """A parsed results line with its "metadata" set, in its place right after "error".

    `--resume` uses it to bring kept lines up to date: lines written before results lines had
    metadata lack the key, and a row's metadata may have been edited since (it never changes a
    score, so the line is still valid).
    """
    out: dict[str, Any] = {k: v for k, v in record.items() if k != "metadata"}
    out["metadata"] = dict(metadata)
    return out
