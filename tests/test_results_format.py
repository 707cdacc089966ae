"""Results file format 3: a header with the run's recipe, then lines of one model, the scorer
kind named, axes nested, a digest over the whole judge identity; format 1 files still read by
`report`, and `--resume` after a threshold change scoring the affected lines again."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from offline_scorer.assembly.open import pinned_identity
from offline_scorer.batch.executors import SerialExecutor
from offline_scorer.batch.job import EvalJob, run_job
from offline_scorer.batch.results import LineProblem, ResultsHeader, ResultsLine, parse_line
from offline_scorer.batch.run import item_context
from offline_scorer.cassette.judge import CassetteJudge, RecordMode
from offline_scorer.errors import InputError
from offline_scorer.models.registry import load_registry
from offline_scorer.report import aggregate, read_results
from offline_scorer.scorers.summarization.options import ScorerOptions
from offline_scorer.scorers.summarization.scorer import SummarizationScorer
from tests.helpers import scripted
from tests.test_cli import assert_clean_error, run_cli

GOLDEN = "fixtures/golden/results.jsonl"


def _golden() -> list[dict]:
    """The golden file's item lines (its header left out)."""
    lines = Path(GOLDEN).read_text(encoding="utf-8").splitlines()
    assert "recipe" in json.loads(lines[0])
    return [json.loads(line) for line in lines[1:]]


def _first() -> dict:
    return _golden()[0]


def _resume_replay(data, out):
    """`eval DATA --out OUT --resume`, replaying the fixture cassette."""
    cassette = "fixtures/cassettes/fixtures.oscas"
    return run_cli(
        "eval",
        str(data),
        "--out",
        str(out),
        "--resume",
        "--record-mode",
        "replay",
        "--cassette",
        cassette,
    )


def _v1(record: dict) -> dict:
    """A format 2 line as offline-scorer 0.2 wrote it (format 1)."""
    old = {k: record[k] for k in ("id", "line", "digest", "status", "score")}
    old.update(record["axes"])
    old.update({k: record[k] for k in ("limiting_axis", "result", "error", "metadata")})
    return old


def test_a_results_line_names_its_kind_and_nests_its_axes():
    first = _first()
    assert list(first)[:2] == ["format", "scorer"]
    assert first["format"] == 3 and first["scorer"] == "summarization"
    assert set(first["axes"]) == {"alignment", "coverage"}
    line = parse_line(first)
    assert line.to_line() == json.dumps(first, ensure_ascii=False, separators=(",", ":"))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"status": "maybe"}, "'status'"),
        ({"limiting_axis": "fluency"}, "must be one of alignment, coverage, both, none"),
        ({"score": -1}, "'score' of an ok item must be a number >= 0"),
        ({"error": {"type": "E", "message": "m"}}, 'an ok item must have "error": null'),
        ({"extra": 1}, "unknown key 'extra'"),
        ({"format": 4}, "results line format 4 is not one this version reads"),
    ],
)
def test_a_bad_line_is_named(change, message):
    record = {**_first(), **change}
    with pytest.raises(LineProblem, match=message):
        parse_line(record)


def test_a_format_1_file_is_still_reported(tmp_path):
    lines = _golden()
    old = tmp_path / "old.jsonl"
    old.write_text("".join(json.dumps(_v1(r)) + "\n" for r in lines), encoding="utf-8")
    assert read_results(old) == read_results(GOLDEN)
    assert aggregate(read_results(old)) == aggregate(read_results(GOLDEN))
    proc = run_cli("report", str(old), "--no-html")
    assert proc.returncode == 0, proc.stderr.decode()


def test_resume_refuses_a_format_1_file_with_what_to_do(tmp_path):
    lines = _golden()
    out = tmp_path / "old.jsonl"
    out.write_text("".join(json.dumps(_v1(r)) + "\n" for r in lines[:3]), encoding="utf-8")
    before = out.read_bytes()
    proc = _resume_replay("fixtures/pairs.jsonl", out)
    assert_clean_error(proc, 2, "results format 1", "--overwrite")
    assert out.read_bytes() == before


