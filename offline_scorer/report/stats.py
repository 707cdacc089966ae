"""Judge-quality statistics: how well a judge's numbers separate or order labelled items.

Pure Python and standard library only (the core install has no numpy). Every function is
deterministic to the byte: counts are kept as integers and each statistic ends in one float
division (or one square root), so the same inputs give the same floats on every machine with
IEEE doubles. Ties are handled exactly (average ranks, kept doubled as integers).

Labels are booleans, True being the positive class (faithful). A statistic that is undefined
on its input (one class empty, a constant column) is None, never NaN.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from typing import Any

__all__ = [
    "Interval",
    "balanced_accuracy",
    "best_threshold",
    "bootstrap_ci",
    "confusion",
    "pearson",
    "roc_auc",
    "spearman",
]


def _check_lengths(*columns: Sequence[Any]) -> int:
    n = len(columns[0])
    if any(len(column) != n for column in columns[1:]):
        raise ValueError(f"columns differ in length: {', '.join(str(len(c)) for c in columns)}")
    return n


def _check_numbers(values: Sequence[float]) -> None:
    for value in values:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"expected numbers, found {value!r}")
        if not math.isfinite(value):
            raise ValueError(f"expected finite numbers, found {value!r}")


def _doubled_ranks(values: Sequence[float]) -> list[int]:
    """Twice the 1-based average rank of each value: ties share the mean of their ranks.

    Doubling keeps every rank an integer (a tie group over positions i..j-1 has average rank
    (i + 1 + j) / 2), so sums of ranks are exact.
    """
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0] * len(values)
    start = 0
    while start < len(order):
        end = start + 1
        value = values[order[start]]
        while end < len(order) and values[order[end]] == value:
            end += 1
        doubled = start + 1 + end
        for position in range(start, end):
            ranks[order[position]] = doubled
        start = end
    return ranks


def _class_sizes(scores: Sequence[float], labels: Sequence[bool]) -> tuple[int, int] | None:
    """(positives, negatives) after checking the columns; None when either class is empty."""
    n = _check_lengths(scores, labels)
    _check_numbers(scores)
    positives = sum(1 for label in labels if label)
    if positives in (0, n):
        return None
    return positives, n - positives


def roc_auc(scores: Sequence[float], labels: Sequence[bool]) -> float | None:
    """Area under the ROC curve: P(score of a positive > score of a negative), ties count 1/2.

    Computed from ranks (Mann-Whitney U), O(n log n). None when either class is empty.
    """
    sizes = _class_sizes(scores, labels)
    if sizes is None:
        return None
    positives, negatives = sizes
    ranks = _doubled_ranks(scores)
    rank_sum = sum(rank for rank, label in zip(ranks, labels, strict=True) if label)
    # U = R - p(p+1)/2 with R the positives' rank sum; AUC = U / (p n). Doubled: 2U / (2 p n).
    return (rank_sum - positives * (positives + 1)) / (2 * positives * negatives)


def confusion(predicted: Sequence[bool], labels: Sequence[bool]) -> dict[str, int]:
    """Counts of true/false positives and negatives: {"tp", "fp", "tn", "fn"}."""
    _check_lengths(predicted, labels)
    counts = {"tp": 0, "fp": 0, "tn": 0, "fn": 0}
    for guess, truth in zip(predicted, labels, strict=True):
        if guess:
            counts["tp" if truth else "fp"] += 1
        else:
            counts["fn" if truth else "tn"] += 1
    return counts


def _balanced(tp: int, tn: int, positives: int, negatives: int) -> float:
    # (tp/P + tn/N) / 2 as one division of integers, so equal accuracies are equal floats.
    return (tp * negatives + tn * positives) / (2 * positives * negatives)


def balanced_accuracy(predicted: Sequence[bool], labels: Sequence[bool]) -> float | None:
    """Mean of the true-positive and true-negative rates; None when either class is empty."""
    counts = confusion(predicted, labels)
    positives, negatives = counts["tp"] + counts["fn"], counts["tn"] + counts["fp"]
    if positives == 0 or negatives == 0:
        return None
    return _balanced(counts["tp"], counts["tn"], positives, negatives)


def best_threshold(scores: Sequence[float], labels: Sequence[bool]) -> tuple[float, float] | None:
    """The threshold t maximising the balanced accuracy of "positive iff score >= t".

    Candidates, one per distinct way of splitting the items: the lowest score (every item
    positive), the midpoint between each two consecutive distinct scores, and the smallest
    float above the highest score (no item positive). Among candidates with the same balanced
    accuracy (compared exactly, as integers), the one closest to 0.5 wins, then the lower one.
    Returns (threshold, balanced accuracy), or None when either class is empty.
    """
    sizes = _class_sizes(scores, labels)
    if sizes is None:
        return None
    positives, negatives = sizes
    distinct = sorted(set(scores))
    at: dict[float, list[int]] = {value: [0, 0] for value in distinct}
    for score, label in zip(scores, labels, strict=True):
        at[score][0 if label else 1] += 1
    # Sweep upwards: below the k-th distinct value, items are predicted negative.
    candidates: list[tuple[float, int, int]] = []  # (threshold, tp, tn)
    tp, tn = positives, 0
    for index, value in enumerate(distinct):
        if index == 0:
            threshold = value
        else:
            below = distinct[index - 1]
            threshold = (below + value) / 2
            if threshold <= below:  # adjacent floats: the midpoint rounds onto the lower one
                threshold = value
        candidates.append((threshold, tp, tn))
        tp -= at[value][0]
        tn += at[value][1]
    candidates.append((math.nextafter(distinct[-1], math.inf), tp, tn))
    best = max(
        candidates, key=lambda c: (c[1] * negatives + c[2] * positives, -abs(c[0] - 0.5), -c[0])
    )
    return best[0], _balanced(best[1], best[2], positives, negatives)


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Spearman's rank correlation (Pearson's r of average ranks); None when n < 2 or when
    either column is constant."""
    n = _check_lengths(xs, ys)
    _check_numbers(xs)
    _check_numbers(ys)
    if n < 2:
        return None
    rx, ry = _doubled_ranks(xs), _doubled_ranks(ys)
    sx, sy = sum(rx), sum(ry)
    cov = n * sum(a * b for a, b in zip(rx, ry, strict=True)) - sx * sy
    vx = n * sum(a * a for a in rx) - sx * sx
    vy = n * sum(b * b for b in ry) - sy * sy
    if vx == 0 or vy == 0:
        return None
    return max(-1.0, min(1.0, cov / math.sqrt(vx * vy)))


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Pearson's correlation coefficient; None when n < 2 or when either column is constant.
    Sums are taken in order (math.fsum), so the same columns give the same float anywhere."""
    n = _check_lengths(xs, ys)
    _check_numbers(xs)
    _check_numbers(ys)
    if n < 2:
        return None
    mx, my = math.fsum(xs) / n, math.fsum(ys) / n
    cov = math.fsum((a - mx) * (b - my) for a, b in zip(xs, ys, strict=True))
    vx = math.fsum((a - mx) ** 2 for a in xs)
    vy = math.fsum((b - my) ** 2 for b in ys)
    if vx == 0 or vy == 0:
        return None
    return max(-1.0, min(1.0, cov / math.sqrt(vx * vy)))


class Interval(tuple[float, float]):
    """A bootstrap interval: unpacks as (low, high); `used` counts the resamples it rests on
    (resamples where the statistic was undefined are skipped), of `resamples` drawn."""

    used: int
    resamples: int

    def __new__(cls, low: float, high: float, used: int, resamples: int) -> Interval:
        interval = super().__new__(cls, (low, high))
        interval.used = used
        interval.resamples = resamples
        return interval

    @property
    def low(self) -> float:
        return self[0]

    @property
    def high(self) -> float:
        return self[1]


def _quantile(ordered: Sequence[float], q: float) -> float:
    """Linear interpolation between order statistics (numpy's default, Hyndman-Fan type 7)."""
    position = (len(ordered) - 1) * q
    lower = math.floor(position)
    upper = min(lower + 1, len(ordered) - 1)
    fraction = position - lower
    return ordered[lower] + (ordered[upper] - ordered[lower]) * fraction


def bootstrap_ci(
    statistic: Callable[..., float | None],
    columns: Sequence[Sequence[Any]],
    *,
    resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> Interval | None:
    """Percentile bootstrap interval of `statistic(*columns)` over resamples of the items.

    Each resample draws len(columns[0]) row indices with replacement from
    `random.Random(seed)` and calls the statistic on the columns taken at those rows, so the
    same call gives the same interval (and two statistics with the same seed and item count
    see the same resamples). Resamples where the statistic is None are skipped; the interval's
    `used` says how many remained. None when no resample gave a value (or there are no items).
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level}")
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    if not columns:
        raise ValueError("bootstrap_ci needs at least one column")
    n = _check_lengths(*columns)
    if n == 0:
        return None
    rng = random.Random(seed)
    rows = range(n)
    values: list[float] = []
    for _ in range(resamples):
        picked = rng.choices(rows, k=n)
        value = statistic(*([column[i] for i in picked] for column in columns))
        if value is not None:
            values.append(value)
    if not values:
        return None
    values.sort()
    tail = (1 - level) / 2
    return Interval(_quantile(values, tail), _quantile(values, 1 - tail), len(values), resamples)
