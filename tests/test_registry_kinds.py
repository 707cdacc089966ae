"""A judge's threshold and measured quality are kept per scorer kind
(`[models.NAME.scorers.KIND]`); a registry written for 0.3 (one of each per model) is refused
in one line naming its unknown fields and the converter, and `offline-scorer migrate registry
FILE` converts it keeping every value, after which it loads as the summarization kind's."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest

from offline_scorer import ConfigError
from offline_scorer.assembly.migrate.registry import move_fields
from offline_scorer.assembly.open import JudgeSettings
from offline_scorer.assembly.run_spec import RunSpec
from offline_scorer.cassette.modes import RecordMode
from offline_scorer.models.registry import ModelSpec, load_registry
from tests.test_cli import assert_clean_error, run_cli

QUALITY = (
    'dataset = "{name}"\nrows = 30\nroc_auc = 0.8\nroc_auc_low = 0.7\nroc_auc_high = 0.9\n'
    'balanced_accuracy = 0.75\nmeasured = "2026-12-01"\n'
)
EARLIER = (
    "# my judges\n"
    '[models.mine]\npath = "mine.gguf"\nverdict_threshold = 0.61\n'
    "[models.mine.quality]\n" + QUALITY.format(name="mine.jsonl") + "# coverage, measured apart\n"
    "[models.mine.quality.coverage]\n"
    'dataset = "cov"\nverdicts = 50\nroc_auc = 0.7\nroc_auc_low = 0.6\nroc_auc_high = 0.8\n'
    'true_when_false = 0.3\nmeasured = "2026-12-01"\n'
    "[models.mine.scorer_options.summarization]\n"
    "# reasons in its own words\n"
    'free_text = "open"\n'
    "[models.mine.served_options.summarization]\ncoverage_threshold = 0.45\n"
)


@pytest.fixture
def earlier(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "mine.gguf").write_bytes(b"GGUF")
    user = tmp_path / "models.toml"
    user.write_text(EARLIER, encoding="utf-8")
    monkeypatch.setenv("OFFLINE_SCORER_MODELS", str(user))
    return user


def test_the_shipped_registry_keeps_each_judges_figures_under_its_summarization_kind():
    text = (Path(__file__).parents[1] / "offline_scorer/models/models.toml").read_text()
    models = tomllib.loads(text)["models"]
    for name, table in models.items():
        assert not {"verdict_threshold", "quality", "scorer_options", "served_options"} & set(
            table
        ), name
        assert set(table["scorers"]) == {"summarization"}, name
    thresholds = {name: load_registry().models[name].verdict_threshold for name in models}
    # part of every cassette key: the committed cassettes replay only at these
    assert thresholds == {
        "smollm2-135m": 0.4161,
        "qwen2.5-coder-0.5b": 0.9181,
        "qwen2.5-coder-1.5b": 0.6464,
    }


def test_a_registry_of_the_earlier_shape_is_refused_naming_the_converter(earlier: Path):
    proc = run_cli("models", "list", env={**os.environ})
    assert proc.returncode != 0
    lines = proc.stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    assert "unknown field(s) quality, scorer_options, served_options, verdict_threshold" in lines[0]
    assert "offline-scorer migrate registry FILE" in lines[0] and str(earlier) in lines[0]


def test_migrate_registry_converts_keeping_every_value_and_the_comments(earlier: Path):
    proc = run_cli("migrate", "registry", str(earlier))
    assert proc.returncode == 0, proc.stderr.decode()
    assert f"migrated {earlier}: mine" in proc.stdout.decode()
    text = earlier.read_text(encoding="utf-8")
    for comment in ("# my judges", "# coverage, measured apart", "# reasons in its own words"):
        assert comment in text
    new = tomllib.loads(text)["models"]["mine"]
    moved = tomllib.loads(EARLIER)["models"]["mine"]
    assert move_fields(moved) and new == moved  # the file and the plain move agree
    assert new["scorers"]["summarization"]["verdict_threshold"] == 0.61
    assert new["scorers"]["summarization"]["options"] == {"free_text": "open"}
    again = run_cli("migrate", "registry", str(earlier))
    assert again.returncode == 0 and "nothing to do" in again.stdout.decode()
    assert earlier.read_text(encoding="utf-8") == text

    spec = load_registry().models["mine"]
    assert spec.kind == "summarization" and spec.verdict_threshold == 0.61
    assert spec.quality is not None and spec.quality.dataset == "mine.jsonl"
    assert spec.quality.coverage is not None and spec.quality.coverage.verdicts == 50
    assert spec.scorer_options == {"summarization": {"free_text": "open"}}
    assert spec.served_options == {"summarization": {"coverage_threshold": 0.45}}
    other = spec.for_kind("consistency")
    assert other.quality is None  # measured with summarization: says nothing of this kind
    assert other.verdict_threshold == 0.61  # what every kind ran at before: cassettes replay
    listed = run_cli("models", "list", env={**os.environ})
    assert listed.returncode == 0 and listed.stderr.decode() == ""
    assert "summarization: verdict threshold 0.61" in listed.stdout.decode()


def test_each_kind_has_its_own_threshold_and_quality(tmp_path, monkeypatch):
    (tmp_path / "mine.gguf").write_bytes(b"GGUF")
    user = tmp_path / "models.toml"
    user.write_text(
        '[models.mine]\npath = "mine.gguf"\n'
        "[models.mine.scorers.summarization]\nverdict_threshold = 0.61\n"
        "[models.mine.scorers.consistency]\nverdict_threshold = 0.3\n"
        "[models.mine.scorers.consistency.quality]\n" + QUALITY.format(name="pairs.jsonl"),
        encoding="utf-8",
    )
    monkeypatch.setenv("OFFLINE_SCORER_MODELS", str(user))
    spec = load_registry().models["mine"]
    assert (spec.verdict_threshold, spec.quality) == (0.61, None)
    consistency = spec.for_kind("consistency")
    assert consistency.verdict_threshold == 0.3 and consistency.quality is not None
    assert consistency.quality.dataset == "pairs.jsonl"
    assert spec.for_kind("other").verdict_threshold == 0.61
    bare = ModelSpec(name="x", path=tmp_path / "mine.gguf")
    assert bare.for_kind("consistency").verdict_threshold == 0.5


def test_a_broken_kind_table_is_one_line_naming_the_field(tmp_path, monkeypatch):
    user = tmp_path / "models.toml"
    user.write_text(
        '[models.mine]\npath = "mine.gguf"\n[models.mine.scorers.summarization.quality]\n'
        + QUALITY.format(name="x").replace("roc_auc = 0.8", "roc_auc = 1.7"),
        encoding="utf-8",
    )
    monkeypatch.setenv("OFFLINE_SCORER_MODELS", str(user))
    with pytest.raises(ConfigError) as caught:
        load_registry()
    assert str(caught.value).endswith(
        "scorers.summarization.quality.roc_auc must be a number from 0 to 1, got 1.7"
    )
    user.write_text(
        '[models.mine]\npath = "mine.gguf"\nverdict_threshold = 0.6\n'
        "[models.mine.scorers.summarization]\nverdict_threshold = 0.7\n",
        encoding="utf-8",
    )
    proc = run_cli("migrate", "registry", str(user))
    assert_clean_error(proc, 2, "'verdict_threshold' of the summarization kind is given twice")
    assert "verdict_threshold = 0.6\n" in user.read_text(encoding="utf-8")  # nothing written


def test_a_run_of_a_kind_judges_at_that_kinds_threshold(tmp_path, monkeypatch):
    (tmp_path / "mine.gguf").write_bytes(b"GGUF")
    user = tmp_path / "models.toml"
    pins = f'sha256 = "{"a" * 64}"\nchat_template_sha256 = "{"b" * 64}"\n'
    user.write_text(
        '[models.mine]\npath = "mine.gguf"\n' + pins + "[models.mine.scorers.summarization]\n"
        "verdict_threshold = 0.61\n[models.mine.scorers.consistency]\nverdict_threshold = 0.3\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("OFFLINE_SCORER_MODELS", str(user))
    settings = JudgeSettings(model="mine", cassette=tmp_path / "c.oscas", mode=RecordMode.AUTO)
    for kind, threshold in (("summarization", 0.61), ("consistency", 0.3)):
        run = RunSpec.of(kind, judge=settings)
        assert run.model().verdict_threshold == threshold
        identity = run.pinned_identity()  # what its cassette keys are made with
        assert identity is not None and identity.verdict_threshold == threshold
        judge, spec = run.open_judge()  # the judge a command opens
        assert judge.identity == identity and spec.verdict_threshold == threshold
