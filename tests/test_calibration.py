"""Calibrating a verdict threshold: the rule, the registry write, and the command on a replayed
cassette (a scripted judge records it, so no model runs here)."""

from __future__ import annotations

import json
import os
import tomllib

import pytest

from offline_scorer import ConfigError, InputError
from offline_scorer.assembly.open import pinned_identity
from offline_scorer.batch.datasets import load_dataset
from offline_scorer.calibration import (
    Labelled,
    calibrate,
    collect,
    label_of,
    write_threshold,
)
from offline_scorer.cassette.judge import CassetteJudge, RecordMode
from offline_scorer.models.registry import load_registry
from offline_scorer.scorers import get_spec
from offline_scorer.scorers.summarization.options import ScorerOptions
from offline_scorer.scorers.summarization.scorer import SummarizationScorer
from offline_scorer.testing import ScriptedJudge
from tests.conftest import ROOT
from tests.test_cli import run_cli

SOURCE = "The ferry runs twice a day from the north pier. Tickets cost twelve euros."


SPEC = get_spec("summarization")


def test_labels_come_from_the_kinds_binary_label_fields():
    assert label_of(SPEC, {"faithful": True}) is True
    assert label_of(SPEC, {"label": 0}) is False
    assert label_of(SPEC, {"faithful": "false"}) is False
    assert label_of(SPEC, {"domain": "x"}) is None
    assert label_of(SPEC, {"human_score": 1}) is None  # numeric, not a binary label


def test_the_threshold_separates_the_weakest_claims_by_label():
    items = [
        Labelled(str(i), faithful, p)
        for i, (faithful, p) in enumerate(
            [(True, 0.9), (True, 0.8), (True, 0.55), (False, 0.5), (False, 0.3), (False, 0.6)]
        )
    ]
    result = calibrate(items)
    assert 0.5 < result.threshold <= 0.55
    assert result.balanced_accuracy == pytest.approx(5 / 6)
    assert result.roc_auc == pytest.approx(8 / 9)
    low, high = result.roc_auc_ci
    assert 0 <= low <= result.roc_auc <= high <= 1


def test_a_kept_threshold_is_measured_at_and_the_best_one_still_reported():
    items = [
        Labelled(str(i), faithful, p)
        for i, (faithful, p) in enumerate(
            [(True, 0.9), (True, 0.8), (True, 0.55), (False, 0.5), (False, 0.3), (False, 0.6)]
        )
    ]
    best = calibrate(items)
    kept = calibrate(items, keep=0.95)
    assert kept.threshold == 0.95 and kept.best_threshold == best.threshold == best.best_threshold
    assert kept.balanced_accuracy == pytest.approx(0.5)  # nothing reaches 0.95: all "false"
    assert (kept.roc_auc, kept.roc_auc_ci) == (best.roc_auc, best.roc_auc_ci)  # no threshold in it


def test_keep_threshold_measures_a_recorded_run_and_leaves_the_threshold(tmp_path):
    """How the shipped figures are re-measured: from a recorded dev-set run (here its first 12
    rows and their exchanges, cut from the benchmark's recording: tests/data/README.md), whose
    cassette replays only under the shipped threshold."""
    spec = load_registry().resolve("default")
    user = tmp_path / "user-models.toml"
    user.write_text("# mine\n", encoding="utf-8")
    proc = run_cli(
        "calibrate",
        str(ROOT / "tests/data/judge-dev-first12.jsonl"),
        "--keep-threshold",
        "--record-mode",
        "replay",
        "--cassette",
        str(ROOT / "tests/data/judge-dev-first12-sentences.oscas"),
        "--json",
        env={**os.environ, "OFFLINE_SCORER_MODELS": str(user)},
    )
    assert proc.returncode == 0, proc.stderr.decode()
    figures = json.loads(proc.stdout)
    assert figures["items"] == 12
    assert figures["threshold"] == spec.verdict_threshold != figures["best_threshold"]
    written = tomllib.loads(user.read_text())["models"][spec.name]["scorers"]["summarization"]
    assert written["verdict_threshold"] == spec.verdict_threshold
    assert written["quality"]["rows"] == 12
    assert written["quality"]["roc_auc"] == round(figures["roc_auc"], 3)
    assert written["quality"]["balanced_accuracy"] == round(figures["balanced_accuracy"], 3)


def test_one_class_only_is_refused():
    with pytest.raises(InputError, match="both kinds"):
        calibrate([Labelled("a", True, 0.9), Labelled("b", True, 0.2)])


def _rows(tmp_path, n=6):
    data = tmp_path / "labelled.jsonl"
    lines = [
        json.dumps(
            {
                "id": f"r{i}",
                "source": SOURCE,
                "summary": f"Summary number {i}.",
                "faithful": i % 2 == 0,
            }
        )
        for i in range(n)
    ]
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return data


class ByRow(ScriptedJudge):
    """P(supported) high for even rows (faithful), low for odd ones."""

    def complete(self, request):
        row = int(request.messages[1].content.split("Summary number ")[1][0])
        self.probabilities = {"preprocess": (0.8 if row % 2 == 0 else 0.3,)}
        return super().complete(request)


def _judge():
    return ByRow(
        alignment=[{"claim": "c", "supported": True, "reason": "r"}],
        questions=["q?"],
        threshold=0.5,
    )


