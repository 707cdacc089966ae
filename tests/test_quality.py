"""Judge-quality statistics (`report.stats`) against hand-computed and brute-force values.

scipy is a development cross-check only (the core install has neither scipy nor numpy).
"""

from __future__ import annotations

import math
import random
from fractions import Fraction
from itertools import product

import pytest

from offline_scorer.report.stats import (
    Interval,
    balanced_accuracy,
    best_threshold,
    bootstrap_ci,
    confusion,
    roc_auc,
    spearman,
)

T, F = True, False


def brute_auc(scores, labels):
    """Every (positive, negative) pair: 1 when the positive scores higher, 1/2 on a tie."""
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    wins = sum(
        Fraction(1) if p > n else Fraction(1, 2) if p == n else Fraction(0)
        for p, n in product(pos, neg)
    )
    return float(wins / (len(pos) * len(neg)))


# --------------------------------------------------------------------------- ROC AUC


def test_roc_auc_by_hand():
    # The textbook example (also scikit-learn's): 3 of the 4 pairs are ordered right.
    assert roc_auc([0.1, 0.4, 0.35, 0.8], [F, F, T, T]) == 0.75
    assert roc_auc([0.1, 0.2, 0.3], [F, T, T]) == 1.0
    assert roc_auc([0.1, 0.2, 0.3], [T, T, F]) == 0.0
    # Ties count one half: pairs (1,1) 1/2, (1,0) 1, (0,1) 0, (0,0) 1/2.
    assert roc_auc([1, 1, 0, 0], [T, F, T, F]) == 0.5
    assert roc_auc([0.5, 0.5, 0.5], [T, F, F]) == 0.5
    # alignment-like values with ties across classes: pos {1, 1, 0.5}, neg {1, 0.5, 0}
    # pairs: 1 vs (1, .5, 0) = 1/2 + 1 + 1 twice; 0.5 vs (1, .5, 0) = 0 + 1/2 + 1 -> 6.5 / 9
    assert roc_auc([1, 1, 0.5, 1, 0.5, 0], [T, T, T, F, F, F]) == 6.5 / 9


def test_roc_auc_is_undefined_with_one_class():
    assert roc_auc([0.2, 0.4], [T, T]) is None
    assert roc_auc([0.2, 0.4], [F, F]) is None
    assert roc_auc([], []) is None


def test_roc_auc_matches_every_pair_counted_exactly():
    rng = random.Random(7)
    for n in (2, 3, 10, 57, 200):
        for _ in range(20):
            labels = [rng.random() < 0.4 for _ in range(n)]
            if len(set(labels)) < 2:
                continue
            scores = [rng.choice([0, 0.25, 0.5, 0.75, 1, rng.random()]) for _ in range(n)]
            assert roc_auc(scores, labels) == brute_auc(scores, labels)


def test_roc_auc_refuses_bad_input():
    with pytest.raises(ValueError, match="differ in length"):
        roc_auc([0.1, 0.2], [T])
    with pytest.raises(ValueError, match="finite"):
        roc_auc([0.1, math.nan], [T, F])
    with pytest.raises(ValueError, match="numbers"):
        roc_auc([True, False], [T, F])


# --------------------------------------------------------------------------- accuracy


def test_confusion_and_balanced_accuracy_by_hand():
    predicted = [T, T, F, F, T]
    labels = [T, F, F, T, T]
    assert confusion(predicted, labels) == {"tp": 2, "fp": 1, "tn": 1, "fn": 1}
    # true-positive rate 2/3, true-negative rate 1/2 -> (2/3 + 1/2) / 2 = 7/12
    assert balanced_accuracy(predicted, labels) == 7 / 12
    assert balanced_accuracy([T, T, T, T], [T, T, F, F]) == 0.5  # always "faithful"
    assert balanced_accuracy([T, F], [T, T]) is None


def test_best_threshold_by_hand():
    assert best_threshold([0.1, 0.2, 0.3, 0.4], [F, F, T, T]) == (0.25, 1.0)
    # Two thresholds reach 0.75 (0.25 and 0.75), equally far from 0.5: the lower one.
    assert best_threshold([0.125, 0.375, 0.625, 0.875], [F, T, F, T]) == (0.25, 0.75)
    # 0.125 and 0.8125 both reach 0.75; 0.8125 is closer to 0.5, so it wins though higher.
    assert best_threshold([0.0, 0.25, 0.75, 0.875], [F, T, F, T]) == (0.8125, 0.75)
    assert best_threshold([0.0, 0.25, 0.75, 0.875], [F, T, F, T]) != (0.125, 0.75)


def test_best_threshold_ends():
    # Every candidate split is worse than a constant answer; the two ends tie at 0.5 and the
    # lowest score (everything positive) is closer to 0.5 than the value just above 0.9.
    assert best_threshold([0.1, 0.9], [T, F]) == (0.1, 0.5)
    # Here the top end (nothing predicted positive) is the closer one to 0.5.
    assert best_threshold([0.2, 0.6], [T, F]) == (math.nextafter(0.6, 1), 0.5)
    assert best_threshold([0.75, 1.0], [F, T]) == (0.875, 1.0)
    threshold, accuracy = best_threshold([0.2, 0.3, 0.4], [T, F, F])
    assert accuracy == 0.5 and threshold in (0.2, math.nextafter(0.4, 1))
    assert best_threshold([0.5, 0.5], [T, T]) is None


