"""The geometry of the judge-quality section's two charts: a ROC curve and a reliability diagram.

Both plot the judge's weakest P(true) over the verdicts of the kind's judged axis (the per-item
number behind the table's "ROC AUC, weakest ... P(true)") against a binary human label, so a
reader choosing a judge sees what that AUC means and whether the probabilities can be read as
probabilities. As in charts.py, only positions, counts and words are computed here;
templates/roc.svg and reliability.svg lay them out, and every float is printed through
`coordinate`, so the page's bytes do not depend on float noise.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_FLOOR
from typing import Any

from offline_scorer.report.charts import _AXIS_COLOURS, Tick
from offline_scorer.report.lines import weakest_probability
from offline_scorer.report.model import BinaryQuality
from offline_scorer.report.numbers import dec, mean, num
from offline_scorer.report.quality import binary_label, labelled

# The page's colour-blind-safe palette (charts.py): blue for data, vermillion for the judge's
# own operating point, grey for the reference diagonals.
_DATA = _AXIS_COLOURS[1]
_MARK = _AXIS_COLOURS[0]
_BINS = 10
_SIZE = 320  # the square plot area, in pixels
_LEFT, _UPPER, _RIGHT, _BELOW = 62, 40, 24, 108
_LABEL_W = 140  # room for the marker's label, "TPR 0.00, FPR 0.00" at 11px


# --------------------------------------------------------------------------- pure figures


def roc_points(scores: Sequence[float], labels: Sequence[bool]) -> list[tuple[int, int]]:
    """(false positives, true positives) as the cut on the score falls from above the highest.

    Items are taken in descending score order and a group of tied scores is passed in one
    step (a diagonal segment), because no threshold can separate tied items; the area under
    these vertices is then exactly the rank AUC, where a tie counts 1/2.
    """
    ordered = sorted(zip(scores, labels, strict=True), key=lambda pair: -pair[0])
    points = [(0, 0)]
    fp = tp = 0
    for index, (score, label) in enumerate(ordered):
        fp, tp = (fp, tp + 1) if label else (fp + 1, tp)
        if index + 1 == len(ordered) or ordered[index + 1][0] != score:
            points.append((fp, tp))
    return points


@dataclass(frozen=True)
class BinCount:
    """One reliability bin: its items, how many carry the positive label, their mean P(true)."""

    index: int
    count: int
    positives: int
    mean_p: float | None

    @property
    def observed(self) -> float | None:
        """The share of the bin's items labelled positive: what P(true) should have been."""
        return self.positives / self.count if self.count else None


def reliability_bins(scores: Sequence[float], labels: Sequence[bool]) -> list[BinCount]:
    """Ten equal bins of [0, 1], each with its lower edge, the last also 1 itself.

    The bin is found on the exact decimal of the probability, as the histogram does, so a
    value on an edge (0.7) belongs to the bin it opens ([0.7, 0.8)) whatever its binary
    rounding.
    """
    members: list[list[tuple[float, bool]]] = [[] for _ in range(_BINS)]
    for score, label in zip(scores, labels, strict=True):
        index = int((dec(score) * _BINS).to_integral_value(rounding=ROUND_FLOOR))
        members[min(max(index, 0), _BINS - 1)].append((score, label))
    return [
        BinCount(
            index=index,
            count=len(found),
            positives=sum(1 for _, label in found if label),
            mean_p=mean([score for score, _ in found]),
        )
        for index, found in enumerate(members)
    ]


# --------------------------------------------------------------------------- shared pieces


@dataclass(frozen=True)
class Key:
    """A legend entry: a sample of a line ("line"/"dashed") or a dot, and its words."""

    x: int
    y: int
    shape: str
    colour: str
    text: str


def _px(value: float) -> float:
    return _LEFT + _SIZE * value


def _py(value: float) -> float:
    return _UPPER + _SIZE - _SIZE * value


def _ticks() -> tuple[tuple[Tick, Tick], ...]:
    """(across, up) ticks at 0, 0.2, ..., 1: both axes of both charts are rates or P."""
    return tuple(
        (Tick(_px(index / 5), num(index / 5)), Tick(_py(index / 5), num(index / 5)))
        for index in range(6)
    )


def _rate(count: int, total: int) -> str:
    return f"{count / total:.2f}"


# --------------------------------------------------------------------------- ROC


@dataclass(frozen=True)
class Vertex:
    """A corner of the ROC polyline: its counts and its position in the picture."""

    fp: int
    tp: int
    x: float
    y: float


