"""The page's two charts as inline SVG: a score histogram, and one axis against the other.

Inline SVG with fixed-precision coordinates keeps the page self-contained and its bytes
stable. Axis names come from the results lines, so they are escaped like any other user text.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Mapping, Sequence
from decimal import ROUND_FLOOR, Context, Decimal, localcontext
from typing import Any

from offline_scorer.report.axes import limits
from offline_scorer.report.numbers import dec, num

# Colorblind-safe (Okabe-Ito), one per axis in order; the ties get their own two.
_AXIS_COLOURS = ("#d55e00", "#0072b2", "#009e73", "#e69f00", "#cc79a7", "#56b4e9")
_TIE_COLOURS = {"both": "#8e44ad", "none": "#6b6b6b"}


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


_CONTROL = {i: "\ufffd" for i in (*range(9), 11, 12, *range(14, 32), 127)}


def esc(text: object) -> str:
    """Escaped for element text and attributes; lone surrogates cannot be written as UTF-8."""
    cleaned = str(text).translate(_CONTROL).encode("utf-8", "replace").decode("utf-8")
    return html.escape(cleaned, quote=True)


def _f(value: float) -> str:
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


def _scale_top(ok: Sequence[Mapping[str, Any]], keys: Sequence[str]) -> Decimal:
    values = [dec(item[key]) for item in ok for key in keys]
    return _nice_top(max(values, default=Decimal(0)))


def _tick_label(value: Decimal) -> str:
    text = format(value.normalize(), "f")
    return text


def _count_step(largest: int) -> int:
    """The smallest 1/2/5 x 10^k integer tick step giving at most six ticks above zero."""
    magnitude = 1
    while True:
        for base in (1, 2, 5):
            if largest <= 6 * base * magnitude:
                return base * magnitude
        magnitude *= 10


def histogram_svg(ok: Sequence[Mapping[str, Any]]) -> str:
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
    out = [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        'aria-labelledby="hist-title">',
        '<title id="hist-title">Histogram of scores, 10 bins</title>',
    ]
    for tick in range(0, y_top + 1, step):
        y = upper + plot_h - plot_h * tick / y_top
        out.append(
            f'<line class="grid" x1="{left}" x2="{left + plot_w}" y1="{_f(y)}" y2="{_f(y)}"/>'
        )
        out.append(
            f'<text class="tick" x="{left - 6}" y="{_f(y + 4)}" text-anchor="end">{tick}</text>'
        )
    bin_w = plot_w / 10
    for index, count in enumerate(counts):
        low, high = top * index / 10, top * (index + 1) / 10
        closing = "]" if index == 9 else ")"
        x = left + bin_w * index
        bar_h = plot_h * count / y_top
        noun = "item" if count == 1 else "items"
        out.append(
            f"<g><title>score in [{_tick_label(low)}, {_tick_label(high)}{closing}: "
            f"{count} {noun}</title>"
        )
        out.append(
            f'<rect class="bar" x="{_f(x + 2)}" y="{_f(upper + plot_h - bar_h)}" '
            f'width="{_f(bin_w - 4)}" height="{_f(bar_h)}"/>'
        )
        if count:
            out.append(
                f'<text class="count" x="{_f(x + bin_w / 2)}" '
                f'y="{_f(upper + plot_h - bar_h - 5)}" text-anchor="middle">{count}'
                "</text>"
            )
        out.append("</g>")
    for index in range(11):
        x = left + bin_w * index
        out.append(
            f'<line class="axis" x1="{_f(x)}" x2="{_f(x)}" y1="{upper + plot_h}" '
            f'y2="{upper + plot_h + 5}"/>'
        )
        out.append(
            f'<text class="tick" x="{_f(x)}" y="{upper + plot_h + 19}" '
            f'text-anchor="middle">{_tick_label(top * index / 10)}</text>'
        )
    out += [
        f'<line class="axis" x1="{left}" x2="{left + plot_w}" y1="{upper + plot_h}" '
        f'y2="{upper + plot_h}"/>',
        f'<line class="axis" x1="{left}" x2="{left}" y1="{upper}" y2="{upper + plot_h}"/>',
        f'<text class="label" x="{_f(left + plot_w / 2)}" y="{height - 14}" '
        'text-anchor="middle">score</text>',
        f'<text class="label" transform="translate(16 {_f(upper + plot_h / 2)}) rotate(-90)" '
        'text-anchor="middle">items</text>',
        "</svg>",
    ]
    return "\n".join(out)


def scatter_svg(ok: Sequence[Mapping[str, Any]], axes: Sequence[str]) -> str:
    """The first axis up, the second across: the diagonal splits which one limits the score."""
    y_axis, x_axis = axes
    choices = limits(axes)
    colours, labels = axis_colours(axes), limit_labels(axes)
    top = _scale_top(ok, axes)
    size = 360
    left, upper = 60, 20
    width, height = left + size + 24, upper + size + 96
    top_f = float(top)

    def px(value: float | Decimal) -> float:
        return left + size * float(value) / top_f

    def py(value: float | Decimal) -> float:
        return upper + size - size * float(value) / top_f

    out = [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        'aria-labelledby="scatter-title">',
        f'<title id="scatter-title">{esc(y_axis[:1].upper() + y_axis[1:])} against '
        f"{esc(x_axis)}, one point per item</title>",
        # Above the diagonal the y axis exceeds the x axis, so the x axis limits the score.
        f'<polygon class="zone-{css_name(x_axis)}" points="{left},{upper + size} {left},{upper} '
        f'{left + size},{upper}"/>',
        f'<polygon class="zone-{css_name(y_axis)}" points="{left},{upper + size} '
        f'{left + size},{upper + size} {left + size},{upper}"/>',
        f'<text class="zone" x="{left + 8}" y="{upper + 16}">{esc(labels[x_axis])}</text>',
        f'<text class="zone" x="{left + size - 8}" y="{upper + size - 8}" '
        f'text-anchor="end">{esc(labels[y_axis])}</text>',
    ]
    for index in range(6):
        value = top * index / 5
        x, y = px(value), py(value)
        out += [
            f'<line class="grid" x1="{_f(x)}" x2="{_f(x)}" y1="{upper}" y2="{upper + size}"/>',
            f'<line class="grid" x1="{left}" x2="{left + size}" y1="{_f(y)}" y2="{_f(y)}"/>',
            f'<text class="tick" x="{_f(x)}" y="{upper + size + 19}" '
            f'text-anchor="middle">{_tick_label(value)}</text>',
            f'<text class="tick" x="{left - 7}" y="{_f(y + 4)}" '
            f'text-anchor="end">{_tick_label(value)}</text>',
        ]
    out += [
        f'<line class="diagonal" x1="{left}" y1="{upper + size}" x2="{left + size}" '
        f'y2="{upper}"><title>{esc(y_axis)} = {esc(x_axis)}</title></line>',
        f'<rect class="frame" x="{left}" y="{upper}" width="{size}" height="{size}"/>',
        f'<text class="label" x="{left + size // 2}" y="{upper + size + 40}" '
        f'text-anchor="middle">{esc(x_axis)}</text>',
        f'<text class="label" transform="translate(18 {upper + size // 2}) rotate(-90)" '
        f'text-anchor="middle">{esc(y_axis)}</text>',
    ]
    groups: dict[tuple[Decimal, Decimal, str], list[Mapping[str, Any]]] = {}
    for item in ok:
        key = (dec(item[x_axis]), dec(item[y_axis]), item["limiting_axis"])
        groups.setdefault(key, []).append(item)
    # Big (crowded) points first so single points drawn later stay visible on top of them.
    ordered = sorted(
        groups.items(), key=lambda kv: (-len(kv[1]), kv[0][0], kv[0][1], choices.index(kv[0][2]))
    )
    for (across, up, axis), members in ordered:
        n = len(members)
        radius = min(5 + 3 * math.sqrt(n - 1), 16)
        names = [f"{m['id']} (score {num(m['score'])})" for m in members[:15]]
        if n > 15:
            names.append(f"… and {n - 15} more")
        head = (f"{n} items" if n > 1 else "1 item") + (
            f" at {x_axis} {num(float(across))}, {y_axis} {num(float(up))}, {labels[axis]}"
        )
        x, y = px(float(across)), py(float(up))
        out.append(
            f'<g class="point"><title>{esc(head)}&#10;{"&#10;".join(map(esc, names))}</title>'
        )
        out.append(f'<circle cx="{_f(x)}" cy="{_f(y)}" r="{_f(radius)}" fill="{colours[axis]}"/>')
        if n > 1:
            out.append(
                f'<text class="n" x="{_f(x)}" y="{_f(y + 3.5)}" text-anchor="middle">{n}</text>'
            )
        out.append("</g>")
    counts = {axis: sum(1 for item in ok if item["limiting_axis"] == axis) for axis in choices}
    legend_y = upper + size + 62
    for index, axis in enumerate(choices):
        column, row = index % 2, index // 2
        x = left + column * 190
        y = legend_y + row * 20
        out.append(f'<circle cx="{x + 6}" cy="{y - 4}" r="5" fill="{colours[axis]}"/>')
        out.append(
            f'<text class="legend" x="{x + 16}" y="{y}">{esc(labels[axis])} ({counts[axis]})</text>'
        )
    out.append("</svg>")
    return "\n".join(out)


def zone_rules(axes: Sequence[str]) -> str:
    """The page's CSS for the scatter's shaded zones, one per axis in that axis's colour."""
    colours = axis_colours(axes)
    return "\n".join(
        f"svg .zone-{css_name(axis)} {{ fill: {colours[axis]}; fill-opacity: 0.05; }}"
        for axis in reversed(axes)
    )
