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

from offline_scorer.report.axes import axes_of, limits
from offline_scorer.report.lines import Item
from offline_scorer.report.numbers import dec, mean, median
from offline_scorer.report.quality import judge_quality

LOWEST_COUNT = 5


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
) -> dict[str, Any]:
    """Run-level numbers over the ok items; failures are counted and listed, never averaged.

    `axes` defaults to those the lines carry (`axes_of`); each gets an "<axis>_mean".
    "quality" holds judge-quality figures against the label in the items' metadata (the field
    `label`, else the first of faithful, label, human_score found), or None without labels.
    """
    axes = axes_of(items) if axes is None else tuple(axes)
    ok = ok_items(items)
    scores = [item["score"] for item in ok]
    limited_by = dict.fromkeys(limits(axes), 0)
    for item in ok:
        limited_by[item["limiting_axis"]] += 1
    return {
        "count": len(items),
        "ok": len(ok),
        "failed": len(items) - len(ok),
        "mean": mean(scores),
        "median": median(scores),
        "min": min(scores, key=dec) if scores else None,
        "max": max(scores, key=dec) if scores else None,
        **{f"{axis}_mean": mean([item["axes"][axis] for item in ok]) for axis in axes},
        "limited_by": limited_by,
        "lowest": [
            {
                "id": items[i]["id"],
                "score": items[i]["score"],
                **{axis: items[i]["axes"][axis] for axis in axes},
                "limiting_axis": items[i]["limiting_axis"],
            }
            for i in lowest_indices(items)
        ],
        "failures": [
            {"id": item["id"], "line": item["line"], "error": item["error"]}
            for item in items
            if item["status"] == "error"
        ],
        "quality": judge_quality(items, label),
    }
