"""bench/bench_auc_change.py: the paired AUC change between two runs over the same rows."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from tests.conftest import ROOT

spec = importlib.util.spec_from_file_location(
    "bench_auc_change", ROOT / "bench/bench_auc_change.py"
)
assert spec is not None and spec.loader is not None
bench_auc_change = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench_auc_change)

DEV = ROOT / "bench/results/judge-dev-sentences.jsonl"


def test_a_run_against_itself_changes_nothing():
    figures = bench_auc_change.compare(DEV, DEV, "faithful", "alignment")
    alignment = figures["figures"]["alignment"]
    assert figures["rows"] == 200 and alignment["rows"] == 200
    assert alignment["before"] == alignment["after"] == 0.535
    assert alignment["difference"] == 0 and alignment["interval"] == [0, 0]


def test_an_oracle_run_is_a_change_the_interval_tells_apart_from_noise(tmp_path: Path):
    """A run whose alignment is the label itself: AUC 1, a change well clear of 0."""
    oracle = tmp_path / "oracle.jsonl"
    with DEV.open(encoding="utf-8") as lines, oracle.open("w", encoding="utf-8") as out:
        for line in lines:
            item = json.loads(line)
            item["axes"]["alignment"] = 1 if item["metadata"]["faithful"] else 0
            out.write(json.dumps(item) + "\n")
    alignment = bench_auc_change.compare(DEV, oracle, "faithful", "alignment")["figures"][
        "alignment"
    ]
    assert alignment["after"] == 1
    assert alignment["difference"] == round(1 - 0.535, 4)
    low, high = alignment["interval"]
    assert 0 < low <= alignment["difference"] <= high