def test_best_threshold_is_the_best_of_every_split():
    rng = random.Random(11)
    for _ in range(200):
        n = rng.randint(2, 30)
        labels = [rng.random() < 0.5 for _ in range(n)]
        if len(set(labels)) < 2:
            continue
        scores = [rng.choice([0.1, 0.3, 0.5, 0.7, 0.9, round(rng.random(), 3)]) for _ in range(n)]
        threshold, accuracy = best_threshold(scores, labels)
        assert accuracy == balanced_accuracy([s >= threshold for s in scores], labels)
        best = max(balanced_accuracy([s >= t for s in scores], labels) for t in [*scores, 2.0])
        assert accuracy == best


# --------------------------------------------------------------------------- Spearman


def test_spearman_by_hand():
    # y ranks 1, 2, 3.5, 5, 3.5 against 1..5: sum of products of deviations 8,
    # squares 10 and 9.5 -> 8 / sqrt(95)
    assert spearman([1, 2, 3, 4, 5], [5, 6, 7, 8, 7]) == pytest.approx(8 / math.sqrt(95), rel=1e-15)
    assert spearman([1, 2, 3], [10, 20, 300]) == 1.0
    assert spearman([1, 2, 3], [3, 2, 1]) == -1.0
    assert spearman([1, 1, 1], [1, 2, 3]) is None
    assert spearman([1], [2]) is None


# --------------------------------------------------------------------------- bootstrap


def test_bootstrap_is_deterministic_and_brackets_the_estimate():
    rng = random.Random(3)
    labels = [i % 2 == 0 for i in range(60)]
    scores = [rng.random() + (0.3 if y else 0) for y in labels]
    first = bootstrap_ci(roc_auc, [scores, labels], resamples=500)
    assert first == bootstrap_ci(roc_auc, [scores, labels], resamples=500)
    assert isinstance(first, Interval) and first.used == 500 and first.resamples == 500
    low, high = first
    assert (low, high) == (first.low, first.high)
    assert low < roc_auc(scores, labels) < high
    assert first != bootstrap_ci(roc_auc, [scores, labels], resamples=500, seed=1)
    wider = bootstrap_ci(roc_auc, [scores, labels], resamples=500, level=0.99)
    assert wider.low <= low and wider.high >= high


def test_bootstrap_skips_resamples_where_the_statistic_is_undefined():
    labels = [T, F, F, F, F, F]
    scores = [0.9, 0.1, 0.2, 0.3, 0.4, 0.5]
    interval = bootstrap_ci(roc_auc, [scores, labels], resamples=300, seed=5)
    # P(a resample misses the one positive) = (5/6)^6, about a third.
    assert 150 < interval.used < 250
    # the same draws, replayed by hand
    rng = random.Random(5)
    picks = [rng.choices(range(6), k=6) for _ in range(300)]
    assert interval.used == sum(1 for p in picks if 0 in p and any(i != 0 for i in p))
    assert interval == (1.0, 1.0)


def test_bootstrap_percentiles_interpolate_linearly():
    # A statistic that only reports which resample it is: the values are 0..99 in order.
    counter = iter(range(100))
    interval = bootstrap_ci(
        lambda column: float(next(counter)), [[1, 2, 3]], resamples=100, level=0.9
    )
    # 5th and 95th percentiles of 0..99 with linear interpolation (numpy's default)
    assert interval.low == pytest.approx(4.95) and interval.high == pytest.approx(94.05)


def test_bootstrap_edges():
    assert bootstrap_ci(roc_auc, [[], []]) is None
    assert bootstrap_ci(lambda *c: None, [[1, 2], [3, 4]], resamples=10) is None
    assert bootstrap_ci(lambda c: 0.5, [[1, 2]], resamples=10) == (0.5, 0.5)
    with pytest.raises(ValueError, match="level"):
        bootstrap_ci(roc_auc, [[0.1], [T]], level=1.0)
    with pytest.raises(ValueError, match="resamples"):
        bootstrap_ci(roc_auc, [[0.1], [T]], resamples=0)
    with pytest.raises(ValueError, match="differ in length"):
        bootstrap_ci(roc_auc, [[0.1, 0.2], [T]])


def test_bootstrap_of_auc_over_200_items_uses_every_resample():
    # Speed is measured by the benchmarks, not here; this checks no resample is wasted.
    rng = random.Random(0)
    labels = [i % 2 == 0 for i in range(200)]
    scores = [rng.choice([0, 0.5, 1, rng.random()]) for _ in labels]
    interval = bootstrap_ci(roc_auc, [scores, labels])
    assert interval.used == 2000
    assert interval.low <= roc_auc(scores, labels) <= interval.high


# --------------------------------------------------------------------------- cross-checks


def test_against_scipy():
    stats = pytest.importorskip("scipy.stats")
    rng = random.Random(21)
    for n in (5, 40, 200):
        labels = [i % 3 == 0 for i in range(n)]
        scores = [rng.choice([0, 0.5, 1, round(rng.random(), 2)]) for _ in range(n)]
        pos = [s for s, y in zip(scores, labels, strict=True) if y]
        neg = [s for s, y in zip(scores, labels, strict=True) if not y]
        u = stats.mannwhitneyu(pos, neg).statistic
        assert roc_auc(scores, labels) == pytest.approx(u / (len(pos) * len(neg)), abs=1e-12)
        other = [s + rng.choice([-0.3, 0, 0.3]) for s in scores]
        expected = stats.spearmanr(scores, other).statistic
        assert spearman(scores, other) == pytest.approx(expected, abs=1e-12)
