"""`offline-scorer reproduce`: a results file derived again from its data and cassette."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import subprocess
import sys

import pytest

from offline_scorer.assembly.migrate.decoders import earlier_ids, replayed_id_of_file
from offline_scorer.assembly.open import JudgeSettings, open_judge, replayed_backend_id
from offline_scorer.backends import get_backend
from offline_scorer.batch.reproduce import compare_lines, first_differing_field, other_version
from offline_scorer.cassette.judge import RecordMode
from offline_scorer.errors import ConfigError
from offline_scorer.version import __version__
from tests.conftest import FIXTURES, ROOT, block_imports_code, replay_env
from tests.test_cli import assert_clean_error, run_cli

GOLDEN = FIXTURES / "golden" / "results.jsonl"
CASSETTE = FIXTURES / "cassettes" / "fixtures.oscas"
DATA = FIXTURES / "pairs.jsonl"
DECODER_2_RESULTS = ROOT / "tests/data/decoder2-results.jsonl"
DECODER_2_CASSETTE = ROOT / "tests/data/decoder2-fixtures.oscas"


def _reproduce(results, *extra: str):
    return run_cli(
        "reproduce", str(results), "--cassette", str(CASSETTE), "--data", str(DATA), *extra
    )


def _tampered(tmp_path, number: int, edit) -> str:
    """The golden file with line `number` edited; returns that line's id."""
    lines = GOLDEN.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[number - 1])
    edit(record)
    lines[number - 1] = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    (tmp_path / "tampered.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return record["id"]


def test_the_fixture_results_reproduce_without_a_model_runtime(tmp_path):
    """No model file (the registry points at a missing one) and llama_cpp unimportable."""
    code = block_imports_code("llama_cpp", "llguidance") + (
        "import sys\nfrom offline_scorer.cli.app import main\nsys.argv[0] = 'offline-scorer'\n"
        "main()\n"
    )
    args = ["reproduce", str(GOLDEN), "--cassette", str(CASSETTE), "--data", str(DATA)]
    proc = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        env=replay_env(tmp_path),
        timeout=120,
    )
    out = proc.stdout.decode()
    assert proc.returncode == 0, proc.stderr.decode()
    assert "13 of 13 lines identical" in out  # the recipe header and 12 items
    assert f"results  sha256:{hashlib.sha256(GOLDEN.read_bytes()).hexdigest()}" in out
    assert "cassette oscas-content-v1:sha256:" in out


def test_a_tampered_verdict_is_named_by_line_and_field(tmp_path):
    def flip(record):
        claim = record["result"]["preprocessStepResult"]["alignment"][1]
        claim["supported"] = not claim["supported"]

    ident = _tampered(tmp_path, 4, flip)  # line 1 is the header
    proc = _reproduce(tmp_path / "tampered.jsonl")
    out = proc.stdout.decode()
    assert proc.returncode == 1
    assert out.splitlines()[0].startswith(
        f"line 4 (id {ident}): result.preprocessStepResult.alignment[1].supported differs:"
    )
    assert "12 of 13 lines identical" in out


def test_a_tampered_score_and_a_missing_line(tmp_path):
    def lower(record):
        record["score"] = 0

    ident = _tampered(tmp_path, 6, lower)
    tampered = tmp_path / "tampered.jsonl"
    lines = tampered.read_text(encoding="utf-8").splitlines(keepends=True)
    tampered.write_text("".join(lines[:-1]), encoding="utf-8")  # the last line lost
    out = _reproduce(tampered).stdout.decode()
    assert f"line 6 (id {ident}): score differs: file has 0, reproduced" in out
    assert "line 13 (id 12-kite-festival): line differs: file has (no such line)" in out
    assert "11 of 13 lines identical" in out


def test_other_scorer_options_show_in_the_header_and_the_digest(tmp_path):
    proc = _reproduce(GOLDEN, "--max-questions", "3")
    first, second = proc.stdout.decode().splitlines()[:2]
    assert proc.returncode == 1
    assert first == (
        "line 1 (the header): recipe.options.max_questions differs: file has 10, reproduced 3"
    )
    assert second.startswith("line 2 (id 01-harbor-bridge): digest (the data row, scorer options")


