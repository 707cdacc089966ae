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
from offline_scorer.batch.datasets import DataItem, load_dataset
from offline_scorer.batch.resume import with_metadata
from offline_scorer.batch.run import run_evals
from offline_scorer.jsontext import line as dump_line
from tests.conftest import FIXTURES, ROOT, block_imports_code, replay_env
from tests.helpers import recorded_flags, scripted

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

    run = run_evals(
        data=[{"input": "boom"}, {"input": "fine"}, 42, {"id": "x", "source": 1, "summary": "s"}],
        scorers=[scorer],
        target=target,
    )
    assert [item.ok for item in run.items] == [False, True, False, False]
    assert "target raised: summarizer crashed" in run.items[0].error.message
    assert "expected an object" in run.items[2].error.message
    assert "'source' must be a string" in run.items[3].error.message
    assert run.summary == {"totalItems": 4, "failed": 3}
    stopped = run_evals(
        data=[{"input": "boom"}, {"input": "fine"}], scorers=[scorer], target=target, fail_fast=True
    )
    assert len(stopped.items) == 1


def test_run_evals_with_outputs_already_in_the_data():
    scorer = create_summarization_scorer(model=scripted([T], 1, [T]))
    run = run_evals(data=[{"id": "1", "source": "S.", "summary": "Sum."}], scorers=[scorer])
    assert run.items[0].ok and run.items[0].results["summarization"].score == 1
    line = json.loads(run.items[0].to_line())
    assert list(line) == [
        "format",
        "scorer",
        "id",
        "line",
        "digest",
        "status",
        "score",
        "axes",
        "limiting_axis",
        "result",
        "error",
        "metadata",
    ]
    assert list(line["axes"]) == ["alignment", "coverage"]
    assert line["metadata"] == {}


def test_extra_fields_travel_as_metadata_and_leave_the_digest_alone():
    scorer = create_summarization_scorer(model=scripted([T], 1, [T]))
    plain = {"id": "1", "source": "S.", "summary": "Sum."}
    labelled = {
        "id": "1",
        "source": "S.",
        "faithful": False,
        "summary": "Sum.",
        "domain": "samsum",
        "notes": {"by": "ann", "scores": [1, 2.5]},
    }
    mastra = {"id": "1", "input": "S.", "output": "Sum.", "groundTruth": "g"}
    run = run_evals(data=[plain, labelled, mastra], scorers=[scorer])
    lines = [json.loads(item.to_line()) for item in run.items]
    assert [line["metadata"] for line in lines] == [
        {},
        {"faithful": False, "domain": "samsum", "notes": {"by": "ann", "scores": [1, 2.5]}},
        {"groundTruth": "g"},
    ]
    assert list(lines[1]["metadata"]) == ["faithful", "domain", "notes"]  # row order
    assert lines[0]["digest"] == lines[1]["digest"] == lines[2]["digest"]
    assert (
        run.items[1]
        .to_line()
        .endswith(
            ',"error":null,"metadata":{"faithful":false,"domain":"samsum",'
            '"notes":{"by":"ann","scores":[1,2.5]}}}'
        )
    )


def test_a_metadata_object_is_merged_and_top_level_keys_win():
    from offline_scorer.batch.datasets import item_from_mapping

    row = {
        "id": "a",
        "source": "S.",
        "summary": "T.",
        "split": "dev",
        "metadata": {"faithful": True, "rater": "x", "split": "test"},
        "faithful": False,
    }
    assert item_from_mapping(row, 1, "a").metadata == {
        "split": "dev",
        "faithful": False,
        "rater": "x",
    }
    assert list(item_from_mapping(row, 1, "a").metadata) == ["split", "faithful", "rater"]
    kept = item_from_mapping({"id": "a", "source": "S.", "summary": "T.", "metadata": 3}, 1, "a")
    assert kept.metadata == {"metadata": 3}


@pytest.mark.parametrize(
    "row, message",
    [
        ({"id": "a", "source": "S.", "summary": "T.", "input": "I."}, "not both"),
        ({"id": "a", "source": "S.", "summary": "T.", "score": float("nan")}, "'score' holds nan"),
    ],
)
def test_rows_that_cannot_be_carried_are_refused(row, message):
    from offline_scorer.batch.datasets import item_from_mapping
    from offline_scorer.errors import InputError

    with pytest.raises(InputError, match=message):
        item_from_mapping(row, 1, "a")