@dataclass(frozen=True)
class Marker:
    """The judge's own threshold on the curve, with a two-line label placed clear of it.

    The label starts right of the point and below it: the curve only rises to the right, so
    that quadrant holds no curve unless the point is too near the right edge to fit it.
    """

    x: float
    y: float
    lines: tuple[str, str]
    text_x: float
    text_y: float
    title: str


@dataclass(frozen=True)
class Roc:
    """The ROC curve in a `size` square whose corner is left/upper; `title` carries the AUC."""

    width: int
    height: int
    left: int
    upper: int
    size: int
    title: str
    colour: str
    mark_colour: str
    ticks: tuple[tuple[Tick, Tick], ...]
    vertices: tuple[Vertex, ...]
    curve_title: str
    marker: Marker | None
    legend: tuple[Key, ...]


def _marker(
    pairs: Sequence[tuple[float, bool]], threshold: float, label: str, sizes: tuple[int, int]
) -> Marker:
    """Where "positive iff P(true) >= threshold" lands; the label goes to the side with room."""
    positives, negatives = sizes
    tp = sum(1 for p, truth in pairs if truth and p >= threshold)
    fp = sum(1 for p, truth in pairs if not truth and p >= threshold)
    x, y = _px(fp / negatives), _py(tp / positives)
    fits_below = y + 36 <= _UPPER + _SIZE
    return Marker(
        x=x,
        y=y,
        lines=(
            f"threshold {num(threshold)}",
            f"TPR {_rate(tp, positives)}, FPR {_rate(fp, negatives)}",
        ),
        text_x=min(x + 10, _LEFT + _SIZE - _LABEL_W),
        text_y=y + 18 if fits_below else y - 24,
        title=(
            f"the judge's threshold {num(threshold)}: judged {label} iff P(true) >= "
            f"{num(threshold)}; {tp} of {positives} {label} items judged so (TPR "
            f"{_rate(tp, positives)}), {fp} of {negatives} others (FPR {_rate(fp, negatives)})"
        ),
    )


def roc_chart(
    pairs: Sequence[tuple[float, bool]],
    auc: float | None,
    threshold: float | None,
    label: str,
) -> Roc:
    """The curve through `roc_points`; the caller checks both classes have 2 items or more."""
    scores, labels = [p for p, _ in pairs], [truth for _, truth in pairs]
    positives = sum(1 for truth in labels if truth)
    negatives = len(labels) - positives
    vertices = tuple(
        Vertex(fp, tp, _px(fp / negatives), _py(tp / positives))
        for fp, tp in roc_points(scores, labels)
    )
    marker = None
    if threshold is not None:
        marker = _marker(pairs, threshold, label, (positives, negatives))
    key_y = _UPPER + _SIZE + 72
    legend = [
        Key(_LEFT, key_y, "line", _DATA, "the judge's ROC curve"),
        Key(_LEFT, key_y + 20, "dashed", "#888", "chance"),
    ]
    if marker is not None:
        legend.append(Key(_LEFT + 190, key_y + 20, "dot", _MARK, "the judge's threshold"))
    return Roc(
        width=_LEFT + _SIZE + _RIGHT,
        height=_UPPER + _SIZE + _BELOW,
        left=_LEFT,
        upper=_UPPER,
        size=_SIZE,
        title=f"ROC curve, AUC {num(auc)}",
        colour=_DATA,
        mark_colour=_MARK,
        ticks=_ticks(),
        vertices=vertices,
        curve_title=f"{positives} {label} items, {negatives} others, AUC {num(auc)}",
        marker=marker,
        legend=tuple(legend),
    )


# --------------------------------------------------------------------------- reliability


@dataclass(frozen=True)
class Dot:
    """A non-empty bin: mean P(true) across, share labelled positive up, area by item count."""

    x: float
    y: float
    radius: float
    count: int
    title: str


@dataclass(frozen=True)
class Reliability:
    """The reliability diagram; `counts` are the bins' item counts, printed under the axis."""

    width: int
    height: int
    left: int
    upper: int
    size: int
    heading: str
    title: str
    colour: str
    x_label: str
    y_label: str
    ticks: tuple[tuple[Tick, Tick], ...]
    edges: tuple[float, ...]  # x of each bin edge, for faint gridlines
    counts: tuple[Tick, ...]  # at each bin's centre
    dots: tuple[Dot, ...]
    legend: tuple[Key, ...]


