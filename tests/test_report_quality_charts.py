"""The judge-quality section's charts: the ROC curve and the reliability diagram of the weakest
verdict probability against a binary label (report.quality_charts and its templates)."""

from __future__ import annotations

import itertools
import random
import re

import pytest

from offline_scorer.report import aggregate, render_html
from offline_scorer.report.model import BinaryQuality
from offline_scorer.report.quality_charts import (
    BinCount,
    QualityCharts,
    quality_charts,
    reliability_bins,
    roc_points,
)
from offline_scorer.report.stats import roc_auc
from tests.test_report import ok
from tests.test_report_quality import labelled

ROC_SVG = '<svg class="chart roc"'
RELIABILITY_SVG = '<svg class="chart reliability"'


def charts_of(items) -> QualityCharts | None:
    quality = aggregate(items).quality
    assert isinstance(quality, BinaryQuality)
    return quality_charts(items, quality)


def polyline_area(points: list[tuple[int, int]]) -> float:
    """The area under the drawn vertices (trapezoids), in integers until one division."""
    negatives, positives = points[-1]
    doubled = sum((fp - fp0) * (tp + tp0) for (fp0, tp0), (fp, tp) in itertools.pairwise(points))
    return doubled / (2 * positives * negatives)


# --------------------------------------------------------------------------- ROC points


def test_roc_points_step_through_ties_at_once():
    # 0.9 T | 0.8 T, 0.8 F (tied: one diagonal step) | 0.3 F
    points = roc_points([0.8, 0.9, 0.3, 0.8], [True, True, False, False])
    assert points == [(0, 0), (0, 1), (1, 2), (2, 2)]
    # The tie counts 1/2: pairs (0.9, 0.8F) 1, (0.9, 0.3) 1, (0.8T, 0.8F) 1/2, (0.8T, 0.3) 1.
    assert polyline_area(points) == roc_auc([0.8, 0.9, 0.3, 0.8], [True, True, False, False])
    assert polyline_area(points) == 3.5 / 4


def test_a_perfect_separator_passes_through_the_top_left_corner():
    points = roc_points([0.2, 0.9, 0.1, 0.8], [False, True, False, True])
    assert points == [(0, 0), (0, 1), (0, 2), (1, 2), (2, 2)]
    assert (0, 2) in points  # false positive rate 0, true positive rate 1
    assert polyline_area(points) == 1.0


def test_all_tied_is_the_chance_diagonal():
    assert roc_points([0.5] * 4, [True, False, True, False]) == [(0, 0), (2, 2)]


@pytest.mark.parametrize("seed", range(5))
def test_the_area_under_the_polyline_is_roc_auc(seed):
    rng = random.Random(seed)
    labels = [rng.random() < 0.4 for _ in range(200)]
    labels[:2] = [True, False]  # both classes
    scores = [round(rng.random() * 0.6 + (0.3 if label else 0), 1) for label in labels]  # ties
    assert polyline_area(roc_points(scores, labels)) == roc_auc(scores, labels)


def test_the_drawn_curve_runs_from_corner_to_corner_with_the_tables_auc():
    items = [
        labelled("a", 1, 1, {"faithful": True}, [0.9]),
        labelled("b", 1, 1, {"faithful": True}, [0.8, 0.95]),
        labelled("c", 1, 1, {"faithful": False}, [0.8]),
        labelled("d", 0.5, 1, {"faithful": False}, [0.3]),
    ]
    found = charts_of(items)
    assert found is not None and found.roc is not None
    roc = found.roc
    first, last = roc.vertices[0], roc.vertices[-1]
    assert (first.x, first.y) == (roc.left, roc.upper + roc.size)  # (0, 0)
    assert (last.x, last.y) == (roc.left + roc.size, roc.upper)  # (1, 1)
    assert roc.title == "ROC curve, AUC 0.875"
    # The threshold 0.5 (labelled's) takes a, b, c: TPR 2/2, FPR 1/2; that is a vertex.
    assert roc.marker is not None
    assert (roc.marker.x, roc.marker.y) == (roc.left + roc.size / 2, roc.upper)
    assert (roc.vertices[2].fp, roc.vertices[2].tp) == (1, 2)
    assert roc.marker.lines == ("threshold 0.5", "TPR 1.00, FPR 0.50")


# --------------------------------------------------------------------------- reliability


def test_reliability_bins_by_hand():
    scores = [0.05, 0.3, 0.35, 0.3, 1.0, 0.95, 0.9, 0.29]
    labels = [False, False, True, True, True, True, False, False]
    bins = reliability_bins(scores, labels)
    assert [b.count for b in bins] == [1, 0, 1, 3, 0, 0, 0, 0, 0, 3]
    # 0.3 belongs to [0.3, 0.4) although 0.3 * 10 is a hair under 3 in binary; 1 to the last.
    assert bins[3] == BinCount(index=3, count=3, positives=2, mean_p=0.3167)
    assert bins[9] == BinCount(index=9, count=3, positives=2, mean_p=0.95)
    assert bins[0].observed == 0 and bins[3].observed == 2 / 3
    assert bins[1].mean_p is None and bins[1].observed is None


def test_reliability_dots_carry_their_counts():
    items = [
        labelled(str(n), 1, 1, {"faithful": n % 3 != 0}, [0.75 + n / 100]) for n in range(9)
    ] + [labelled("low", 0.5, 1, {"faithful": False}, [0.1])]
    found = charts_of(items)
    assert found is not None and found.reliability is not None
    chart = found.reliability
    assert [tick.label for tick in chart.counts] == [
        "0",
        "1",
        "0",
        "0",
        "0",
        "0",
        "0",
        "5",
        "4",
        "0",
    ]
    big, small = chart.dots[1], chart.dots[0]
    assert (small.count, big.count) == (1, 5) and small.radius < big.radius
    assert big.title == "P(true) in [0.7, 0.8): 5 items, mean P(true) 0.77, 3 faithful (0.60)"
    assert chart.x_label == "P(true) the judge gave"
    assert chart.y_label == "share actually faithful"


