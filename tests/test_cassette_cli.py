"""`offline-scorer cassette` commands and the pytest plugin."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.conftest import FIXTURES, ROOT, block_imports_code, replay_env
from tests.test_cli import run_cli

FIXTURE_CASSETTE = FIXTURES / "cassettes" / "fixtures.oscas"


def test_show_counts_by_model_and_step():
    proc = run_cli("cassette", "show", str(FIXTURE_CASSETTE))
    out = proc.stdout.decode()
    assert proc.returncode == 0, proc.stderr.decode()
    assert "format:    version 1" in out
    assert "keys:      format 3, backend llguidance-gbnf/" in out
    for step in ("preprocess", "analyze", "reason"):
        assert f"smollm2-135m (b179c9523d0e)  {step:<10} 12" in out


def test_dump_is_json_lines_with_texts_expanded():
    proc = run_cli("cassette", "dump", str(FIXTURE_CASSETTE))
    lines = [json.loads(line) for line in proc.stdout.decode().splitlines()]
    assert len(lines) == 36
    first = lines[0]
    assert list(first) == [  # the column order is part of the output: dumps get diffed
        "key",
        "step",
        "model_sha256",
        "chat_template_sha256",
        "backend",
        "verdict_threshold",
        "sampling",
        "messages",
        "schema",
        "response",
        "verdict_probabilities",
        "meta",
    ]
    assert first["step"] == "preprocess"
    assert "Quillmarsh" in first["messages"][1]["content"]
    schema = first["schema"]  # the request's output schema itself, as JSON
    assert list(schema["properties"]) == ["alignment", "reasons", "questions"]  # answer order
    assert json.loads(first["response"]).keys() == schema["properties"].keys()


def test_dump_of_a_format_2_cassette_shows_its_grammar():
    proc = run_cli("cassette", "dump", str(ROOT / "tests/data/v2-fixtures.oscas"))
    first = json.loads(proc.stdout.decode().splitlines()[0])
    assert "schema" not in first and first["grammar"].startswith("root ::= ")


def test_verify_ok_and_damaged(tmp_path):
    assert run_cli("cassette", "verify", str(FIXTURE_CASSETTE)).returncode == 0
    torn = tmp_path / "torn.oscas"
    torn.write_bytes(FIXTURE_CASSETTE.read_bytes()[:-7])
    proc = run_cli("cassette", "verify", str(torn))
    assert proc.returncode == 6 and "DAMAGED" in proc.stderr.decode()
    proc = run_cli("cassette", "show", str(torn))
    err = proc.stderr.decode()
    assert proc.returncode == 6 and "Traceback" not in err
    assert "offline-scorer cassette repair" in err
    proc = run_cli("cassette", "repair", str(torn))
    assert proc.returncode == 0 and "kept" in proc.stdout.decode()
    assert run_cli("cassette", "verify", str(torn)).returncode == 0


def test_verify_detects_a_record_whose_key_does_not_match(tmp_path):
    """A response edited by hand with a valid frame still fails: keys are recomputed."""
    from offline_scorer.cassette.store.container import CassetteFile

    copy = tmp_path / "edited.oscas"
    with (
        CassetteFile(FIXTURE_CASSETTE, create=False) as src,
        CassetteFile(copy, create=True) as dst,
    ):
        key, payload = next(src.iter_exchanges())
        request = dict(payload["request"])
        request["model_sha256"] = "f" * 64
        for message in request["messages"]:
            dst.append_blob(src.blob_text(message["content"]))
        dst.append_blob(src.blob_text(request["schema"]))
        dst.append_exchange(key, {**payload, "request": request})
    proc = run_cli("cassette", "verify", str(copy))
    assert proc.returncode == 6 and "do not match their keys" in proc.stderr.decode()


def test_merge_skips_known_keys(tmp_path):
    out = tmp_path / "merged.oscas"
    proc = run_cli("cassette", "merge", str(out), str(FIXTURE_CASSETTE), str(FIXTURE_CASSETTE))
    assert proc.returncode == 0
    from offline_scorer.cassette.store.container import CassetteFile

    with CassetteFile(FIXTURE_CASSETTE, create=False) as cas:
        records = [key for key, _ in cas.iter_exchanges()]
    distinct = len(set(records))  # pairs judged alike share their reason exchange
    assert len(records) == 36 and distinct < 36
    skipped = 2 * len(records) - distinct
    assert f"added {distinct} exchange(s), skipped {skipped}" in proc.stdout.decode()


def test_not_a_cassette(tmp_path):
    junk = tmp_path / "junk.oscas"
    junk.write_bytes(b"hello world")
    proc = run_cli("cassette", "show", str(junk))
    assert proc.returncode == 6 and "not a cassette" in proc.stderr.decode()
    proc = run_cli("cassette", "show", str(tmp_path / "missing.oscas"))
    assert proc.returncode == 2 and "no such cassette" in proc.stderr.decode()


@pytest.mark.live
def test_verify_live_reports_byte_identical_exchanges(tmp_path):
    pytest.importorskip("llama_cpp")
    cassette = tmp_path / "one.oscas"
    proc = run_cli(
        "score",
        "--source",
        "fixtures/pairs/11-clinic-move.source.txt",
        "--summary",
        "fixtures/pairs/11-clinic-move.summary.txt",
        "--cassette",
        str(cassette),
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert f"recorded 3 exchange(s) to {cassette}" in proc.stderr.decode()
    proc = run_cli("cassette", "verify", str(cassette), "--live")
    assert proc.returncode == 0, proc.stderr.decode()
    assert "live: 3 of 3 exchanges came back byte-identical" in proc.stdout.decode()


PLUGIN_TEST = """
import pytest

SOURCE = open({source!r}).read()

@pytest.mark.offline_scorer(max_questions=3)
def test_my_summary(summarization_scorer):
    result = summarization_scorer.score_texts(SOURCE, {summary!r})
    assert 0 <= result.score <= 1
"""


@pytest.mark.live
def test_pytest_plugin_records_then_replays(tmp_path):
    pytest.importorskip("llama_cpp")
    project = tmp_path / "userproject"
    project.mkdir()
    source = ROOT / "fixtures" / "pairs" / "11-clinic-move.source.txt"
    summary = (ROOT / "fixtures" / "pairs" / "11-clinic-move.summary.txt").read_text().strip()
    (project / "test_summaries.py").write_text(
        PLUGIN_TEST.format(source=str(source), summary=summary)
    )
    env = {k: v for k, v in os.environ.items() if k != "OFFLINE_SCORER_RECORD_MODE"}

    def pytest_run(*args, extra_env=None, code_prefix=""):
        code = code_prefix + "import pytest, sys\nsys.exit(pytest.main(sys.argv[1:]))\n"
        return subprocess.run(
            [sys.executable, "-c", code, "-q", "-p", "no:cacheprovider", *args],
            cwd=project,
            capture_output=True,
            timeout=600,
            env={**env, **(extra_env or {})},
        )

    replay_first = pytest_run()
    assert replay_first.returncode == 1
    assert "does not exist" in replay_first.stdout.decode()

    recorded = pytest_run("--offline-scorer-record-mode=record")
    assert recorded.returncode == 0, recorded.stdout.decode()[-2000:]
    cassette = project / "cassettes" / "test_summaries" / "test_my_summary.oscas"
    assert cassette.is_file()

    replayed = pytest_run(
        code_prefix=block_imports_code("llama_cpp", "llguidance"), extra_env=replay_env(tmp_path)
    )
    assert replayed.returncode == 0, replayed.stdout.decode()[-2000:]
    shutil.rmtree(project / "cassettes")
