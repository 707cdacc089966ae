"""The digests `eval` and `report` print, and the provenance the JSON and HTML reports carry."""

from __future__ import annotations

import hashlib
import json

from offline_scorer.cassette.digest import content_digest
from offline_scorer.models.registry import load_registry
from tests.conftest import FIXTURES
from tests.test_cli import run_cli

GOLDEN = FIXTURES / "golden" / "results.jsonl"
CASSETTE = FIXTURES / "cassettes" / "fixtures.oscas"
DATA = FIXTURES / "pairs.jsonl"
RESULTS_SHA = hashlib.sha256(GOLDEN.read_bytes()).hexdigest()


def test_report_json_carries_digests_judge_versions_and_commands():
    proc = run_cli(
        "report", str(GOLDEN), "--json", "--no-html", "--cassette", str(CASSETTE), "--data",
        str(DATA),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr.decode()
    origin = json.loads(proc.stdout)["provenance"]
    digest = str(content_digest(CASSETTE))
    assert origin["results_sha256"] == f"sha256:{RESULTS_SHA}"
    assert origin["cassette_digest"] == digest and origin["cassette_exchanges"] == 28
    spec = load_registry().resolve("default")
    [judge] = origin["judges"]
    assert judge["model_sha256"] == spec.sha256
    assert judge["verdict_threshold"] == spec.verdict_threshold
    assert judge["backend"].startswith("llguidance-gbnf/")
    assert origin["runtimes"] == [{"llama-cpp-python": "0.3.36", "llguidance": "1.9.1"}]
    assert origin["commands"] == [
        f"sha256sum {GOLDEN}  # expect {RESULTS_SHA}",
        f"offline-scorer cassette verify {CASSETTE} --digest {digest}",
        f"offline-scorer reproduce {GOLDEN} --cassette {CASSETTE} --data {DATA}",
    ]  # the results header carries the run's recipe: no flags
    err = proc.stderr.decode().splitlines()
    assert err == [f"results  sha256:{RESULTS_SHA}  {GOLDEN}", f"cassette {digest}  {CASSETTE}"]


def test_the_commands_a_report_prints_check_out(tmp_path):
    """Each command the report lists succeeds as written (sha256sum aside: hashlib above)."""
    proc = run_cli("report", str(GOLDEN), "--json", "--no-html", "--cassette", str(CASSETTE),
                   "--data", str(DATA))  # fmt: skip
    commands = json.loads(proc.stdout)["provenance"]["commands"]
    for command in commands[1:]:
        args = command.split("  #")[0].split()[1:]
        checked = run_cli(*args)
        assert checked.returncode == 0, (command, checked.stdout.decode(), checked.stderr.decode())


def test_html_report_shows_the_provenance(tmp_path):
    html = tmp_path / "page.html"
    proc = run_cli("report", str(GOLDEN), "--html", str(html), "--cassette", str(CASSETTE))
    assert proc.returncode == 0, proc.stderr.decode()
    page = html.read_text(encoding="utf-8")
    assert "<h2>Provenance</h2>" in page
    assert f"sha256:{RESULTS_SHA}" in page and str(content_digest(CASSETTE)) in page
    assert "llama-cpp-python 0.3.36" in page and "--data DATA.jsonl" in page
    again = tmp_path / "again.html"
    run_cli("report", str(GOLDEN), "--html", str(again), "--cassette", str(CASSETTE))
    assert again.read_bytes() == html.read_bytes()


def test_eval_in_replay_prints_both_digests(tmp_path):
    out = tmp_path / "results.jsonl"
    proc = run_cli(
        "eval", str(DATA), "--out", str(out), "--record-mode", "replay", "--cassette",
        str(CASSETTE), "--quiet",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr.decode()
    assert out.read_bytes() == GOLDEN.read_bytes()
    err = proc.stderr.decode()
    assert f"results  sha256:{RESULTS_SHA}  {out}" in err
    assert f"cassette {content_digest(CASSETTE)}  {CASSETTE}" in err