def test_collect_reads_the_weakest_claim_of_each_row(tmp_path):
    scorer = SummarizationScorer(_judge(), ScorerOptions())
    items, skipped = collect(load_dataset(_rows(tmp_path)), SPEC, scorer)
    assert skipped == 0
    assert [(i.positive, i.weakest) for i in items[:2]] == [(True, 0.8), (False, 0.3)]


def test_a_judge_without_probabilities_cannot_be_calibrated(tmp_path):
    judge = ScriptedJudge(
        alignment=[{"claim": "c", "supported": True, "reason": "r"}], questions=["q?"]
    )
    with pytest.raises(ConfigError, match="gives no verdict probabilities"):
        collect(load_dataset(_rows(tmp_path)), SPEC, SummarizationScorer(judge, ScorerOptions()))


def test_write_threshold_copies_a_shipped_entry_and_keeps_comments(tmp_path):
    spec = load_registry().resolve("default")
    registry = tmp_path / "models.toml"
    registry.write_text('# my models\ndefault = "smollm2-135m"\n', encoding="utf-8")
    write_threshold(registry, spec.name, spec.to_entry(), 0.4321)
    text = registry.read_text(encoding="utf-8")
    assert text.startswith("# my models\n")
    entry = tomllib.loads(text)["models"][spec.name]
    assert entry["scorers"]["summarization"]["verdict_threshold"] == 0.4321
    assert entry["sha256"] == spec.sha256 and entry["package"] == spec.package
    assert "verdict_threshold" not in entry  # the per-kind shape only


def _recorded(tmp_path, spec):
    """The scripted judge's run over `_rows` recorded to a cassette: (its path, the items)."""
    cassette = tmp_path / "c.oscas"
    recorder = CassetteJudge(
        cassette, mode=RecordMode.RECORD, identity=pinned_identity(spec), live=_judge()
    )
    items, _ = collect(
        load_dataset(_rows(tmp_path)), SPEC, SummarizationScorer(recorder, ScorerOptions())
    )
    recorder.close()
    return cassette, items


def test_calibrate_command_replays_and_writes_only_the_user_registry(tmp_path):
    spec = load_registry().resolve("default")
    cassette, _ = _recorded(tmp_path, spec)
    user = tmp_path / "user-models.toml"
    user.write_text("# mine\n", encoding="utf-8")
    shipped_before = (load_registry().models[spec.name].origin, spec.verdict_threshold)
    proc = run_cli(
        "calibrate",
        str(_rows(tmp_path)),
        "--record-mode",
        "replay",
        "--cassette",
        str(cassette),
        "--json",
        env={**os.environ, "OFFLINE_SCORER_MODELS": str(user)},
    )
    assert proc.returncode == 0, proc.stderr.decode()
    figures = json.loads(proc.stdout)
    assert figures["roc_auc"] == 1.0 and figures["balanced_accuracy"] == 1.0
    assert figures["written_to"] == str(user)
    written = tomllib.loads(user.read_text())["models"][spec.name]["scorers"]["summarization"]
    assert written["verdict_threshold"] == figures["threshold"]
    # what was measured, as the registry keeps it (shown beside every later score)
    assert written["quality"]["dataset"] == _rows(tmp_path).name
    assert written["quality"]["rows"] == figures["items"]
    assert written["quality"]["roc_auc"] == round(figures["roc_auc"], 3)
    assert written["quality"]["roc_auc_low"] == round(figures["roc_auc_ci"][0], 3)
    assert written["quality"]["balanced_accuracy"] == round(figures["balanced_accuracy"], 3)
    # the coverage measurement is not calibrate's: it is carried over as it was
    kept = spec.quality.coverage
    assert written["quality"].get("coverage") == (
        None if kept is None else kept.model_dump(exclude_none=True)
    )
    assert (load_registry().models[spec.name].origin, spec.verdict_threshold) == shipped_before


def test_per_row_writes_each_rows_label_and_weakest_probability(tmp_path):
    cassette, items = _recorded(tmp_path, load_registry().resolve("default"))
    per_row = tmp_path / "rows.jsonl"
    proc = run_cli(
        "calibrate",
        str(_rows(tmp_path)),
        "--record-mode",
        "replay",
        "--cassette",
        str(cassette),
        "--dry-run",
        "--per-row",
        str(per_row),
    )
    assert proc.returncode == 0, proc.stderr.decode()
    lines = [json.loads(line) for line in per_row.read_text().splitlines()]
    assert lines == [{"id": i.id, "faithful": i.positive, "p_true": i.weakest} for i in items]
    assert len(lines) == len(items) > 0


def test_calibrate_refuses_contradicting_flags(tmp_path):
    proc = run_cli("calibrate", str(_rows(tmp_path)), "--write-shipped", "--dry-run")
    assert proc.returncode == 2
    assert proc.stderr.decode().count("\n") == 1


def test_the_registry_keeps_ordinary_permissions_and_a_bad_path_is_one_clear_error(tmp_path):
    spec = load_registry().resolve("default")
    registry = tmp_path / "models.toml"
    write_threshold(registry, spec.name, spec.to_entry(), 0.5)
    umask = os.umask(0)
    os.umask(umask)
    assert registry.stat().st_mode & 0o777 == 0o666 & ~umask
    blocked = tmp_path / "a-file"
    blocked.write_text("x")
    with pytest.raises(ConfigError, match="cannot write model registry"):
        write_threshold(blocked / "models.toml", spec.name, spec.to_entry(), 0.5)
