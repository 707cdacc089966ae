"""The geometry of the page's two charts: a score histogram, and one axis against the other.

Only positions, counts and words are computed here; templates/histogram.svg and scatter.svg lay
them out as inline SVG, escaped by the template engine like any other text (axis names and ids
come from the results file). Coordinates are printed at a fixed precision (`coordinate`), so the
page's bytes do not depend on float noise.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_FLOOR, Context, Decimal, localcontext
from typing import Any

from offline_scorer.report.axes import limits
from offline_scorer.report.numbers import dec, num

# Colorblind-safe (Okabe-Ito), one per axis in order; the ties get their own two.
_AXIS_COLOURS = ("#d55e00", "#0072b2", "#009e73", "#e69f00", "#cc79a7", "#56b4e9")
_TIE_COLOURS = {"both": "#8e44ad", "none": "#6b6b6b"}
_SHOWN_NAMES = 15  # ids listed in a crowded point's hover text


def axis_colours(axes: Sequence[str]) -> dict[str, str]:
    """One colour per limiting_axis value, used in the scatter and the tables alike."""
    colours = {axis: _AXIS_COLOURS[n % len(_AXIS_COLOURS)] for n, axis in enumerate(axes)}
    return {**colours, **_TIE_COLOURS}


def limit_labels(axes: Sequence[str]) -> dict[str, str]:
    """What each limiting_axis value means, in words for the legend and the hover text."""
    every = "both" if len(axes) == 2 else "all"
    return {
        **{axis: f"{axis} limits" for axis in axes},
        "both": f"{every} equal, below top",
        "none": f"{every} at top",
    }


def css_name(axis: str) -> str:
    """An axis name made safe inside a CSS class name (it comes from the results file)."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", axis)


def coordinate(value: float) -> str:
    """SVG coordinates with a fixed precision, so output bytes do not depend on float noise."""
    text = f"{value:.1f}"
    return "0.0" if text == "-0.0" else text


def _nice_top(largest: Decimal) -> Decimal:
    """1 for the usual 0..1 scale; else the next 1/2/2.5/5 x 10^k so ticks are round numbers."""
    if largest <= 1:
        return Decimal(1)
    exponent = largest.adjusted()
    for base in (Decimal(1), Decimal(2), Decimal("2.5"), Decimal(5), Decimal(10)):
        top = base.scaleb(exponent)
        if top >= largest:
            return top
    return Decimal(10).scaleb(exponent)  # pragma: no cover - 10 x 10^k always suffices


def _value(item: Mapping[str, Any], key: str) -> Any:
    """The item's score ("score") or its value on an axis."""
    return item["score"] if key == "score" else item["axes"][key]


def _scale_top(ok: Sequence[Mapping[str, Any]], keys: Sequence[str]) -> Decimal:
    values = [dec(_value(item, key)) for item in ok for key in keys]
    return _nice_top(max(values, default=Decimal(0)))


def _tick_label(value: Decimal) -> str:
    return format(value.normalize(), "f")


def _count_step(largest: int) -> int:
    """The smallest 1/2/5 x 10^k integer tick step giving at most six ticks above zero."""
    magnitude = 1
    while True:
        for base in (1, 2, 5):
            if largest <= 6 * base * magnitude:
                return base * magnitude
        magnitude *= 10


@dataclass(frozen=True)
class Tick:
    """A gridline or axis mark at `at` (x or y, whichever the axis runs along) and its label."""

    at: float
    label: str


@dataclass(frozen=True)
class Bin:
    """One histogram bin: its slot (`x`, `width`), its bar's top and height, and its range."""

    x: float
    width: float
    top: float
    height: float
    count: int
    title: str


@dataclass(frozen=True)
class Histogram:
    """Scores in ten equal bins; `left`/`upper` place the plot area in the picture."""

    width: int
    height: int
    left: int
    upper: int
    plot_w: int
    plot_h: int
    counts: tuple[Tick, ...]  # y ticks: item counts
    bins: tuple[Bin, ...]
    edges: tuple[Tick, ...]  # x ticks: the bins' edges


def histogram(ok: Sequence[Mapping[str, Any]]) -> Histogram:
    """Each bin includes its lower edge, the last also its upper; edges are exact decimals."""
    top = _scale_top(ok, ("score",))
    counts = [0] * 10
    for item in ok:
        with localcontext(Context(prec=60)):
            index = int((dec(item["score"]) * 10 / top).to_integral_value(rounding=ROUND_FLOOR))
        counts[min(max(index, 0), 9)] += 1
    width, height = 520, 320
    left, right, upper, bottom = 56, 22, 24, 58
    plot_w, plot_h = width - left - right, height - upper - bottom
    step = _count_step(max(max(counts), 1))
    y_top = max(step * math.ceil(max(max(counts), 1) / step), 1)
    bin_w = plot_w / 10
    bins = []
    for index, count in enumerate(counts):
        low, high = top * index / 10, top * (index + 1) / 10
        closing = "]" if index == 9 else ")"
        bar_h = plot_h * count / y_top
        noun = "item" if count == 1 else "items"
        bins.append(
            Bin(
                x=left + bin_w * index,
                width=bin_w,
                top=upper + plot_h - bar_h,
                height=bar_h,
                count=count,
                title=f"score in [{_tick_label(low)}, {_tick_label(high)}{closing}: {count} {noun}",
            )
        )
    return Histogram(
        width=width,
        height=height,
        left=left,
        upper=upper,
        plot_w=plot_w,
        plot_h=plot_h,
        counts=tuple(
            Tick(upper + plot_h - plot_h * tick / y_top, str(tick))
            for tick in range(0, y_top + 1, step)
        ),
        bins=tuple(bins),
        edges=tuple(
            Tick(left + bin_w * index, _tick_label(top * index / 10)) for index in range(11)
        ),
    )


