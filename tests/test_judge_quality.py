"""What the judge is worth travels with it: `calibrate` records it in the registry entry, and
`score`, `eval` and `report` show it beside the scores, with a warning when it was at chance."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from offline_scorer.errors import ConfigError
from offline_scorer.models.entry import MeasuredQuality
from offline_scorer.models.registry import load_registry
from tests.conftest import FIXTURES, ROOT

PAIR = "01-harbor-bridge"
CASSETTE = FIXTURES / "cassettes/fixtures.oscas"


def _cli(*args: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    empty = tmp_path / "no-user-models.toml"
    empty.write_text("", encoding="utf-8")  # the shipped registry alone
    env = {**os.environ, "OFFLINE_SCORER_MODELS": str(empty), "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "offline_scorer", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )


def test_the_shipped_judge_carries_its_dev_set_figures_and_is_at_chance() -> None:
    quality = load_registry().resolve("default").quality
    assert quality is not None
    assert (quality.dataset, quality.rows) == ("judge-dev.jsonl", 200)
    assert quality.at_chance and len(quality.warnings()) == 1
    assert "0.501 [0.422, 0.582]" in quality.line()
    assert quality.coverage is not None and quality.coverage.at_chance
    lines, warnings = load_registry().resolve("default").part("summarization").figures()
    assert lines[0] == quality.line() and lines[1].startswith("coverage quality: ROC AUC 0.515")
    assert "coverage axis is uninformative" in warnings[1]


def test_a_judge_whose_interval_excludes_half_gets_no_warning() -> None:
    good = MeasuredQuality(
        dataset="mine.jsonl",
        rows=500,
        roc_auc=0.81,
        roc_auc_low=0.77,
        roc_auc_high=0.85,
        balanced_accuracy=0.74,
        measured="2026-12-03",
    )
    assert not good.at_chance and good.warnings() == []


def test_a_broken_quality_table_is_one_line_naming_the_field(tmp_path: Path) -> None:
    spec = load_registry().resolve("default")
    registry = tmp_path / "models.toml"
    registry.write_text(
        f'[models.{spec.name}]\npackage = "{spec.package}"\nfile = "{spec.file}"\n'
        f'[models.{spec.name}.scorers.summarization.quality]\ndataset = "x"\nrows = 3\n'
        "roc_auc = 1.7\n"
        'roc_auc_low = 0.1\nroc_auc_high = 0.2\nbalanced_accuracy = 0.5\nmeasured = "2026-12-03"\n',
        encoding="utf-8",
    )
    os.environ["OFFLINE_SCORER_MODELS"] = str(registry)
    try:
        with pytest.raises(ConfigError) as caught:
            load_registry().resolve("default")
    finally:
        del os.environ["OFFLINE_SCORER_MODELS"]
    assert "roc_auc" in str(caught.value) and "\n" not in str(caught.value)


def test_score_shows_the_judges_quality_beside_the_score(tmp_path: Path) -> None:
    args = (
        "score",
        "--source",
        f"fixtures/pairs/{PAIR}.source.txt",
        "--summary",
        f"fixtures/pairs/{PAIR}.summary.txt",
        "--record-mode",
        "replay",
        "--cassette",
        str(CASSETTE),
    )
    shown = _cli(*args, tmp_path=tmp_path)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[-4].startswith("judge quality: ROC AUC 0.501 [0.422, 0.582]")
    assert lines[-3].startswith("coverage quality: ROC AUC 0.515 [0.496, 0.536]")
    assert lines[-2].startswith("warning: this judge's verdicts were at chance")
    assert lines[-1].startswith("warning: this judge's coverage verdicts carried no signal")
    as_json = _cli(*args, "--json", tmp_path=tmp_path)
    assert as_json.stdout.encode() == (FIXTURES / "golden" / f"{PAIR}.json").read_bytes()
    assert "warning: this judge's verdicts were at chance" in as_json.stderr


def test_report_with_the_cassette_names_the_judge_and_its_quality(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"  # report writes its HTML beside the results file
    results.write_bytes((FIXTURES / "golden/results.jsonl").read_bytes())
    text = _cli("report", str(results), "--cassette", str(CASSETTE), tmp_path=tmp_path)
    assert text.returncode == 0, text.stderr
    assert "smollm2-135m: judge quality: ROC AUC 0.501" in text.stdout
    assert "at chance" in text.stdout
    page = results.with_suffix(".html").read_text(encoding="utf-8")
    assert "judge quality" in page and "coverage axis is uninformative" in page
    document = json.loads(
        _cli(
            "report", str(results), "--cassette", str(CASSETTE), "--json", tmp_path=tmp_path
        ).stdout
    )
    judge = document["provenance"]["judges"][0]
    assert judge["model"] == "smollm2-135m"
    quality = load_registry().resolve("default").quality
    assert quality is not None
    assert judge["quality"] == quality.model_dump()
