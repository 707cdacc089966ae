"""Calibrating the coverage axis on questions people labelled one by one: the rule, the figures
out of sample by document, the registry write, and the command on a replayed cassette (a
scripted judge records it, so no model runs here)."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import pytest

from offline_scorer import InputError
from offline_scorer.assembly.open import pinned_identity
from offline_scorer.calibration import (
    ItemCase,
    calibrate_items,
    collect_items,
    item_quality,
    read_item_cases,
    write_item_threshold,
)
from offline_scorer.calibration.items import ScoredCase
from offline_scorer.cassette.judge import CassetteJudge, RecordMode
from offline_scorer.models.registry import load_registry
from offline_scorer.scorers import get_spec
from offline_scorer.scorers.summarization.options import ScorerOptions
from offline_scorer.scorers.summarization.scorer import SummarizationScorer
from offline_scorer.testing import ScriptedJudge
from tests.test_cli import run_cli

SPEC = get_spec("summarization")


def _cases(tmp_path: Path, documents: int = 6) -> Path:
    """Two summaries per document, four questions each; a question labelled true holds the word
    "kept", so a scripted judge can answer it with a high P(answered)."""
    lines = []
    for d in range(documents):
        for s, kept in enumerate((2, 1)):
            labels = [i < kept + (d % 2) for i in range(4)]
            questions = [
                f"Is it true that fact {i} of doc {d} was {'kept' if y else 'dropped'}?"
                for i, y in enumerate(labels)
            ]
            lines.append(
                json.dumps(
                    {
                        "id": f"doc{d}/system{s}",
                        "summary": f"Summary {s} of document {d}.",
                        "questions": questions,
                        "labels": labels,
                    }
                )
            )
    path = tmp_path / "coverage.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


class ByQuestion(ScriptedJudge):
    """P(answered) 0.8 for a question that says "kept", 0.3 for one that says "dropped"."""

    def complete(self, request):
        text = request.messages[-1].content
        asked = text.split("Question:\n", 1)[1].split("\n", 1)[0]
        self.answers["analyze"] = {
            "coverage": [{"question": asked, "answered": True, "reason": "The summary says so."}]
        }
        self.probabilities = {"analyze": (0.8 if "was kept" in text else 0.3,)}
        return super().complete(request)


def _judge() -> ByQuestion:
    return ByQuestion(
        alignment=[{"claim": "c", "supported": True, "reason": "r"}],
        questions=["q?"],
        coverage=[{"question": "q?", "answered": True, "reason": "r"}],
        threshold=0.5,
    )


def _scorer(judge=None) -> SummarizationScorer:
    return SummarizationScorer(judge or _judge(), ScorerOptions(one_by_one=True))


def test_rows_are_read_and_each_mistake_is_one_line_naming_the_line(tmp_path: Path) -> None:
    cases = read_item_cases(_cases(tmp_path))
    assert len(cases) == 12 and cases[0].group == "doc0"
    bad = tmp_path / "bad.jsonl"
    for text, message in (
        ('{"id": "a", "summary": "s", "questions": ["q?"]}', "missing labels"),
        ('{"id": "a", "summary": "s", "questions": ["q?"], "labels": [1]}', "true/false"),
        ('{"id": "a", "summary": "s", "questions": ["q?"], "labels": []}', "one label per"),
        ("not json", "not JSON"),
    ):
        bad.write_text(text + "\n", encoding="utf-8")
        with pytest.raises(InputError, match=message) as caught:
            read_item_cases(bad)
        assert "line 1" in str(caught.value) and "\n" not in str(caught.value)


def test_the_threshold_separates_the_items_and_the_figures_are_out_of_sample(
    tmp_path: Path,
) -> None:
    scored = collect_items(read_item_cases(_cases(tmp_path)), SPEC, _scorer())
    assert scored[0].probabilities == (0.8, 0.8, 0.3, 0.3)
    result = calibrate_items(scored, "coverage", folds=3)
    assert 0.3 < result.threshold <= 0.8
    assert result.roc_auc == 1.0 and result.balanced_accuracy == 1.0
    assert result.pearson == pytest.approx(1.0) and result.folds == 3
    assert result.items == 48 and result.cases == 12
    assert result.axis_mean == pytest.approx(result.human_mean)


def test_a_kept_threshold_is_measured_at_without_folds(tmp_path: Path) -> None:
    scored = collect_items(read_item_cases(_cases(tmp_path)), SPEC, _scorer())
    kept = calibrate_items(scored, "coverage", keep=0.9)
    assert kept.threshold == 0.9 and kept.folds == 0
    assert kept.balanced_accuracy == 0.5  # nothing is judged answered at 0.9
    assert kept.axis_mean == 0.0


def test_too_few_documents_for_the_folds_is_one_clear_error(tmp_path: Path) -> None:
    scored = collect_items(read_item_cases(_cases(tmp_path, documents=2)), SPEC, _scorer())
    with pytest.raises(InputError, match="at least 5 documents"):
        calibrate_items(scored, "coverage", folds=5)


def test_one_label_only_is_refused() -> None:
    only = ScoredCase(ItemCase("d/a", "s", ("q?",), (True,)), (0.7,))
    with pytest.raises(InputError, match="both kinds"):
        calibrate_items([only, only], "coverage")


def test_the_threshold_is_an_option_and_the_figures_an_axis_table(tmp_path: Path) -> None:
    spec = load_registry().resolve("default")
    scored = collect_items(read_item_cases(_cases(tmp_path)), SPEC, _scorer())
    result = calibrate_items(scored, "coverage", folds=3)
    registry = tmp_path / "models.toml"
    registry.write_text("# mine\n", encoding="utf-8")
    quality = item_quality(result, "coverage.jsonl", "2026-12-07")
    assert SPEC.item_calibration is not None
    write_item_threshold(
        registry, spec.name, spec.to_entry(), "summarization", SPEC.item_calibration, 0.55, quality
    )
    text = registry.read_text(encoding="utf-8")
    assert text.startswith("# mine\n")
    part = tomllib.loads(text)["models"][spec.name]["scorers"]["summarization"]
    assert part["options"]["coverage_threshold"] == 0.55
    assert part["axes"]["coverage"]["pearson"] == 1.0
    assert part["axes"]["coverage"]["cases"] == 12
    os.environ["OFFLINE_SCORER_MODELS"] = str(registry)
    try:
        read = load_registry().resolve(spec.name)
    finally:
        del os.environ["OFFLINE_SCORER_MODELS"]
    lines, warnings = read.part("summarization").figures()
    assert any(line.startswith("coverage quality: ROC AUC 1.000") for line in lines)
    assert "Pearson 1.000" in lines[-1]
    assert not any("coverage" in warning for warning in warnings)


def test_calibrate_axis_command_replays_and_writes_the_user_registry(tmp_path: Path) -> None:
    spec = load_registry().resolve("default")
    cassette = tmp_path / "c.oscas"
    identity = pinned_identity(spec)
    assert identity is not None, "the default judge is pinned in models.toml"
    recorder = CassetteJudge(cassette, mode=RecordMode.RECORD, identity=identity, live=_judge())
    data = _cases(tmp_path)
    collect_items(read_item_cases(data), SPEC, _scorer(recorder))
    recorder.close()
    user = tmp_path / "user-models.toml"
    user.write_text("", encoding="utf-8")
    common = ("--record-mode", "replay", "--cassette", str(cassette), "--one-by-one", "true")
    args = ("calibrate", str(data), "--axis", "coverage", "--folds", "3", *common)
    proc = run_cli(*args, "--json", env={**os.environ, "OFFLINE_SCORER_MODELS": str(user)})
    assert proc.returncode == 0, proc.stderr.decode()
    figures = json.loads(proc.stdout)
    assert figures["roc_auc"] == 1.0 and figures["folds"] == 3
    written = tomllib.loads(user.read_text())["models"][spec.name]["scorers"]["summarization"]
    assert written["options"]["coverage_threshold"] == figures["threshold"]
    assert written["axes"]["coverage"]["verdicts"] == 48
    per_row = tmp_path / "rows.jsonl"
    proc = run_cli(*args, "--dry-run", "--per-row", str(per_row))
    assert proc.returncode == 0, proc.stderr.decode()
    lines = [json.loads(line) for line in per_row.read_text().splitlines()]
    assert len(lines) == 12 and lines[0]["p_true"] == [0.8, 0.8, 0.3, 0.3]
    wrong = run_cli("calibrate", str(data), "--axis", "alignment", *common)
    assert wrong.returncode != 0
    assert b"calibrates --axis coverage" in wrong.stderr and b"Traceback" not in wrong.stderr
