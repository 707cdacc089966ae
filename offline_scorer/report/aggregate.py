"""The run-level numbers over a results file's lines (read and checked by `report.lines`).

The aggregate speaks of a generic score plus the kind's named axes, so a scorer with other
axes needs no code here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from offline_scorer.report.axes import axes_of, limits
from offline_scorer.report.lines import kind_of
from offline_scorer.report.model import Aggregate, Failure, LowestItem
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
) -> Aggregate:
    """Run-level numbers over the ok items; failures are counted and listed, never averaged.

    `axes` defaults to those the lines carry (`axes_of`); each gets a mean. `quality` holds
    judge-quality figures against the label in the items' metadata (the field `label`, else
    the first of faithful, label, human_score found), or None without labels.
    """
    axes = (axes_of(items) or kind_of(items).axes) if axes is None else tuple(axes)
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
        axis_means={axis: mean([item["axes"][axis] for item in ok]) for axis in axes},
        limited_by=limited_by,
        lowest=[
            LowestItem(
                id=items[i]["id"],
                score=items[i]["score"],
                axes={axis: items[i]["axes"][axis] for axis in axes},
                limiting_axis=items[i]["limiting_axis"],
            )
            for i in lowest_indices(items)
        ],
        failures=[
            Failure(id=item["id"], line=item["line"], error=item["error"])
            for item in items
            if item["status"] == "error"
        ],
        quality=judge_quality(kind_of(items), items, label),
    )
