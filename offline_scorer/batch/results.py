"""The results file, defined once as pydantic models: its header and its lines, written and
read back, and results files of formats 1 and 2 read as the current shape.

A format 3 file opens with a header line, ``{"format":3,"recipe":{...}}``: the run's recipe
(`RecordedRecipe`), so `reproduce` and `eval --resume` need no flags. Then one JSON object per
item, keys in this order: format, scorer, id, line, digest, status, score, axes,
limiting_axis, result, error, metadata. For an item that failed, `score`, `limiting_axis` and
`result` are null and every axis is null. Format 2 files are the same lines with "format":2 and
no header. A format 1 line (no `format` key) is read in format 2's shape
(`formats.format_1_line`), so `report` reads every results file; its digest did not cover the
whole judge identity, so `--resume` does not continue such a file (see `batch.resume`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from offline_scorer import jsontext
from offline_scorer.errors import InputError
from offline_scorer.files import open_binary
from offline_scorer.formats import RESULTS_FORMAT, RESULTS_READ_FORMATS, format_1_line

TIES = ("both", "none")
"""limiting_axis besides an axis: all axes tie below the top, or all are at it."""

Number = float | int


class ItemError(BaseModel):
    """Why an item was not scored: the error's class name and its one-line message.

    The evaluator writes only these two; other keys a line's error holds are kept as they are
    (and printed by `report`), as format 1 readers did.
    """

    model_config = ConfigDict(extra="allow", frozen=True, strict=True)

    type: str
    message: str


class ResultsLine(BaseModel):
    """One item of an `eval` run, as its results file holds it."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    format: Literal[2, 3] = RESULTS_FORMAT
    scorer: str
    id: str
    line: int | None
    digest: str
    status: Literal["ok", "error"]
    score: Number | None = None
    axes: dict[str, Number | None] = Field(default_factory=dict)
    limiting_axis: str | None = None
    result: dict[str, Any] | None = None
    error: ItemError | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _consistent(self) -> ResultsLine:
        clash = [axis for axis in self.axes if axis in TIES]
        if clash:
            raise ValueError(
                f"an axis cannot be called {clash[0]!r}: that is a limiting_axis value"
            )
        if self.status == "error":
            for key in ("score", "limiting_axis", "result"):
                if getattr(self, key) is not None:
                    raise ValueError(f'an error item must have "{key}": null')
            if any(value is not None for value in self.axes.values()):
                raise ValueError("an error item must have every axis null")
            if self.error is None:
                raise ValueError("an error item must have an 'error' object")
            return self
        for key, value in (("score", self.score), *self.axes.items()):
            if value is None or value < 0:
                raise ValueError(f"'{key}' of an ok item must be a number >= 0")
        limits = (*self.axes, *TIES)
        if self.limiting_axis not in limits:
            raise ValueError(
                f"'limiting_axis' of an ok item must be one of {', '.join(limits)}, found "
                f"{jsontext.line(self.limiting_axis)}"
            )
        if self.error is not None:
            raise ValueError('an ok item must have "error": null')
        return self

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_line(self) -> str:
        """The line's bytes (compact JSON, UTF-8 text kept as is), without a line break."""
        return jsontext.line(self.model_dump(mode="python"))


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


class LineProblem(ValueError):
    """What is wrong with one parsed results line, in one phrase (no path, no line number)."""


def _first_problem(error: ValidationError) -> str:
    first = error.errors(include_url=False)[0]
    where = ".".join(str(part) for part in first["loc"])
    if first["type"] == "missing":
        return f"missing key {where!r}"
    if first["type"] == "extra_forbidden":
        return f"unknown key {where!r}"
    message = str(first.get("ctx", {}).get("error", first["msg"]))
    message = message.removeprefix("Value error, ")
    if not where:
        return message
    return f"'{where}': {message}, found {jsontext.line(first['input'])[:80]}"


def parse_line(record: Any) -> ResultsLine:
    """A parsed JSON value as a results line; LineProblem names what is wrong with it."""
    if not isinstance(record, dict):
        raise LineProblem(f"expected a JSON object, found {json_type(record)}")
    if "format" not in record:
        shaped = format_1_line(record)
        if shaped is None:
            raise LineProblem("missing key 'score' or 'limiting_axis' (a format 1 line)")
        record = shaped
    elif record["format"] not in RESULTS_READ_FORMATS:
        raise LineProblem(
            f"results line format {jsontext.line(record['format'])} is not one this version "
            f"reads ({', '.join(map(str, RESULTS_READ_FORMATS))} and 1); upgrade offline-scorer"
        )
    try:
        return ResultsLine.model_validate(record)
    except ValidationError as error:
        raise LineProblem(_first_problem(error)) from None


class ResultsHeader(BaseModel):
    """A format 3 results file's first line: the recipe of the run that wrote it."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    format: Literal[3] = RESULTS_FORMAT
    recipe: dict[str, Any]

    def to_line(self) -> str:
        """The header's bytes (compact JSON), without a line break."""
        return jsontext.line(self.model_dump(mode="python"))


def is_header(record: Any) -> bool:
    """Whether a parsed line is a results header (a map with a recipe and no item id)."""
    return isinstance(record, dict) and "recipe" in record and "id" not in record


def parse_header(record: Any) -> ResultsHeader:
    """A parsed first line as a header; LineProblem names what is wrong with it."""
    try:
        return ResultsHeader.model_validate(record)
    except ValidationError as error:
        raise LineProblem("a results header: " + _first_problem(error)) from None


def file_header(path: Path) -> ResultsHeader | None:
    """The header of a results file (None: a file of format 2 or 1, which has none, or an
    empty one); an InputError when its first line claims to be a header and is not one."""
    with open_binary(path, "results file") as handle:
        first = handle.readline()
    try:
        record = json.loads(first.removeprefix(b"\xef\xbb\xbf"))
    except ValueError:
        return None
    if not is_header(record):
        return None
    try:
        return parse_header(record)
    except LineProblem as error:
        raise InputError(f"{path} line 1: {error}") from None
