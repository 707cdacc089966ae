"""benchmarks._common: what every benchmark shares, so that a figure is written and a fresh
process started the same way everywhere."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

from benchmarks._common import (
    FIXTURE_PAIRS,
    clean,
    fmt,
    median,
    module_command,
    ratio,
    read_jsonl,
    repo_env,
    write_json,
)
from tests.conftest import ROOT


def test_a_failed_measurement_is_left_out_and_never_a_figure():
    assert median([3.0, None, float("nan"), 1.0]) == 2.0
    assert math.isnan(median([None, float("nan")]))
    assert ratio(1.0, 4.0) == 0.25
    assert math.isnan(ratio(1.0, 0.0)) and math.isnan(ratio(float("nan"), 2.0))
    assert (fmt(None), fmt(float("nan")), fmt(2.0), fmt(2.0, ".3f")) == (
        "n/a",
        "n/a",
        "2.00",
        "2.000",
    )


def test_figures_are_written_as_strict_json_without_private_keys(tmp_path: Path):
    path = tmp_path / "run" / "figures.json"
    write_json(path, {"seconds": float("nan"), "_decodes": [1], "rows": [(1, 2.5)]})
    assert json.loads(path.read_text(encoding="utf-8")) == {"seconds": None, "rows": [[1, 2.5]]}
    assert clean({"a": {"_b": 1, "c": float("nan")}}) == {"a": {"c": None}}


def test_read_jsonl_takes_the_first_rows_asked_for():
    every = read_jsonl(FIXTURE_PAIRS)
    assert len(every) == 12 and read_jsonl(FIXTURE_PAIRS, 2) == every[:2]


def test_a_fresh_process_runs_a_benchmark_by_module_from_anywhere(tmp_path: Path):
    """What replay, backends and cassette_open start for a measurement of their own."""
    proc = subprocess.run(
        module_command("benchmarks.auc_change", "--help"),
        cwd=tmp_path,  # not the repository: the package is found through $PYTHONPATH
        env=repo_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: ") and str(ROOT) == repo_env()["PYTHONPATH"]