# --------------------------------------------------------------------------- what is left out


def test_items_without_a_probability_are_left_out_and_counted():
    items = [
        labelled("a", 1, 1, {"faithful": True}, [0.9]),
        labelled("b", 1, 1, {"faithful": True}, [0.7]),
        labelled("c", 1, 1, {"faithful": True}, [None]),  # the judge gave none
        labelled("d", 1, 1, {"faithful": False}),  # no verdictProbabilities
        labelled("e", 0.5, 1, {"faithful": False}, [0.2]),
        labelled("f", 0.5, 1, {"faithful": False}, [0.6]),
        labelled("g", 1, 1, {}, [0.1]),  # unlabelled: not counted at all
    ]
    found = charts_of(items)
    assert found is not None
    assert (found.used, found.left_out) == (4, 2)
    assert found.reliability is not None
    assert sum(int(tick.label) for tick in found.reliability.counts) == 4
    html = render_html(items, aggregate(items), "t")
    assert html.count("4 items with a probability; 2 left out for having none.") == 2


def test_fewer_than_two_of_a_class_gives_a_note_not_a_roc_chart():
    items = [
        labelled("a", 1, 1, {"faithful": True}, [0.9]),
        labelled("b", 1, 1, {"faithful": True}, [0.7]),
        labelled("c", 1, 1, {"faithful": False}, [0.4]),
        labelled("d", 1, 1, {"faithful": False}),
    ]
    found = charts_of(items)
    assert found is not None and found.roc is None and found.reliability is not None
    assert found.roc_note == (
        "No ROC curve: it needs at least 2 items of each class with a probability, "
        "and there are 2 faithful and 1 not."
    )
    html = render_html(items, aggregate(items), "t")
    assert ROC_SVG not in html and RELIABILITY_SVG in html
    assert found.roc_note in html


def test_the_threshold_marker_needs_one_recorded_threshold():
    def run(thresholds):
        items = [
            labelled(str(n), 1, 1, {"faithful": n % 2 == 0}, [n / 10])
            for n in range(len(thresholds))
        ]
        for item, threshold in zip(items, thresholds, strict=True):
            item["result"]["verdictProbabilities"]["threshold"] = threshold
        found = charts_of(items)
        assert found is not None and found.roc is not None
        return found

    assert run([0.5, 0.5, 0.5, 0.5]).roc.marker is not None
    mixed = run([0.5, 0.6, 0.5, 0.5])
    assert mixed.roc.marker is None
    assert mixed.threshold_note == (
        "The items were judged at different thresholds (0.5, 0.6): none is marked."
    )
    assert run([None] * 4).threshold_note.startswith("The results record no verdict threshold")


# --------------------------------------------------------------------------- the page


def labelled_run():
    rng = random.Random(7)
    items = []
    for n in range(40):
        truth = rng.random() < 0.5
        p = round(min(1.0, max(0.0, rng.gauss(0.7 if truth else 0.4, 0.2))), 2)
        items.append(labelled(f"i{n}", 1 if p >= 0.5 else 0.5, 1, {"faithful": truth}, [p]))
    return items


def test_the_page_is_the_same_bytes_every_time():
    items = labelled_run()
    first = render_html(items, aggregate(items), "t")
    second = render_html(labelled_run(), aggregate(labelled_run()), "t")
    assert first == second
    assert ROC_SVG in first and RELIABILITY_SVG in first
    # Every coordinate is printed at one decimal place: no float noise reaches the page.
    points = re.search(r'class="curve" stroke="[^"]+" points="([^"]+)"', first)
    assert points is not None
    assert all(re.fullmatch(r"\d+\.\d,\d+\.\d", pair) for pair in points.group(1).split(" "))


def test_both_charts_only_with_a_binary_label_and_probabilities():
    with_labels = labelled_run()
    html = render_html(with_labels, aggregate(with_labels), "t")
    assert html.count(ROC_SVG) == 1 and html.count(RELIABILITY_SVG) == 1
    section = html.split('<section id="judge-quality">')[1].split("</section>")[0]
    assert ROC_SVG in section and RELIABILITY_SVG in section
    assert "ROC curve, AUC " in section and "share actually faithful" in section

    unlabelled = [ok("a", 1, 1), ok("b", 0.5, 1)]
    html = render_html(unlabelled, aggregate(unlabelled), "t")
    assert ROC_SVG not in html and RELIABILITY_SVG not in html

    numeric = [labelled(f"n{n}", 1, 1, {"human_score": n}, [n / 10]) for n in range(5)]
    html = render_html(numeric, aggregate(numeric), "t")
    assert "Judge quality" in html and ROC_SVG not in html and RELIABILITY_SVG not in html

    no_probabilities = [labelled(f"p{n}", 1, 1, {"faithful": n % 2 == 0}) for n in range(4)]
    html = render_html(no_probabilities, aggregate(no_probabilities), "t")
    assert ROC_SVG not in html and RELIABILITY_SVG not in html


def test_a_hostile_label_name_is_escaped_in_the_charts():
    items = labelled_run()
    for item in items:
        item["metadata"] = {"<b>x</b>": item["metadata"]["faithful"]}
    html = render_html(items, aggregate(items, "<b>x</b>"), "t")
    assert "share actually &lt;b&gt;x&lt;/b&gt;" in html and "<b>x</b>" not in html