@pytest.mark.parametrize("workers", [(), ("--workers", "2")])
def test_a_run_recorded_before_a_decoder_change_still_reproduces(tmp_path, workers):
    """The fixture run as the llama_cpp decoder /2 recorded it (its cassette and results, as
    committed before /3): replayed under the id it was recorded with, with no model runtime,
    it re-derives to the same bytes, digests included."""
    code = block_imports_code("llama_cpp", "llguidance") + (
        "import sys\nfrom offline_scorer.cli.app import main\nsys.argv[0] = 'offline-scorer'\n"
        "main()\n"
    )
    args = ["reproduce", str(DECODER_2_RESULTS), "--cassette", str(DECODER_2_CASSETTE)]
    proc = subprocess.run(
        [sys.executable, "-c", code, *args, "--data", str(DATA), *workers],
        capture_output=True,
        env=replay_env(tmp_path),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert "13 of 13 lines identical" in proc.stdout.decode()
    former = {json.loads(line)["digest"] for line in DECODER_2_RESULTS.read_text().splitlines()[1:]}
    now = {json.loads(line)["digest"] for line in GOLDEN.read_text().splitlines()[1:]}
    assert former.isdisjoint(now)  # the digest names the decoder: the two runs differ there


def test_reproduce_with_two_worker_processes():
    proc = _reproduce(GOLDEN, "--workers", "2")
    assert proc.returncode == 0, proc.stderr.decode()
    assert "13 of 13 lines identical" in proc.stdout.decode()


def test_user_mistakes_are_one_line(tmp_path):
    assert_clean_error(_reproduce(tmp_path / "none.jsonl"), 2, "no such results file")
    proc = run_cli(
        "reproduce", str(GOLDEN), "--cassette", str(tmp_path / "x.oscas"), "--data", str(DATA)
    )
    assert_clean_error(proc, 5, "does not exist")
    assert_clean_error(_reproduce(GOLDEN, "--scorer", "nosuch"), 2, "not nosuch")
    assert_clean_error(_reproduce(GOLDEN, "--ray-address", "auto"), 2, "needs --executor ray")
    proc = run_cli(
        "reproduce", str(GOLDEN), "--cassette", str(CASSETTE), "--data", str(tmp_path / "d")
    )
    assert_clean_error(proc, 2, "no such dataset")


@pytest.mark.parametrize(
    ("recorded", "reproduced", "where"),
    [
        ({"a": 1, "b": {"c": [1, 2]}}, {"a": 1, "b": {"c": [1, 3]}}, "b.c[1]"),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}, "line (key order)"),
        ({"a": [1]}, {"a": [1, 2]}, "a (length)"),
        ({"a": 1}, {"a": 1, "x": None}, "x"),
        ({"a": True}, {"a": 1}, "a"),  # equal in Python, not in JSON
        ({"a": 1}, {"a": 1}, ""),
    ],
)
def test_first_difference_names_the_path(recorded, reproduced, where):
    assert first_differing_field(recorded, reproduced)[0] == where


def test_same_json_in_other_bytes_is_a_difference(tmp_path):
    results = tmp_path / "r.jsonl"
    results.write_text('{"id": "a", "score": 1}\n', encoding="utf-8")
    outcome = compare_lines(results, ['{"id":"a","score":1}'])
    assert not outcome.ok and outcome.differences[0].field.startswith("bytes")


def test_a_former_backend_id_is_checked_and_only_replayed(tmp_path):
    settings = JudgeSettings(
        cassette=DECODER_2_CASSETTE, mode=RecordMode.REPLAY, recorded_backend="nobody/1"
    )
    with pytest.raises(ConfigError, match="'nobody/1' is not an id the llama_cpp backend"):
        open_judge(settings)
    former = earlier_ids(get_backend("llama_cpp"))[0]
    auto = dataclasses.replace(settings, mode=RecordMode.AUTO, recorded_backend=former)
    with pytest.raises(ConfigError, match="can only be replayed"):
        open_judge(auto)
    assert replayed_id_of_file(DECODER_2_CASSETTE, None, None) == former
    assert replayed_id_of_file(CASSETTE, None, None) is None


def test_a_replay_answers_under_the_backend_id_its_recipe_names(tmp_path):
    """Once `migrate cassette` has written the decoder /2 cassette's recipe, a replay takes the
    decoder's id from the header, with no scan of the records; the fixture recording names
    today's id, so its replay answers under it."""
    migrated = tmp_path / "decoder2.oscas"
    proc = run_cli("migrate", "cassette", str(DECODER_2_CASSETTE), "--out", str(migrated))
    assert proc.returncode == 0, proc.stderr
    former = earlier_ids(get_backend("llama_cpp"))[0]
    replay = JudgeSettings(cassette=migrated, mode=RecordMode.REPLAY)
    llama = get_backend("llama_cpp")
    assert replayed_backend_id(replay, llama) == former
    assert replayed_backend_id(dataclasses.replace(replay, mode=RecordMode.AUTO), llama) is None
    assert replayed_backend_id(dataclasses.replace(replay, cassette=CASSETTE), llama) is None
    judge, _spec = open_judge(replay)
    with judge:
        assert judge.identity is not None and judge.identity.backend == former


def test_a_difference_under_another_version_names_the_version_that_wrote_the_run():
    """The decoder /2 cassette was created by an earlier build (its header names 0.2.0): the
    golden lines, written by this version, differ from its replay, and the reader is told which
    version to reproduce with."""
    proc = run_cli(
        "reproduce", str(GOLDEN), "--cassette", str(DECODER_2_CASSETTE), "--data", str(DATA)
    )
    out = proc.stdout.decode()
    assert proc.returncode == 1
    assert f"the cassette was created by offline-scorer 0.2.0 and this is {__version__}" in out
    assert "pip install 'offline-scorer==0.2.0'" in out


def test_a_difference_under_the_same_version_gives_no_version_advice(tmp_path):
    """The fixture cassette was recorded by this version: a tampered line is the file's fault,
    not a version's."""
    _tampered(tmp_path, 2, lambda record: record.update(score=0.125))
    out = _reproduce(tmp_path / "tampered.jsonl").stdout.decode()
    assert "score differs" in out and "created by offline-scorer" not in out


def test_the_version_a_writer_names():
    assert other_version(f"offline-scorer/{__version__} msgpack/1.1.0") is None
    assert other_version("offline-scorer/0.2.0 msgpack/1.1.0") == "0.2.0"
    assert other_version("tests") is None  # a writer that names no version
    assert other_version("offline-scorer/dev msgpack/1.1.0") is None  # no release to install
