"""Inspect AI's own `model_graded_qa` (PyPI inspect-ai, in its own venv) graded by `serve` on the
small judge, on two fixture pairs: every sample scored (no "grade not found"), every request
answered 200 and recorded, and a replay with the model runtime import-blocked giving Inspect
byte-identical scores and explanations."""

from __future__ import annotations

from pathlib import Path

import pytest

from offline_scorer.cassette.store.file import CassetteFile
from tests.mastra_client import load_fixture_pairs
from tests.python_clients import INSPECT_PYTHON, require_python_client, run_inspect
from tests.request_log import RequestLog
from tests.serve_process import serving

PAIRS = ("01-harbor-bridge", "03-lamp-recall")  # a faithful summary and a hallucinating one


@pytest.mark.live
def test_inspect_model_graded_qa_through_serve_records_and_replays_identically(
    tmp_path: Path,
) -> None:
    require_python_client(INSPECT_PYTHON, "Inspect AI")
    pairs = load_fixture_pairs(PAIRS)
    cassette = tmp_path / "inspect.oscas"
    args = ("--model", "smollm2-135m", "--cassette", str(cassette), "--threads", "2")
    with serving(tmp_path, "--record-mode", "record", *args) as live, RequestLog(live.port) as log:
        first = run_inspect(log.base_url, pairs, tmp_path / "record")
    recorded = log.chat_requests()
    with CassetteFile.open(cassette, create=False) as stored:
        assert stored.exchange_count == len(recorded) == len(pairs)  # one grader call a sample
    with (
        serving(tmp_path, "--record-mode", "replay", *args, block_runtime=True) as replay,
        RequestLog(replay.port) as replay_log,
    ):
        second = run_inspect(replay_log.base_url, pairs, tmp_path / "replay")
    assert second.lines == first.lines  # value, explanation and answer of every sample
    assert [r.body for r in replay_log.chat_requests()] == [r.body for r in recorded]
    assert {r.status for r in recorded + replay_log.chat_requests()} == {200}
    assert first.trailer["network_attempts"] == second.trailer["network_attempts"] == []
    assert first.trailer["inspect_ai"] == "0.3.285"
    for result, pair in zip(first.results, pairs, strict=True):
        assert result["id"] == pair["id"]
        assert result["value"] in ("C", "I")
        assert result["answer"] == pair["summary"]
    for sent in recorded:
        fmt = sent.body["response_format"]
        assert fmt["type"] == "json_schema"
        assert list(fmt["json_schema"]["schema"]["properties"]) == ["grade", "reasoning"]
