"""run_evals and `offline-scorer eval`: item failures, resume, stable results files.

Scoring here is answered by a scripted judge (library tests) or by replaying the committed
fixture cassette (CLI tests), so these tests need no model; the live eval runs in
test_live_fixtures.py.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from offline_scorer import create_summarization_scorer
from offline_scorer.evals import run_evals
from tests.conftest import FIXTURES, ROOT, block_imports_code, replay_env
from tests.helpers import scripted

T, F = True, False


def test_run_evals_in_mastra_shape_with_a_target():
    scorer = create_summarization_scorer(model=scripted([T, F], 2, [T, T]))
    seen = []
    run = run_evals(
        data=[{"id": "a", "input": "Source A."}, {"id": "b", "input": "Source B."}],
        scorers=[scorer],
        target=lambda source: [{"role": "assistant", "content": f"Summary of {source}"}],
        on_item_complete=seen.append,
    )
    assert [item.id for item in run.items] == ["a", "b"] == [item.id for item in seen]
    assert run.scores == {"summarization": 0.5}
    assert run.summary == {"totalItems": 2, "failed": 0}


def test_run_evals_records_failures_and_goes_on():
    scorer = create_summarization_scorer(model=scripted([T], 1, [T]))

    def target(source):
        if source == "boom":
            raise RuntimeError("summarizer crashed")
        return "A summary."

    run = run_evals(data=[{"input": "boom"}, {"input": "fine"}, 42,
                          {"id": "x", "source": 1, "summary": "s"}],
                    scorers=[scorer], target=target)
    assert [item.ok for item in run.items] == [False, True, False, False]
    assert "target raised: summarizer crashed" in run.items[0].error.message
    assert "expected an object" in run.items[2].error.message
    assert "'source' must be a string" in run.items[3].error.message
    assert run.summary == {"totalItems": 4, "failed": 3}
    stopped = run_evals(data=[{"input": "boom"}, {"input": "fine"}], scorers=[scorer],
                        target=target, fail_fast=True)
    assert len(stopped.items) == 1


def test_run_evals_with_outputs_already_in_the_data():
    scorer = create_summarization_scorer(model=scripted([T], 1, [T]))
    run = run_evals(data=[{"id": "1", "source": "S.", "summary": "Sum."}], scorers=[scorer])
    assert run.items[0].ok and run.items[0].results["summarization"].score == 1
    line = json.loads(run.items[0].to_line())
    assert list(line) == ["id", "line", "digest", "status", "score", "alignment", "coverage",
                          "limiting_axis", "result", "error"]


def eval_cli(*args, env, cwd=ROOT):
    code = block_imports_code("llama_cpp", "llguidance") + (
        "from offline_scorer.cli import main\n"
        "sys.argv = ['offline-scorer'] + sys.argv[1:]\n"
        "main()\n"
    )
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, env=env,
                          cwd=cwd, timeout=300)


REPLAY = ["--record-mode", "replay", "--cassette", str(FIXTURES / "cassettes" / "fixtures.oscas")]


def test_eval_replays_the_fixture_dataset_to_the_golden_results(tmp_path):
    out = tmp_path / "results.jsonl"
    proc = eval_cli("eval", str(FIXTURES / "pairs.jsonl"), "--out", str(out), *REPLAY,
                    env=replay_env(tmp_path))
    assert proc.returncode == 0, proc.stderr.decode()
    assert out.read_bytes() == (FIXTURES / "golden" / "results.jsonl").read_bytes()
    assert "items        12 (12 ok, 0 failed)" in proc.stdout.decode()


def test_malformed_rows_are_reported_with_line_numbers_and_the_run_goes_on(tmp_path):
    pairs = (FIXTURES / "pairs.jsonl").read_bytes().splitlines()
    data = tmp_path / "mixed.jsonl"
    data.write_bytes(b"\n".join([
        pairs[0],
        b"{not json",
        b'{"id": "t", "source": 3, "summary": "x"}',
        b'{"id": "m", "source": "only a source"}',
        b'"a string"',
        b'{"id": "u", "source": "caf\xe9", "summary": "x"}',
        pairs[1],
    ]) + b"\n")
    out = tmp_path / "results.jsonl"
    proc = eval_cli("eval", str(data), "--out", str(out), "--json", *REPLAY,
                    env=replay_env(tmp_path))
    assert proc.returncode == 1, proc.stderr.decode()  # some items failed
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["status"] for line in lines] == ["ok", "error", "error", "error", "error",
                                                  "error", "ok"]
    messages = [line["error"]["message"] for line in lines if line["error"]]
    assert messages[0].startswith("line 2: not valid JSON")
    assert messages[1] == "line 3: 'source' must be a string"
    assert messages[2] == "line 4: missing field 'summary'"
    assert messages[3] == "line 5: expected a JSON object, got str"
    assert messages[4].startswith("line 6: not valid UTF-8")
    agg = json.loads(proc.stdout)
    assert agg["count"] == 7 and agg["failed"] == 5


def test_csv_dataset(tmp_path):
    pairs = [json.loads(line) for line in (FIXTURES / "pairs.jsonl").read_text().splitlines()]
    import csv

    data = tmp_path / "pairs.csv"
    with data.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "source", "summary"])
        for pair in pairs[:3]:
            writer.writerow([pair["id"], pair["source"], pair["summary"]])
        writer.writerow(["short-row", "only source"])
    out = tmp_path / "results.jsonl"
    proc = eval_cli("eval", str(data), "--out", str(out), *REPLAY, env=replay_env(tmp_path))
    assert proc.returncode == 1
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    golden = (FIXTURES / "golden" / "results.jsonl").read_text().splitlines()
    assert [line["result"] for line in lines[:3]] == [json.loads(g)["result"] for g in golden[:3]]
    # physical line where the row starts: pair 01's source spans three lines
    assert lines[3]["error"]["message"] == "line 7: wrong number of columns"


def test_existing_results_need_resume_or_overwrite(tmp_path):
    out = tmp_path / "results.jsonl"
    out.write_text("precious\n")
    proc = eval_cli("eval", str(FIXTURES / "pairs.jsonl"), "--out", str(out), *REPLAY,
                    env=replay_env(tmp_path))
    assert proc.returncode == 2 and "pass --resume" in proc.stderr.decode()
    assert out.read_text() == "precious\n"
    proc = eval_cli("eval", str(FIXTURES / "pairs.jsonl"), "--out", str(out), "--resume",
                    *REPLAY, env=replay_env(tmp_path))
    assert proc.returncode == 2 and "line 1 is not a results line" in proc.stderr.decode()
    assert out.read_text() == "precious\n"


def test_resume_after_a_torn_tail_finishes_with_the_same_bytes(tmp_path):
    golden = (FIXTURES / "golden" / "results.jsonl").read_bytes()
    out = tmp_path / "results.jsonl"
    cut = golden.index(b"\n", len(golden) // 2) + 40  # five-ish whole lines and a torn one
    out.write_bytes(golden[:cut])
    proc = eval_cli("eval", str(FIXTURES / "pairs.jsonl"), "--out", str(out), "--resume",
                    *REPLAY, env=replay_env(tmp_path))
    assert proc.returncode == 0, proc.stderr.decode()
    assert out.read_bytes() == golden


def test_resume_refuses_results_of_other_data(tmp_path):
    golden = (FIXTURES / "golden" / "results.jsonl").read_bytes()
    out = tmp_path / "results.jsonl"
    out.write_bytes(golden)
    proc = eval_cli("eval", str(FIXTURES / "pairs.jsonl"), "--out", str(out), "--resume",
                    "--max-questions", "5", *REPLAY, env=replay_env(tmp_path))
    assert proc.returncode == 2 and "does not match item 1" in proc.stderr.decode()
    assert out.read_bytes() == golden
    shutil.rmtree(tmp_path, ignore_errors=True)


def test_missing_dataset_and_unknown_type(tmp_path):
    proc = eval_cli("eval", str(tmp_path / "none.jsonl"), *REPLAY, env=replay_env(tmp_path))
    assert proc.returncode == 2 and "no such dataset" in proc.stderr.decode()
    other = tmp_path / "data.txt"
    other.write_text("x")
    proc = eval_cli("eval", str(other), *REPLAY, env=replay_env(tmp_path))
    assert proc.returncode == 2 and "use .jsonl or .csv" in proc.stderr.decode()


@pytest.mark.parametrize("flag", ["--quiet", None])
def test_no_progress_bar_when_not_a_terminal(tmp_path, flag):
    out = tmp_path / "results.jsonl"
    args = ["eval", str(FIXTURES / "pairs.jsonl"), "--out", str(out), *REPLAY]
    proc = eval_cli(*(args + ([flag] if flag else [])), env=replay_env(tmp_path))
    assert proc.returncode == 0
    assert "scoring" not in proc.stderr.decode() and "it/s" not in proc.stderr.decode()


@pytest.mark.live
def test_killing_a_live_run_and_resuming_gives_the_uninterrupted_bytes(tmp_path):
    """Item 1 replays from a copy of the fixture cassette; items 2-3 are judged live. The run is
    SIGKILLed while item 2 is being judged, resumed, then compared with a clean replay."""
    import os
    import signal
    import time

    pytest.importorskip("llama_cpp")
    pairs = [json.loads(line) for line in (FIXTURES / "pairs.jsonl").read_text().splitlines()]
    fresh = [dict(pair, summary=pair["summary"] + " It was announced on a Monday.")
             for pair in (pairs[10], pairs[1])]  # not in the cassette: judged live
    data = tmp_path / "three.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in [pairs[0], *fresh]))
    cassette = tmp_path / "c.oscas"
    shutil.copyfile(FIXTURES / "cassettes" / "fixtures.oscas", cassette)
    out = tmp_path / "results.jsonl"
    args = [sys.executable, "-m", "offline_scorer", "eval", str(data), "--out", str(out),
            "--cassette", str(cassette), "--record-mode", "auto", "--quiet"]
    child = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and child.poll() is None:
        if out.exists() and out.read_bytes().count(b"\n") >= 1:
            time.sleep(2)  # now inside item 2's live model calls
            break
        time.sleep(0.05)
    assert child.poll() is None, "the run ended before it could be interrupted"
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert out.read_bytes().count(b"\n") == 1
    resumed = subprocess.run([*args, "--resume"], capture_output=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr.decode()
    clean = tmp_path / "clean.jsonl"
    replay = subprocess.run(
        [sys.executable, "-m", "offline_scorer", "eval", str(data), "--out", str(clean),
         "--cassette", str(cassette), "--record-mode", "replay", "--quiet"],
        capture_output=True, timeout=300)
    assert replay.returncode == 0, replay.stderr.decode()
    assert out.read_bytes() == clean.read_bytes()
    golden = (FIXTURES / "golden" / "results.jsonl").read_text().splitlines()
    assert out.read_text().splitlines()[0] == golden[0]
    assert len(out.read_text().splitlines()) == 3
