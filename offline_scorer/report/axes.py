"""The named axes of a run, read from its results lines rather than hard-coded.

A score is the lowest of its axes; the summarization scorer's are alignment and coverage, but
the report only knows them as the keys a results line carries between "score" and
"limiting_axis" (lines are written with a fixed key order).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from offline_scorer.batch.results import TIES, record_axes
from offline_scorer.errors import InputError
from offline_scorer.scorers.summarization.rule import AXES as SUMMARIZATION_AXES

# The summarization scorer's axes, which today's lines carry; also assumed for an empty file.
DEFAULT_AXES = SUMMARIZATION_AXES


def limits(axes: Sequence[str]) -> tuple[str, ...]:
    """Every value limiting_axis can take with these axes, in display order."""
    return (*axes, *TIES)


def axes_of(items: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    """The named axes of a run: the keys between "score" and "limiting_axis" of its lines.

    Results lines are written with a fixed key order, so the first line decides; every other
    line must have the same axes, else the aggregate would compare different things.
    """
    if not items:
        return DEFAULT_AXES
    axes = record_axes(items[0]) or DEFAULT_AXES
    clash = [axis for axis in axes if axis in TIES]
    if clash:
        raise InputError(f"an axis cannot be called {clash[0]!r}: that is a limiting_axis value")
    for number, item in enumerate(items, start=1):
        missing = [axis for axis in axes if axis not in item]
        if missing:
            raise InputError(
                f"results line {number} lacks the axis {missing[0]!r} that the first line has"
            )
    return axes


def axes_in(agg: Mapping[str, Any]) -> tuple[str, ...]:
    """The axes an aggregate was made with (the keys of its "limited_by" other than ties)."""
    return tuple(key for key in agg["limited_by"] if key not in TIES)