@dataclass(frozen=True)
class Point:
    """The items at one spot with one limiting axis, drawn as one circle (numbered if many)."""

    x: float
    y: float
    radius: float
    colour: str
    count: int
    title: str
    names: tuple[str, ...]


@dataclass(frozen=True)
class LegendEntry:
    x: int
    y: int
    colour: str
    text: str


@dataclass(frozen=True)
class Scatter:
    """The first axis up, the second across, in a `size` square whose corner is left/upper.

    Above the diagonal the up axis exceeds the across one, so the across axis limits the score
    there: `upper_zone` names what limits it above, `lower_zone` below.
    """

    width: int
    height: int
    left: int
    upper: int
    size: int
    up: str
    across: str
    title: str
    upper_zone: str
    lower_zone: str
    ticks: tuple[tuple[Tick, Tick], ...]  # (across, up) at the same value
    points: tuple[Point, ...]
    legend: tuple[LegendEntry, ...]


def _point_text(members: Sequence[Mapping[str, Any]], where: str) -> tuple[str, list[str]]:
    """(a point's heading, the items it names): at most _SHOWN_NAMES, then how many more."""
    n = len(members)
    names = [f"{m['id']} (score {num(m['score'])})" for m in members[:_SHOWN_NAMES]]
    if n > _SHOWN_NAMES:
        names.append(f"… and {n - _SHOWN_NAMES} more")
    return (f"{n} items" if n > 1 else "1 item") + f" at {where}", names


def _legend(
    ok: Sequence[Mapping[str, Any]],
    choices: Sequence[str],
    colours: Mapping[str, str],
    labels: Mapping[str, str],
    left: int,
    top: int,
) -> tuple[LegendEntry, ...]:
    """One entry per limiting axis with how many items it limits, two to a row."""
    counts = {axis: sum(1 for item in ok if item["limiting_axis"] == axis) for axis in choices}
    return tuple(
        LegendEntry(
            x=left + (index % 2) * 190,
            y=top + (index // 2) * 20,
            colour=colours[axis],
            text=f"{labels[axis]} ({counts[axis]})",
        )
        for index, axis in enumerate(choices)
    )


def scatter(ok: Sequence[Mapping[str, Any]], axes: Sequence[str]) -> Scatter:
    """The first axis up, the second across: the diagonal splits which one limits the score."""
    y_axis, x_axis = axes
    choices = limits(axes)
    colours, labels = axis_colours(axes), limit_labels(axes)
    top = _scale_top(ok, axes)
    size = 360
    left, upper = 60, 20
    top_f = float(top)

    def px(value: float | Decimal) -> float:
        return left + size * float(value) / top_f

    def py(value: float | Decimal) -> float:
        return upper + size - size * float(value) / top_f

    ticks = []
    for index in range(6):
        value = top * index / 5
        ticks.append((Tick(px(value), _tick_label(value)), Tick(py(value), _tick_label(value))))
    groups: dict[tuple[Decimal, Decimal, str], list[Mapping[str, Any]]] = {}
    for item in ok:
        key = (dec(item["axes"][x_axis]), dec(item["axes"][y_axis]), item["limiting_axis"])
        groups.setdefault(key, []).append(item)
    # Big (crowded) points first so single points drawn later stay visible on top of them.
    ordered = sorted(
        groups.items(), key=lambda kv: (-len(kv[1]), kv[0][0], kv[0][1], choices.index(kv[0][2]))
    )
    points = []
    for (across, up, axis), members in ordered:
        n = len(members)
        where = f"{x_axis} {num(float(across))}, {y_axis} {num(float(up))}, {labels[axis]}"
        head, names = _point_text(members, where)
        points.append(
            Point(
                x=px(float(across)),
                y=py(float(up)),
                radius=min(5 + 3 * math.sqrt(n - 1), 16),
                colour=colours[axis],
                count=n,
                title=head,
                names=tuple(names),
            )
        )
    legend = _legend(ok, choices, colours, labels, left, upper + size + 62)
    return Scatter(
        width=left + size + 24,
        height=upper + size + 96,
        left=left,
        upper=upper,
        size=size,
        up=y_axis,
        across=x_axis,
        title=f"{y_axis[:1].upper() + y_axis[1:]} against {x_axis}, one point per item",
        upper_zone=labels[x_axis],
        lower_zone=labels[y_axis],
        ticks=tuple(ticks),
        points=tuple(points),
        legend=legend,
    )
