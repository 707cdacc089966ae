"""Reading a results file strictly: every line checked against the results-line model and its
result against its scorer kind's result model, named by path and line on the first problem.

A report built from a silently skipped line would misstate the run. Lines come back as dicts
in the results-line shape of formats 2 and 3 (format 1 lines are upgraded as they are read), so
the aggregate, table and page read one shape; a format 3 header is checked and not returned.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from offline_scorer.batch.results import (
    LineProblem,
    is_header,
    json_type,
    parse_header,
    parse_line,
)
from offline_scorer.errors import InputError
from offline_scorer.files import open_binary
from offline_scorer.scorers.registry import DEFAULT_KIND, get_spec
from offline_scorer.scorers.spec import ScorerSpec
from offline_scorer.scorers.validation import result_problem

ResultLine = dict[str, Any]  # one parsed results line (an input row is batch.datasets.Item)


def read_results(
    path: str | os.PathLike[str], slim: bool = False, kind: str | None = None
) -> list[ResultLine]:
    """Every line of a results file, validated, so later steps can trust the shape.

    Read as a stream. `slim` keeps of each line only what `aggregate` reads without a `label`
    argument (the kind's weakest verdict probability, its label fields; not the rest of the
    result, nor the digest), so `eval`'s closing summary costs about 1 KB per line. `kind`
    keeps only that scorer kind's lines; without it, a file mixing kinds is refused in one line.
    """
    path = Path(path)
    items: list[ResultLine] = []
    with open_binary(path, "results file") as handle:
        for number, raw in enumerate(handle, start=1):
            torn_possible = not raw.endswith(b"\n")
            try:
                value = _parse(raw.removesuffix(b"\n"), first=number == 1)
                if number == 1 and is_header(value):
                    parse_header(value)  # checked; the lines say all a report shows
                    continue
                item = check_line(value)
            except LineProblem as error:
                if torn_possible and isinstance(error.__cause__, ValueError):
                    raise InputError(
                        f"{path} line {number}: the last line is cut off (no line break at the "
                        "end and not valid JSON), so the run that wrote it was probably killed; "
                        "finish or re-run the evaluation, or delete that line to report on the "
                        "rest"
                    ) from None
                raise InputError(
                    f"{path} line {number}: {error}; fix or remove that line (results files "
                    "are written by the batch evaluator, one JSON object per line)"
                ) from None
            if kind is not None and item["scorer"] != kind:
                continue
            items.append(_slim(item) if slim else item)
    if kind is None:
        _one_kind(path, items)
    return items


def _one_kind(path: Path, items: Sequence[ResultLine]) -> None:
    counts = Counter(item["scorer"] for item in items)
    if len(counts) > 1:
        found = ", ".join(f"{kind} ({count} lines)" for kind, count in sorted(counts.items()))
        raise InputError(
            f"{path} mixes scorer kinds: {found}; report one at a time with --scorer KIND"
        )


def kind_of(items: Sequence[Mapping[str, Any]]) -> ScorerSpec:
    """The scorer kind of a run's lines (the default one for an empty file)."""
    return get_spec(items[0]["scorer"] if items else DEFAULT_KIND)


def _slim(item: ResultLine) -> ResultLine:
    """What `aggregate` reads of a line, with shared key and label strings: about 1 KB."""
    spec = get_spec(item["scorer"])
    kept = {sys.intern(key): value for key, value in item.items() if key not in _SLIM_DROPS}
    for key in ("status", "limiting_axis", "scorer"):
        if isinstance(kept.get(key), str):
            kept[key] = sys.intern(kept[key])
    metadata = item.get("metadata") or {}
    kept["metadata"] = {name: metadata[name] for name in spec.label_fields if name in metadata}
    result = item["result"]
    weakest = None
    if isinstance(result, dict) and spec.weakest_probability is not None:
        weakest = spec.weakest_probability(result)
    kept["result"] = None
    kept[WEAKEST] = weakest
    return kept


_SLIM_DROPS = frozenset({"result", "digest", "metadata"})
WEAKEST = sys.intern("_weakest")
"""A slim line's weakest verdict probability (its result is dropped)."""


def weakest_probability(item: Mapping[str, Any]) -> float | None:
    """The item's weakest verdict probability, from a full or a slim line."""
    if WEAKEST in item:
        found: float | None = item[WEAKEST]
        return found
    spec = get_spec(item["scorer"])
    result = item.get("result")
    if spec.weakest_probability is None or not isinstance(result, dict):
        return None
    return spec.weakest_probability(result)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def _parse(raw: bytes, first: bool) -> Any:
    """A line's JSON value; LineProblem (chaining a ValueError) when it is not JSON."""
    if first and raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise LineProblem(
            f"not valid UTF-8 (byte 0x{raw[error.start]:02x} at column {error.start + 1})"
        ) from error
    if not text.strip():
        raise LineProblem("the line is empty")
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as error:
        raise LineProblem(f"not valid JSON ({error.msg} at column {error.colno})") from error
    except ValueError as error:
        raise LineProblem(f"not valid JSON ({error})") from error
    return value


def check_line(value: Any) -> ResultLine:
    """A parsed JSON value as a format 2 line dict; LineProblem names the first thing wrong.

    The rules are the results line's (batch.results) and the kind's result model; none live
    here. It must not chain a ValueError: read_results takes that for a torn line.
    """
    if not isinstance(value, dict):
        raise LineProblem(f"expected a JSON object, found {json_type(value)}")
    line = parse_line(value)
    try:
        spec = get_spec(line.scorer)
    except InputError as error:
        raise LineProblem(str(error)) from None
    if tuple(line.axes) != spec.axes:
        raise LineProblem(
            f"'axes' must be those of the {spec.kind} scorer ({', '.join(spec.axes)}), found "
            f"{', '.join(line.axes) or 'none'}"
        )
    if line.result is not None:
        problem = result_problem(spec.result, line.result)
        if problem is not None:
            raise LineProblem(problem)
    return line.model_dump(mode="python")
