"""DeepEval's own SummarizationMetric and FaithfulnessMetric (PyPI deepeval, in its own venv,
tests/clients/deepeval_metrics/.venv) judged by `serve` through DeepEval's LocalModel on the
small judge, on two fixture pairs: every evaluation completes (no JSON or schema failure), every
request is answered 200 and recorded, and a replay with the model runtime import-blocked gives
DeepEval byte-identical scores and reasons."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.mastra_client import load_fixture_pairs
from tests.python_clients import DEEPEVAL_PYTHON, require_python_client, run_deepeval
from tests.serve_roundtrip import record_then_replay

PAIRS = ("01-harbor-bridge", "03-lamp-recall")  # a faithful summary and a hallucinating one


@pytest.mark.live
def test_deepeval_metrics_through_serve_record_and_replay_identically(tmp_path: Path) -> None:
    require_python_client(DEEPEVAL_PYTHON, "DeepEval")
    pairs = load_fixture_pairs(PAIRS)
    trip = record_then_replay(
        tmp_path, "deepeval", lambda url, work: run_deepeval(url, pairs, work)
    )
    first, second, recorded = trip.recording, trip.replay, trip.recorded
    assert trip.exchanges == len({repr(r.body) for r in recorded})  # a repeated body is a hit
    assert second.lines == first.lines  # both metrics' score and reason, per pair
    assert [r.body for r in trip.replayed] == [r.body for r in recorded]
    assert trip.statuses == {200}
    assert first.trailer == {"deepeval": "4.3.1", "network_attempts": []}
    for result, pair in zip(first.results, pairs, strict=True):
        assert result["id"] == pair["id"]
        for metric in ("summarization", "faithfulness"):
            assert 0 <= result[metric]["score"] <= 1
            assert result[metric]["reason"]
