"""The named axes of a run, read from its results lines' "axes" objects.

A score is limited by its axes; which ones is the scorer kind's business (its spec), and every
line of a run carries the same names in the same order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from offline_scorer.batch.results import TIES
from offline_scorer.errors import InputError


def limits(axes: Sequence[str]) -> tuple[str, ...]:
    """Every value limiting_axis can take with these axes, in display order."""
    return (*axes, *TIES)


def axes_of(items: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    """The named axes of a run: the first line's, which every other line must have too, else
    the aggregate would compare different things."""
    if not items:
        return ()
    axes = tuple(items[0]["axes"])
    clash = [axis for axis in axes if axis in TIES]
    if clash:
        raise InputError(f"an axis cannot be called {clash[0]!r}: that is a limiting_axis value")
    for number, item in enumerate(items, start=1):
        missing = [axis for axis in axes if axis not in item["axes"]]
        if missing:
            raise InputError(
                f"results line {number} lacks the axis {missing[0]!r} that the first line has"
            )
    return axes