def _scorer(tmp_path, threshold: float) -> SummarizationScorer:
    """A scripted judge behind a recorder whose identity carries `threshold`."""
    identity = pinned_identity(load_registry().resolve("default"))
    assert identity is not None
    judge = CassetteJudge(
        tmp_path / f"t{threshold}.oscas",
        mode=RecordMode.RECORD,
        identity=dataclasses.replace(identity, verdict_threshold=threshold),
        live=scripted([True, threshold < 0.6], 2, [True, True]),
    )
    return SummarizationScorer(judge, ScorerOptions())


def test_resume_after_a_threshold_change_scores_the_affected_lines_again(tmp_path):
    data = tmp_path / "data.jsonl"
    rows = [{"id": f"r{i}", "source": "A. B.", "summary": f"S {i}."} for i in range(4)]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    out = tmp_path / "results.jsonl"

    # one header for both runs: the digests alone must tell the lines apart
    header = ResultsHeader(recipe={"scorer": "summarization"}).to_line()
    old = _scorer(tmp_path, 0.5)
    run_job(EvalJob(data, out), old, SerialExecutor(old), 4, header)
    under_old = out.read_bytes().splitlines()
    assert under_old[0] == header.encode()
    assert all(json.loads(line)["axes"]["alignment"] == 1 for line in under_old[1:])

    new = _scorer(tmp_path, 0.7)
    assert item_context([new]) != item_context([old])  # the threshold is in the digest
    out.write_bytes(b"".join(line + b"\n" for line in under_old[:3]))  # an interrupted run
    outcome = run_job(EvalJob(data, out, resume=True), new, SerialExecutor(new), 4, header)
    assert (outcome.kept, outcome.rescored, outcome.written) == (0, 2, 4)
    lines = [json.loads(line) for line in out.read_bytes().splitlines()[1:]]
    assert [line["id"] for line in lines] == ["r0", "r1", "r2", "r3"]
    assert all(line["axes"]["alignment"] == 0.5 for line in lines)  # scored under 0.7

    fresh = tmp_path / "fresh.jsonl"
    run_job(EvalJob(data, fresh), new, SerialExecutor(new), 4, header)
    assert out.read_bytes() == fresh.read_bytes()


def test_resume_under_another_recipe_scores_every_line_again(tmp_path):
    data = tmp_path / "data.jsonl"
    rows = [{"id": f"r{i}", "source": "A. B.", "summary": f"S {i}."} for i in range(3)]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    out = tmp_path / "results.jsonl"
    scorer = _scorer(tmp_path, 0.5)
    first = ResultsHeader(recipe={"scorer": "summarization", "model": "a"}).to_line()
    run_job(EvalJob(data, out), scorer, SerialExecutor(scorer), 3, first)
    second = ResultsHeader(recipe={"scorer": "summarization", "model": "b"}).to_line()
    outcome = run_job(EvalJob(data, out, resume=True), scorer, SerialExecutor(scorer), 3, second)
    assert (outcome.kept, outcome.rescored, outcome.written) == (0, 3, 3)
    assert out.read_bytes().splitlines()[0] == second.encode()


def test_resume_refuses_results_of_other_data(tmp_path):
    golden = Path(GOLDEN).read_bytes()
    out = tmp_path / "results.jsonl"
    out.write_bytes(golden)
    rows = [json.loads(line) for line in Path("fixtures/pairs.jsonl").read_text().splitlines()]
    rows[0]["id"] = "someone-else"
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    proc = _resume_replay(data, out)
    assert_clean_error(proc, 2, "does not match item 1")
    assert out.read_bytes() == golden


def test_a_results_line_model_refuses_an_axis_named_like_a_tie():
    with pytest.raises(ValueError, match="cannot be called 'both'"):
        ResultsLine(
            scorer="x",
            id="a",
            line=1,
            digest="d",
            status="error",
            axes={"both": None},
            error={"type": "E", "message": "m"},
        )


def test_report_refuses_an_unknown_kind_in_one_line(tmp_path):
    record = _first()
    record["scorer"] = "no-such-kind"
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="unknown scorer kind 'no-such-kind'"):
        read_results(path)
