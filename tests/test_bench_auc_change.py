"""benchmarks.auc_change: the paired AUC change between two runs over the same rows."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import auc_change
from tests.conftest import ROOT

# The first 20 rows of the dev set's eval run with sentence claims (tests/data/README.md).
DEV = ROOT / "tests/data/judge-dev-sentences-first20.results.jsonl"


def _pairwise_auc(path: Path) -> float:
    """ROC AUC by its definition, independently of the code under test: the share of
    (faithful, unfaithful) pairs whose alignment is ordered right, ties counting half."""
    items = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    scores = [(item["axes"]["alignment"], item["metadata"]["faithful"]) for item in items]
    good = [s for s, faithful in scores if faithful]
    bad = [s for s, faithful in scores if not faithful]
    wins = sum((g > b) + 0.5 * (g == b) for g in good for b in bad)
    return wins / (len(good) * len(bad))


def test_a_run_against_itself_changes_nothing():
    figures = auc_change.compare(DEV, DEV, "faithful", "alignment")
    alignment = figures["figures"]["alignment"]
    assert figures["rows"] == 20 and alignment["rows"] == 20
    assert alignment["before"] == alignment["after"] == round(_pairwise_auc(DEV), 4)
    assert alignment["difference"] == 0 and alignment["interval"] == [0, 0]


def test_an_oracle_run_is_a_change_the_interval_tells_apart_from_noise(tmp_path: Path):
    """A run whose alignment is the label itself: AUC 1, a change well clear of 0."""
    oracle = tmp_path / "oracle.jsonl"
    with DEV.open(encoding="utf-8") as lines, oracle.open("w", encoding="utf-8") as out:
        for line in lines:
            item = json.loads(line)
            item["axes"]["alignment"] = 1 if item["metadata"]["faithful"] else 0
            out.write(json.dumps(item) + "\n")
    alignment = auc_change.compare(DEV, oracle, "faithful", "alignment")["figures"]["alignment"]
    assert alignment["after"] == 1
    assert alignment["difference"] == round(1 - _pairwise_auc(DEV), 4)
    low, high = alignment["interval"]
    assert 0 < low <= alignment["difference"] <= high
