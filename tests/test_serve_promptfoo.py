"""promptfoo's own `llm-rubric` and `factuality` assertions (npm promptfoo, run by node 22)
graded by `serve` on the small judge, on two fixture pairs, promptfoo's cache off: every
assertion graded (no parse failure), every request answered 200 and recorded, and a replay with
the model runtime import-blocked giving promptfoo byte-identical passes, scores and reasons."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.mastra_client import load_fixture_pairs
from tests.promptfoo_client import grading_failures, installed_version, require_promptfoo, run_eval
from tests.serve_roundtrip import record_then_replay

PAIRS = ("01-harbor-bridge", "03-lamp-recall")  # a faithful summary and a hallucinating one


@pytest.mark.live
def test_promptfoo_rubric_and_factuality_through_serve_record_and_replay_identically(
    tmp_path: Path,
) -> None:
    require_promptfoo()
    assert installed_version() == "0.123.1"
    pairs = load_fixture_pairs(PAIRS)
    trip = record_then_replay(tmp_path, "promptfoo", lambda url, work: run_eval(url, pairs, work))
    first, second, recorded = trip.recording, trip.replay, trip.recorded
    # llm-rubric and factuality: one grader call each, no retry
    assert trip.exchanges == len(recorded) == 2 * len(pairs)
    assert second.lines == first.lines
    assert grading_failures(first.results) == []
    assert sorted(r.body["messages"][-1]["content"] for r in trip.replayed) == sorted(
        r.body["messages"][-1]["content"] for r in recorded
    )
    assert trip.statuses == {200}
    for result in first.results:
        assert [a["type"] for a in result["assertions"]] == ["llm-rubric", "factuality"]
