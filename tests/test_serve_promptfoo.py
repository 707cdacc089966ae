"""promptfoo's own `llm-rubric` and `factuality` assertions (npm promptfoo, run by node 22)
graded by `serve` on the small judge, on two fixture pairs, promptfoo's cache off: every
assertion graded (no parse failure), every request answered 200 and recorded, and a replay with
the model runtime import-blocked giving promptfoo byte-identical passes, scores and reasons."""

from __future__ import annotations

from pathlib import Path

import pytest

from offline_scorer.cassette.store.file import CassetteFile
from tests.mastra_client import load_fixture_pairs
from tests.promptfoo_client import grading_failures, installed_version, require_promptfoo, run_eval
from tests.request_log import RequestLog
from tests.serve_process import serving

PAIRS = ("01-harbor-bridge", "03-lamp-recall")  # a faithful summary and a hallucinating one


@pytest.mark.live
def test_promptfoo_rubric_and_factuality_through_serve_record_and_replay_identically(
    tmp_path: Path,
) -> None:
    require_promptfoo()
    assert installed_version() == "0.123.1"
    pairs = load_fixture_pairs(PAIRS)
    cassette = tmp_path / "promptfoo.oscas"
    args = ("--model", "smollm2-135m", "--cassette", str(cassette), "--threads", "2")
    with serving(tmp_path, "--record-mode", "record", *args) as live, RequestLog(live.port) as log:
        first = run_eval(log.base_url, pairs, tmp_path / "record")
    recorded = log.chat_requests()
    with CassetteFile.open(cassette, create=False) as stored:
        # llm-rubric and factuality: one grader call each, no retry
        assert stored.exchange_count == len(recorded) == 2 * len(pairs)
    with (
        serving(tmp_path, "--record-mode", "replay", *args, block_runtime=True) as replay,
        RequestLog(replay.port) as replay_log,
    ):
        second = run_eval(replay_log.base_url, pairs, tmp_path / "replay")
    assert second.lines == first.lines
    assert grading_failures(first.results) == []
    assert sorted(r.body["messages"][-1]["content"] for r in replay_log.chat_requests()) == sorted(
        r.body["messages"][-1]["content"] for r in recorded
    )
    assert {r.status for r in recorded + replay_log.chat_requests()} == {200}
    for result in first.results:
        assert [a["type"] for a in result["assertions"]] == ["llm-rubric", "factuality"]
