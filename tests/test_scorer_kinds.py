"""A second scorer kind, `consistency`, that lives only in tests/kinds (an `offline_scorer.scorers`
entry point, like a third-party plugin's, that tests/conftest.py registers for the test run
alone, installing nothing): it runs through eval
(serial, --workers, Ray), report (table, HTML, judge quality with labels), calibrate and
cassette replay with no change to offline-scorer. Its cassette was recorded live with the
shipped GGUF (`eval tests/kinds/data/pairs.jsonl --scorer consistency --record-mode record`)."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import pytest

from offline_scorer.models.registry import load_registry
from offline_scorer.scorers import get_spec, kinds
from tests.conftest import TEST_KINDS, pythonpath_of
from tests.test_cli import assert_clean_error, run_cli

KINDS = Path(__file__).parent / "kinds"
DATA = KINDS / "data" / "pairs.jsonl"
GOLDEN = KINDS / "data" / "golden.jsonl"
REPLAY = ("--scorer", "consistency", "--record-mode", "replay", "--cassette")
CASSETTE = str(KINDS / "cassettes" / "fixtures.oscas")


def _eval(tmp_path, *extra: str):
    out = tmp_path / "out.jsonl"
    proc = run_cli("eval", str(DATA), "--out", str(out), *REPLAY, CASSETTE, "--quiet", *extra)
    return proc, out


def test_the_kind_is_registered_through_its_entry_point():
    assert "consistency" in kinds() and "summarization" in kinds()
    spec = get_spec("consistency")
    assert spec.axes == ("consistency", "brevity") and spec.judged_axis == "consistency"


def test_eval_replays_the_kind_serially_and_with_workers(tmp_path):
    proc, out = _eval(tmp_path)
    assert proc.returncode == 0, proc.stderr.decode()
    assert out.read_bytes() == GOLDEN.read_bytes()
    header, first = (json.loads(line) for line in GOLDEN.read_text().splitlines()[:2])
    assert header["recipe"]["scorer"] == "consistency"
    assert first["scorer"] == "consistency" and set(first["axes"]) == {"consistency", "brevity"}
    out.unlink()
    proc, out = _eval(tmp_path, "--workers", "2")
    assert proc.returncode == 0, proc.stderr.decode()
    assert out.read_bytes() == GOLDEN.read_bytes()


def test_eval_replays_the_kind_on_ray(tmp_path):
    pytest.importorskip("ray")
    proc, out = _eval(tmp_path, "--executor", "ray", "--workers", "1")
    assert proc.returncode == 0, proc.stderr.decode()
    assert out.read_bytes() == GOLDEN.read_bytes()


def test_report_shows_the_kinds_axes_verdicts_and_quality(tmp_path):
    html = tmp_path / "r.html"
    proc = run_cli("report", str(GOLDEN), "--html", str(html))
    out = proc.stdout.decode()
    assert proc.returncode == 0, proc.stderr.decode()
    assert "consistency  mean" in out and "brevity      mean" in out
    assert "label 'consistent' (true = positive): 12 items, 8 true, 4 false" in out
    assert "ROC AUC, weakest consistency P(true)" in out
    page = html.read_text(encoding="utf-8")
    assert "inconsistent" in page and "alignment" not in page
    proc = run_cli("report", str(GOLDEN), "--json", "--no-html")
    quality = json.loads(proc.stdout)["quality"]
    assert quality["axis"] == "consistency" and quality["rule"] == "consistency == 1"


def test_report_on_a_file_mixing_kinds_says_so_in_one_line(tmp_path):
    mixed = tmp_path / "mixed.jsonl"
    summarization = Path("fixtures/golden/results.jsonl").read_text().splitlines()
    kind_lines = GOLDEN.read_text().splitlines()[1:]  # its header left out: one file, one header
    mixed.write_text("\n".join([*summarization[:3], *kind_lines]) + "\n")
    proc = run_cli("report", str(mixed), "--no-html")
    assert_clean_error(proc, 2, "mixes scorer kinds", "consistency (12 lines)", "--scorer")
    proc = run_cli("report", str(mixed), "--no-html", "--scorer", "consistency", "--json")
    assert proc.returncode == 0, proc.stderr.decode()
    assert json.loads(proc.stdout)["count"] == 12


def test_calibrate_the_kind_from_its_cassette(tmp_path):
    user = tmp_path / "models.toml"
    user.write_text("# mine\n", encoding="utf-8")
    proc = run_cli(
        "calibrate",
        str(DATA),
        *REPLAY,
        CASSETTE,
        "--json",
        env={**os.environ, "OFFLINE_SCORER_MODELS": str(user)},
    )
    assert proc.returncode == 0, proc.stderr.decode()
    figures = json.loads(proc.stdout)
    assert figures["items"] == 12 and 0 <= figures["threshold"] <= 1
    assert figures["roc_auc"] == pytest.approx(0.8438, abs=1e-4)
    assert "verdict_threshold" in user.read_text()


def test_calibrating_the_kind_leaves_the_judges_summarization_figures(tmp_path, monkeypatch):
    """Figures are kept per kind: `calibrate --scorer consistency` writes the consistency
    table of the judge and nothing else, here into a user registry holding the user's own
    summarization figures, and each command then shows the figures of the kind it runs."""
    shipped = load_registry().resolve("default")
    user = tmp_path / "models.toml"
    entry = shipped.to_table()
    entry.pop("scorers")
    mine = (  # the user's own summarization figures
        f"\n[models.{shipped.name}.scorers.summarization]\n"
        f"verdict_threshold = {shipped.verdict_threshold}\n"
        f'[models.{shipped.name}.scorers.summarization.quality]\ndataset = "mine.jsonl"\n'
        "rows = 40\nroc_auc = 0.9\n"
        "roc_auc_low = 0.8\nroc_auc_high = 0.95\nbalanced_accuracy = 0.85\n"
        'measured = "2026-12-01"\n'
    )
    lines = [f"{key} = {json.dumps(value)}" for key, value in entry.items() if key != "parts"]
    user.write_text(
        f"# mine\n[models.{shipped.name}]\n" + "\n".join(lines) + "\n" + mine,
        encoding="utf-8",
    )
    env = {**os.environ, "OFFLINE_SCORER_MODELS": str(user)}
    monkeypatch.setenv("OFFLINE_SCORER_MODELS", str(user))
    before = load_registry().resolve("default")
    assert before.quality is not None and before.quality.dataset == "mine.jsonl"
    proc = run_cli("calibrate", str(DATA), *REPLAY, CASSETTE, "--json", env=env)
    assert proc.returncode == 0, proc.stderr.decode()
    figures = json.loads(proc.stdout)
    written = tomllib.loads(user.read_text(encoding="utf-8"))["models"][shipped.name]
    assert written["scorers"]["summarization"] == {
        "verdict_threshold": shipped.verdict_threshold,
        "quality": before.quality.model_dump(exclude_none=True),
    }
    part = written["scorers"]["consistency"]
    assert part["verdict_threshold"] == figures["threshold"]
    assert part["quality"]["rows"] == 12 and part["quality"]["dataset"] == DATA.name
    assert user.read_text(encoding="utf-8").startswith("# mine\n")

    after = load_registry().resolve("default")
    assert (after.verdict_threshold, after.quality) == (before.verdict_threshold, before.quality)
    consistency = after.for_kind("consistency")
    assert consistency.verdict_threshold == figures["threshold"]
    assert consistency.quality is not None and consistency.quality.rows == 12
    listed = run_cli("models", "list", env=env).stdout.decode()
    assert f"consistency: verdict threshold {figures['threshold']}" in listed
    assert "on 40 labelled pairs of mine.jsonl" in listed
    report = run_cli("report", str(GOLDEN), "--cassette", CASSETTE, "--no-html", env=env)
    assert f"on 12 labelled pairs of {DATA.name}" in report.stdout.decode()
    assert "mine.jsonl" not in report.stdout.decode()


def test_a_users_environment_offers_no_test_kind(tmp_path):
    """scripts/setup installs no test-only kind: outside what tests/conftest.py registers for
    the test run, the real `eval --help` and `score --help` offer the shipped kind alone."""
    ours = [str(TEST_KINDS)] + [
        part
        for part in os.environ.get("PYTHONPATH", "").split(os.pathsep)
        if part and any(Path(part).glob("offline_scorer_test_kinds*.dist-info"))
    ]
    kept = [part for part in os.environ.get("PYTHONPATH", "").split(os.pathsep) if part]
    env = {**os.environ, "PYTHONPATH": pythonpath_of(*(p for p in kept if p not in ours))}
    for command in ("eval", "score"):
        proc = run_cli(command, "--help", env=env)
        shown = proc.stdout.decode()
        assert proc.returncode == 0, proc.stderr.decode()
        assert "consistency" not in shown, (
            "the test-only scorer kind is installed in this environment; scripts/setup "
            "uninstalls it (or: pip uninstall offline-scorer-test-kinds)"
        )
        assert "(installed: summarization)" in " ".join(shown.split())


def test_a_flag_of_another_kind_is_one_line(tmp_path):
    proc = run_cli(
        "eval",
        str(DATA),
        "--out",
        str(tmp_path / "o.jsonl"),
        *REPLAY,
        CASSETTE,
        "--max-questions",
        "3",
    )
    assert_clean_error(
        proc, 2, "--max-questions is not an option of the consistency scorer", "--brevity-ratio"
    )
    proc = run_cli("eval", str(DATA), "--scorer", "nope")
    assert_clean_error(proc, 2, "unknown scorer kind 'nope'", "consistency, summarization")


def _broken_plugin(tmp_path: Path) -> dict[str, str]:
    """An installed distribution (a dist-info on the path, as pip leaves one) whose scorer kind
    names a module that no longer exists: a stale or half-removed plugin."""
    info = tmp_path / "site" / "stale_plugin-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: stale-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[offline_scorer.scorers]\nstale = stale_plugin_gone.spec:SPEC\n"
    )
    path = os.pathsep.join(filter(None, [str(info.parent), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path}


def test_a_plugin_that_does_not_load_is_named_and_the_other_kinds_still_work(tmp_path):
    env = _broken_plugin(tmp_path)
    proc = run_cli("report", str(GOLDEN), "--no-html", env=env)
    err = proc.stderr.decode()
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    assert err.splitlines()[:1] == [
        "warning: scorer kind 'stale' (stale_plugin_gone.spec:SPEC, entry point of "
        "offline_scorer.scorers) does not load (ModuleNotFoundError: No module named "
        "'stale_plugin_gone'); reinstall or uninstall the package that declares it"
    ]
    assert "consistency" in proc.stdout.decode()

    proc = run_cli(
        "eval", str(DATA), "--out", str(tmp_path / "o.jsonl"), "--scorer", "stale", env=env
    )
    lines = [line for line in proc.stderr.decode().splitlines() if line.startswith("error: ")]
    assert proc.returncode != 0 and "Traceback" not in proc.stderr.decode()
    assert lines == [
        "error: scorer kind 'stale' (stale_plugin_gone.spec:SPEC, entry point of "
        "offline_scorer.scorers) does not load (ModuleNotFoundError: No module named "
        "'stale_plugin_gone'); reinstall or uninstall the package that declares it"
    ]
    assert not (tmp_path / "o.jsonl").exists()
