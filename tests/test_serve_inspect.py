"""Inspect AI's own `model_graded_qa` (PyPI inspect-ai, in its own venv) graded by `serve` on the
small judge, on two fixture pairs: every sample scored (no "grade not found"), every request
answered 200 and recorded, and a replay with the model runtime import-blocked giving Inspect
byte-identical scores and explanations."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.mastra_client import load_fixture_pairs
from tests.python_clients import INSPECT_PYTHON, require_python_client, run_inspect
from tests.serve_roundtrip import record_then_replay

PAIRS = ("01-harbor-bridge", "03-lamp-recall")  # a faithful summary and a hallucinating one


@pytest.mark.live
def test_inspect_model_graded_qa_through_serve_records_and_replays_identically(
    tmp_path: Path,
) -> None:
    require_python_client(INSPECT_PYTHON, "Inspect AI")
    pairs = load_fixture_pairs(PAIRS)
    trip = record_then_replay(tmp_path, "inspect", lambda url, work: run_inspect(url, pairs, work))
    first, second, recorded = trip.recording, trip.replay, trip.recorded
    assert trip.exchanges == len(recorded) == len(pairs)  # one grader call a sample
    assert second.lines == first.lines  # value, explanation and answer of every sample
    assert [r.body for r in trip.replayed] == [r.body for r in recorded]
    assert trip.statuses == {200}
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
