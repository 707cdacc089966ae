"""Reading a results file strictly, and the run-level numbers over it.

A report built from a silently skipped line would misstate the run, so every line is checked.
The aggregate speaks of a generic score plus named axes (see report.axes), so a scorer with other
axes needs no code here. Lines are checked against the results-line and result models.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from offline_scorer.batch.results import json_type, line_problem, record_axes
from offline_scorer.errors import InputError
from offline_scorer.files import open_binary
from offline_scorer.report.axes import DEFAULT_AXES, axes_of, limits
from offline_scorer.report.model import Aggregate, Failure, LowestItem
from offline_scorer.report.numbers import dec, mean, median
from offline_scorer.report.quality import LABEL_FIELDS, judge_quality
from offline_scorer.scorers.summarization.result import result_problem

Item = dict[str, Any]

LOWEST_COUNT = 5


class _LineError(Exception):
    """What is wrong with one line; read_results adds the path and line number."""


def read_results(path: str | os.PathLike[str], slim: bool = False) -> list[Item]:
    """Every line of a results file, validated, so later steps can trust the shape.

    Read as a stream. `slim` keeps of each line only what `aggregate` reads without a `label`
    argument (the claims' P(supported), the label fields of the metadata; not the rest of the
    result, nor the digest), so `eval`'s closing summary costs about 1 KB per line.
    """
    path = Path(path)
    items: list[Item] = []
    with open_binary(path, "results file") as handle:
        for number, raw in enumerate(handle, start=1):
            torn_possible = not raw.endswith(b"\n")
            try:
                item = _parse_line(raw.removesuffix(b"\n"), first=number == 1)
            except _LineError as error:
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
            items.append(_slim(item) if slim else item)
    return items


def _slim(item: Item) -> Item:
    """What `aggregate` reads of a line, with shared key and label strings: about 1 KB."""
    kept = {sys.intern(key): value for key, value in item.items() if key not in _SLIM_DROPS}
    for key in ("status", "limiting_axis"):
        if isinstance(kept.get(key), str):
            kept[key] = sys.intern(kept[key])
    metadata = item.get("metadata") or {}
    kept["metadata"] = {name: metadata[name] for name in LABEL_FIELDS if name in metadata}
    result = item["result"]
    found = result.get("verdictProbabilities") if isinstance(result, dict) else None
    alignment = found.get("alignment") if isinstance(found, dict) else None
    kept["result"] = None if alignment is None else {_PROBABILITIES: {_ALIGNMENT: alignment}}
    return kept


_SLIM_DROPS = frozenset({"result", "digest", "metadata"})
_PROBABILITIES = sys.intern("verdictProbabilities")
_ALIGNMENT = sys.intern("alignment")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def _parse_line(raw: bytes, first: bool) -> Item:
    if first and raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise _LineError(
            f"not valid UTF-8 (byte 0x{raw[error.start]:02x} at column {error.start + 1})"
        ) from error
    if not text.strip():
        raise _LineError("the line is empty")
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as error:
        raise _LineError(f"not valid JSON ({error.msg} at column {error.colno})") from error
    except ValueError as error:
        raise _LineError(f"not valid JSON ({error})") from error
    if not isinstance(value, dict):
        raise _LineError(f"expected a JSON object, found {json_type(value)}")
    check_line(value)
    return value


def check_line(record: dict[str, Any]) -> None:
    """Raise _LineError naming the first thing wrong with one parsed results line.

    The rules are the results line's (batch.results) and the result model's; none live here.
    It must not chain a ValueError: read_results takes that for a torn (half-written) line.
    """
    problem = line_problem(record, record_axes(record) or DEFAULT_AXES, result_problem)
    if problem is not None:
        raise _LineError(problem)


def ok_items(items: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [item for item in items if item["status"] == "ok"]


def lowest_indices(items: Sequence[Mapping[str, Any]], count: int = LOWEST_COUNT) -> list[int]:
    """Positions of the lowest-scoring ok items; ties go to the earlier item for stable output."""
    ranked = sorted(
        (dec(item["score"]), index) for index, item in enumerate(items) if item["status"] == "ok"
    )
    return [index for _, index in ranked[:count]]


def aggregate(
    items: Sequence[Mapping[str, Any]],
    label: str | None = None,
    axes: Sequence[str] | None = None,
) -> Aggregate:
    """Run-level numbers over the ok items; failures are counted and listed, never averaged.

    `axes` defaults to those the lines carry (`axes_of`); each gets a mean. `quality` holds
    judge-quality figures against the label in the items' metadata (the field `label`, else
    the first of faithful, label, human_score found), or None without labels.
    """
    axes = axes_of(items) if axes is None else tuple(axes)
    ok = ok_items(items)
    scores = [item["score"] for item in ok]
    limited_by = dict.fromkeys(limits(axes), 0)
    for item in ok:
        limited_by[item["limiting_axis"]] += 1
    return Aggregate(
        count=len(items),
        ok=len(ok),
        failed=len(items) - len(ok),
        mean=mean(scores),
        median=median(scores),
        min=min(scores, key=dec) if scores else None,
        max=max(scores, key=dec) if scores else None,
        axis_means={axis: mean([item[axis] for item in ok]) for axis in axes},
        limited_by=limited_by,
        lowest=[
            LowestItem(
                id=items[i]["id"],
                score=items[i]["score"],
                axes={axis: items[i][axis] for axis in axes},
                limiting_axis=items[i]["limiting_axis"],
            )
            for i in lowest_indices(items)
        ],
        failures=[
            Failure(id=item["id"], line=item["line"], error=item["error"])
            for item in items
            if item["status"] == "error"
        ],
        quality=judge_quality(items, label),
    )