def test_jsonl_and_csv_rows_keep_their_extra_fields(tmp_path):
    data = tmp_path / "labelled.jsonl"
    data.write_text(
        '{"id": "x", "source": "S.", "summary": "T.", "faithful": true, '
        '"domain": "samsum"}\n{"id": "y", "source": "S.", "summary": "T.", '
        '"faithful": NaN}\n',
        encoding="utf-8",
    )
    first, second = load_dataset(data)
    assert first.metadata == {"faithful": True, "domain": "samsum"}
    assert second.message == "line 2: field 'faithful' holds nan, which JSON cannot carry"
    table = tmp_path / "labelled.csv"
    table.write_text("id,faithful,source,summary,human_score\nx,true,S.,T.,3.5\n", encoding="utf-8")
    (row,) = load_dataset(table)
    assert row.metadata == {"faithful": "true", "human_score": "3.5"}  # strings, as in the CSV


def test_the_shared_dev_set_loads_without_errors():
    path = ROOT.parent / "shared" / "data" / "judge-dev.jsonl"
    if not path.exists():
        pytest.skip("the shared labelled dev set is not here")
    items = load_dataset(path)
    assert len(items) == 200
    assert all(isinstance(item, DataItem) for item in items)
    assert sum(1 for item in items if item.metadata["faithful"] is True) == 100
    assert {item.metadata["domain"] for item in items} >= {"samsum"}


def eval_cli(*args, env, cwd=ROOT):
    code = block_imports_code("llama_cpp", "llguidance") + (
        "from offline_scorer.cli import main\n"
        "sys.argv = ['offline-scorer'] + sys.argv[1:]\n"
        "main()\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, env=env, cwd=cwd, timeout=300
    )


REPLAY = ["--record-mode", "replay", "--cassette", str(FIXTURES / "cassettes" / "fixtures.oscas")]


def golden_lines() -> list[bytes]:
    """The golden results lines, each with its pair's extra fields ("kind") as metadata.

    Golden files recorded before results lines carried metadata lack the key; adding it is
    all that differs, and on files recorded since, it changes nothing.
    """
    pairs = [json.loads(line) for line in (FIXTURES / "pairs.jsonl").read_text().splitlines()]
    header, *golden = (FIXTURES / "golden" / "results.jsonl").read_text("utf-8").splitlines()
    return [header.encode()] + [
        dump_line(with_metadata(json.loads(line), {"kind": pair["kind"]})).encode()
        for line, pair in zip(golden, pairs, strict=True)
    ]


