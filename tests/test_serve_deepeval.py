"""DeepEval's own SummarizationMetric and FaithfulnessMetric (PyPI deepeval, in bench/deepeval's
venv) judged by `serve` through DeepEval's LocalModel on the small judge, on two fixture pairs:
every evaluation completes (no JSON or schema failure), every request is answered 200 and
recorded, and a replay with the model runtime import-blocked gives DeepEval byte-identical
scores and reasons."""

from __future__ import annotations

from pathlib import Path

import pytest

from offline_scorer.cassette.store.file import CassetteFile
from tests.mastra_client import load_fixture_pairs
from tests.python_clients import DEEPEVAL_PYTHON, require_python_client, run_deepeval
from tests.request_log import RequestLog
from tests.serve_process import serving

PAIRS = ("01-harbor-bridge", "03-lamp-recall")  # a faithful summary and a hallucinating one


@pytest.mark.live
def test_deepeval_metrics_through_serve_record_and_replay_identically(tmp_path: Path) -> None:
    require_python_client(DEEPEVAL_PYTHON, "DeepEval")
    pairs = load_fixture_pairs(PAIRS)
    cassette = tmp_path / "deepeval.oscas"
    args = ("--model", "smollm2-135m", "--cassette", str(cassette), "--threads", "2")
    with serving(tmp_path, "--record-mode", "record", *args) as live, RequestLog(live.port) as log:
        first = run_deepeval(log.base_url, pairs, tmp_path / "record")
    recorded = log.chat_requests()
    with CassetteFile.open(cassette, create=False) as stored:
        assert stored.exchange_count == len({repr(r.body) for r in recorded})
    with (
        serving(tmp_path, "--record-mode", "replay", *args, block_runtime=True) as replay,
        RequestLog(replay.port) as replay_log,
    ):
        second = run_deepeval(replay_log.base_url, pairs, tmp_path / "replay")
    assert second.lines == first.lines  # both metrics' score and reason, per pair
    assert [r.body for r in replay_log.chat_requests()] == [r.body for r in recorded]
    assert {r.status for r in recorded + replay_log.chat_requests()} == {200}
    assert first.trailer == {"deepeval": "4.3.1", "network_attempts": []}
    for result, pair in zip(first.results, pairs, strict=True):
        assert result["id"] == pair["id"]
        for metric in ("summarization", "faithfulness"):
            assert 0 <= result[metric]["score"] <= 1
            assert result[metric]["reason"]