def _dot(found: BinCount, largest: int, label: str) -> Dot:
    """A bin's point; its area grows with its count so a bin of two reads as weak evidence."""
    assert found.mean_p is not None and found.observed is not None
    low, high = num(found.index / _BINS), num((found.index + 1) / _BINS)
    closing = "]" if found.index == _BINS - 1 else ")"
    noun = "item" if found.count == 1 else "items"
    return Dot(
        x=_px(found.mean_p),
        y=_py(found.observed),
        radius=3 + 7 * math.sqrt(found.count / largest),
        count=found.count,
        title=(
            f"P(true) in [{low}, {high}{closing}: {found.count} {noun}, mean P(true) "
            f"{num(found.mean_p)}, {found.positives} {label} "
            f"({_rate(found.positives, found.count)})"
        ),
    )


def reliability_chart(pairs: Sequence[tuple[float, bool]], axis: str, label: str) -> Reliability:
    """Mean predicted against observed per bin; on the diagonal, P(true) means what it says."""
    bins = reliability_bins([p for p, _ in pairs], [truth for _, truth in pairs])
    largest = max(found.count for found in bins)
    key_y = _UPPER + _SIZE + 80
    return Reliability(
        width=_LEFT + _SIZE + _RIGHT,
        height=_UPPER + _SIZE + _BELOW,
        left=_LEFT,
        upper=_UPPER,
        size=_SIZE,
        heading="Reliability diagram",
        title=f"Reliability of the weakest {axis} P(true)",
        colour=_DATA,
        x_label="P(true) the judge gave",
        y_label=f"share actually {label}",
        ticks=_ticks(),
        edges=tuple(_px(index / _BINS) for index in range(_BINS + 1)),
        counts=tuple(Tick(_px((found.index + 0.5) / _BINS), str(found.count)) for found in bins),
        dots=tuple(_dot(found, largest, label) for found in bins if found.count),
        legend=(
            Key(_LEFT, key_y, "dot", _DATA, "a bin of P(true); larger = more items"),
            Key(_LEFT, key_y + 20, "dashed", "#888", "perfect calibration"),
        ),
    )


# --------------------------------------------------------------------------- the section


@dataclass(frozen=True)
class QualityCharts:
    """Both charts of a binary label, or the notes that say why one is missing.

    `used` items had a verdict probability; `left_out` labelled items had none.
    """

    label: str
    axis: str
    used: int
    left_out: int
    roc: Roc | None
    roc_note: str
    reliability: Reliability | None
    threshold_note: str


def _threshold(items: Sequence[Mapping[str, Any]]) -> tuple[float | None, str]:
    """The one threshold the items' results carry, or None and why there is no marker.

    The results line stores it beside the probabilities (`verdictProbabilities.threshold`,
    see scorers/summarization/result.py); a run mixing thresholds has no single operating
    point, so it gets none rather than an arbitrary one.
    """
    found = set()
    for item in items:
        result = item.get("result")
        probabilities = result.get("verdictProbabilities") if isinstance(result, dict) else None
        value = probabilities.get("threshold") if isinstance(probabilities, dict) else None
        if isinstance(value, int | float) and not isinstance(value, bool):
            found.add(value)
    if len(found) == 1:
        return found.pop(), ""
    if not found:
        return None, "The results record no verdict threshold, so no operating point is marked."
    listed = ", ".join(num(value) for value in sorted(found))
    return None, f"The items were judged at different thresholds ({listed}): none is marked."


def quality_charts(
    items: Sequence[Mapping[str, Any]], quality: BinaryQuality
) -> QualityCharts | None:
    """The charts of the items `quality` counted; None when none carries a probability."""
    used, _ = labelled(items, quality.label, binary_label)
    with_p = [
        (item, p, truth) for item, truth in used if (p := weakest_probability(item)) is not None
    ]
    if not with_p:
        return None
    pairs = [(p, bool(truth)) for _, p, truth in with_p]
    positives = sum(1 for _, truth in pairs if truth)
    negatives = len(pairs) - positives
    threshold, threshold_note = _threshold([item for item, _, _ in with_p])
    roc, roc_note = None, ""
    if min(positives, negatives) >= 2:
        auc = None if quality.auc_weakest_p is None else quality.auc_weakest_p.value
        roc = roc_chart(pairs, auc, threshold, quality.label)
    else:
        roc_note = (
            f"No ROC curve: it needs at least 2 items of each class with a probability, and "
            f"there are {positives} {quality.label} and {negatives} not."
        )
    return QualityCharts(
        label=quality.label,
        axis=quality.axis,
        used=len(pairs),
        left_out=len(used) - len(pairs),
        roc=roc,
        roc_note=roc_note,
        reliability=reliability_chart(pairs, quality.axis, quality.label),
        threshold_note=threshold_note,
    )