def test_eval_replays_the_fixture_dataset_to_the_golden_results(tmp_path):
    out = tmp_path / "results.jsonl"
    proc = eval_cli(
        "eval", str(FIXTURES / "pairs.jsonl"), "--out", str(out), *REPLAY, env=replay_env(tmp_path)
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert out.read_bytes().splitlines() == golden_lines()
    assert "items        12 (12 ok, 0 failed)" in proc.stdout.decode()


def test_malformed_rows_are_reported_with_line_numbers_and_the_run_goes_on(tmp_path):
    pairs = (FIXTURES / "pairs.jsonl").read_bytes().splitlines()
    data = tmp_path / "mixed.jsonl"
    data.write_bytes(
        b"\n".join(
            [
                pairs[0],
                b"{not json",
                b'{"id": "t", "source": 3, "summary": "x"}',
                b'{"id": "m", "source": "only a source"}',
                b'"a string"',
                b'{"id": "u", "source": "caf\xe9", "summary": "x"}',
                pairs[1],
            ]
        )
        + b"\n"
    )
    out = tmp_path / "results.jsonl"
    proc = eval_cli(
        "eval", str(data), "--out", str(out), "--json", *REPLAY, env=replay_env(tmp_path)
    )
    assert proc.returncode == 1, proc.stderr.decode()  # some items failed
    lines = [json.loads(line) for line in out.read_text().splitlines()[1:]]
    assert [line["status"] for line in lines] == [
        "ok",
        "error",
        "error",
        "error",
        "error",
        "error",
        "ok",
    ]
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
    lines = [json.loads(line) for line in out.read_text().splitlines()[1:]]
    golden = (FIXTURES / "golden" / "results.jsonl").read_text().splitlines()[1:]
    assert [line["result"] for line in lines[:3]] == [json.loads(g)["result"] for g in golden[:3]]
    # physical line where the row starts: pair 01's source spans three lines
    assert lines[3]["error"]["message"] == "line 7: wrong number of columns"


def test_existing_results_need_resume_or_overwrite(tmp_path):
    out = tmp_path / "results.jsonl"
    out.write_text("precious\n")
    proc = eval_cli(
        "eval", str(FIXTURES / "pairs.jsonl"), "--out", str(out), *REPLAY, env=replay_env(tmp_path)
    )
    assert proc.returncode == 2 and "pass --resume" in proc.stderr.decode()
    assert out.read_text() == "precious\n"
    proc = eval_cli(
        "eval",
        str(FIXTURES / "pairs.jsonl"),
        "--out",
        str(out),
        "--resume",
        *REPLAY,
        env=replay_env(tmp_path),
    )
    assert proc.returncode == 2 and "line 1 is not a results header" in proc.stderr.decode()
    assert out.read_text() == "precious\n"


def test_resume_after_a_torn_tail_finishes_with_the_same_bytes(tmp_path):
    golden = b"".join(line + b"\n" for line in golden_lines())
    out = tmp_path / "results.jsonl"
    cut = golden.index(b"\n", len(golden) // 2) + 40  # five-ish whole lines and a torn one
    out.write_bytes(golden[:cut])
    proc = eval_cli(
        "eval",
        str(FIXTURES / "pairs.jsonl"),
        "--out",
        str(out),
        "--resume",
        *REPLAY,
        env=replay_env(tmp_path),
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert out.read_bytes() == golden


def test_resume_brings_lines_without_metadata_and_edited_labels_up_to_date(tmp_path):
    """Results written before lines carried metadata (no "metadata" key) still resume, and
    the finished file is what an uninterrupted run on the current data writes."""
    golden = golden_lines()
    old = [json.loads(line) for line in golden[1:4]]
    for record in old:
        del record["metadata"]
    out = tmp_path / "results.jsonl"
    kept = [golden[0].decode(), *(dump_line(record) for record in old)]
    out.write_text("".join(line + "\n" for line in kept), encoding="utf-8")
    proc = eval_cli(
        "eval",
        str(FIXTURES / "pairs.jsonl"),
        "--out",
        str(out),
        "--resume",
        *REPLAY,
        env=replay_env(tmp_path),
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert out.read_bytes() == b"".join(line + b"\n" for line in golden)
    assert not list(tmp_path.glob(".results.jsonl.*"))  # no temporary file left behind

    pairs = (FIXTURES / "pairs.jsonl").read_text().splitlines()
    relabelled = [json.loads(line) for line in pairs]
    relabelled[0]["kind"] = "checked by hand"
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in relabelled), encoding="utf-8")
    out.write_bytes(b"".join(line + b"\n" for line in golden[:4]))
    proc = eval_cli(
        "eval", str(data), "--out", str(out), "--resume", *REPLAY, env=replay_env(tmp_path)
    )
    assert proc.returncode == 0, proc.stderr.decode()
    lines = out.read_bytes().splitlines()
    assert lines[0] == golden[0]
    assert json.loads(lines[1])["metadata"] == {"kind": "checked by hand"}
    assert lines[2:] == golden[2:]


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
    fresh = [
        dict(pair, summary=pair["summary"] + " It was announced on a Monday.")
        for pair in (pairs[10], pairs[1])
    ]  # not in the cassette: judged live
    data = tmp_path / "three.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in [pairs[0], *fresh]))
    cassette = tmp_path / "c.oscas"
    shutil.copyfile(FIXTURES / "cassettes" / "fixtures.oscas", cassette)
    out = tmp_path / "results.jsonl"
    args = [
        sys.executable,
        "-m",
        "offline_scorer",
        "eval",
        str(data),
        "--out",
        str(out),
        "--cassette",
        str(cassette),
        "--record-mode",
        "auto",
        "--quiet",
        *recorded_flags(),  # the copied recording's options: one recipe for all its exchanges
    ]
    child = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and child.poll() is None:
        if out.exists() and out.read_bytes().count(b"\n") >= 2:  # the header and item 1
            time.sleep(2)  # now inside item 2's live model calls
            break
        time.sleep(0.05)
    assert child.poll() is None, "the run ended before it could be interrupted"
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert out.read_bytes().count(b"\n") == 2
    resumed = subprocess.run([*args, "--resume"], capture_output=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr.decode()
    clean = tmp_path / "clean.jsonl"
    replay = subprocess.run(
        [
            sys.executable,
            "-m",
            "offline_scorer",
            "eval",
            str(data),
            "--out",
            str(clean),
            "--cassette",
            str(cassette),
            "--record-mode",
            "replay",
            "--quiet",
        ],
        capture_output=True,
        timeout=300,
    )
    assert replay.returncode == 0, replay.stderr.decode()
    assert out.read_bytes() == clean.read_bytes()
    assert out.read_bytes().splitlines()[:2] == golden_lines()[:2]
    assert len(out.read_text().splitlines()) == 4
