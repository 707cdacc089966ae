"""Judge-quality figures of a results file whose rows carried a human label in their metadata.

`report` shows them beside the aggregate. A binary label (faithful or not) gives ROC AUCs and
the balanced accuracy and confusion matrix of the rule the scorer kind applies (an item is
judged positive iff its judged axis is 1: summarization's alignment, every claim supported); a
numeric label (a human score) gives Spearman correlations. Every figure comes with a percentile
bootstrap interval over items.
The statistics themselves are in `offline_scorer.report.stats`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from offline_scorer.errors import InputError
from offline_scorer.report.lines import weakest_probability
from offline_scorer.report.model import (
    BinaryQuality,
    Confusion,
    CountedFigure,
    Excluded,
    Figure,
    NumericQuality,
    Quality,
)
from offline_scorer.report.stats import (
    balanced_accuracy,
    bootstrap_ci,
    confusion,
    roc_auc,
    spearman,
)
from offline_scorer.scorers.spec import ScorerSpec

RESAMPLES = 2000
SEED = 0
LEVEL = 0.95

_TRUE = {"true", "1"}
_FALSE = {"false", "0"}


def binary_label(value: Any) -> bool | None:
    """True/False from a boolean, 0/1, or (CSV) "true"/"false"/"1"/"0"; None otherwise."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return value == 1
    if isinstance(value, str):
        text = value.strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
    return None


def numeric_label(value: Any) -> float | None:
    """A finite number, or a string (CSV) holding one; None otherwise (booleans included)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None


def _metadata(item: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = item.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _label_kind(spec: ScorerSpec, items: Sequence[Mapping[str, Any]], name: str) -> str:
    """The kind's label fields say what they hold. Another field is numeric when some value is
    a number other than 0 and 1, else binary when some value reads as true/false; values that
    fit neither are left out and counted. A field that holds neither is refused."""
    if name in spec.label_fields:
        return spec.label_fields[name]
    values = [
        (item["id"], _metadata(item)[name])
        for item in items
        if _metadata(item).get(name) is not None
    ]
    if any(binary_label(v) is None and numeric_label(v) is not None for _, v in values):
        return "numeric"
    if any(binary_label(v) is not None for _, v in values):
        return "binary"
    example = f"; item {values[0][0]!r} has {values[0][1]!r}" if values else ""
    raise InputError(f"label field {name!r} must hold true/false, 0/1 or numbers{example}")


def _round4(value: float) -> float:
    return float(Decimal(repr(value)).quantize(Decimal("0.0001"), rounding=ROUND_HALF_UP))


def _figure(statistic: Callable[..., float | None], columns: Sequence[Sequence[Any]]) -> Figure:
    """The statistic on all items and its bootstrap interval, rounded to 4 places."""
    value = statistic(*columns) if columns[0] else None
    interval = (
        bootstrap_ci(statistic, columns, resamples=RESAMPLES, seed=SEED, level=LEVEL)
        if value is not None
        else None
    )
    return Figure(
        value=None if value is None else _round4(value),
        low=None if interval is None else _round4(interval.low),
        high=None if interval is None else _round4(interval.high),
        resamples=0 if interval is None else interval.used,
    )


def labelled(
    items: Sequence[Mapping[str, Any]], label: str, read: Callable[[Any], Any]
) -> tuple[list[tuple[Mapping[str, Any], Any]], Excluded]:
    """The ok items with a usable `label` value (as `read` gives it), and what was left out.

    One definition, so the figures and the page's quality charts count the same items.
    """
    used: list[tuple[Mapping[str, Any], Any]] = []
    excluded = {"failed": 0, "missing": 0, "invalid": 0}
    for item in items:
        meta = _metadata(item)
        if item["status"] != "ok":
            excluded["failed"] += 1
        elif meta.get(label) is None:
            excluded["missing"] += 1
        elif (value := read(meta[label])) is None:
            excluded["invalid"] += 1
        else:
            used.append((item, value))
    return used, Excluded(**excluded)


def _label_field(
    spec: ScorerSpec, items: Sequence[Mapping[str, Any]], label: str | None
) -> str | None:
    """The field named, or the first of the kind's label fields some item has; a named field
    that no item has is refused, since a misspelt --label would otherwise report nothing."""
    if label is None:
        return next(
            (name for name in spec.label_fields if any(name in _metadata(i) for i in items)),
            None,
        )
    if not any(label in _metadata(item) for item in items):
        raise InputError(
            f"label field {label!r} is in the metadata of no item; the data rows "
            'need that field (e.g. "faithful": true)'
        )
    return label


def judge_quality(
    spec: ScorerSpec, items: Sequence[Mapping[str, Any]], label: str | None = None
) -> Quality | None:
    """Judge-quality figures against the label in the items' metadata, or None without one.

    `label` names the metadata field; by default the first of the kind's label fields that any
    item has. The kind's judged axis is what predicts a binary label (== 1 means positive).
    Failed items and items without a usable label are left out and counted. A named field that
    no item has is an InputError.
    """
    label = _label_field(spec, items, label)
    if label is None:
        return None
    kind = _label_kind(spec, items, label)
    used, excluded = labelled(items, label, binary_label if kind == "binary" else numeric_label)
    common: dict[str, Any] = {
        "label": label,
        "items": len(used),
        "excluded": excluded,
        "level": LEVEL,
        "resamples": RESAMPLES,
        "seed": SEED,
    }
    axis = spec.judged_axis
    judged = [item["axes"][axis] for item, _ in used]
    score = [item["score"] for item, _ in used]
    truth = [value for _, value in used]
    if kind == "numeric":
        return NumericQuality(
            **common,
            axis=axis,
            spearman_score=_figure(spearman, [score, truth]),
            spearman_axis=_figure(spearman, [judged, truth]),
        )
    predicted = [value >= 1 for value in judged]
    with_p = [(p, value) for (item, value) in used if (p := weakest_probability(item)) is not None]
    by_p = None
    if with_p:
        figure = _figure(roc_auc, [[p for p, _ in with_p], [value for _, value in with_p]])
        by_p = CountedFigure(items=len(with_p), **figure.model_dump())
    return BinaryQuality(
        **common,
        axis=axis,
        positives=sum(1 for value in truth if value),
        negatives=sum(1 for value in truth if not value),
        auc_axis=_figure(roc_auc, [judged, truth]),
        auc_score=_figure(roc_auc, [score, truth]),
        rule=spec.rule,
        balanced_accuracy=_figure(balanced_accuracy, [predicted, truth]),
        confusion=Confusion(**confusion(predicted, truth)),
        auc_weakest_p=by_p,
    )
