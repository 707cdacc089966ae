"""Verdict probabilities: carried from the judge into the result, through cassettes, and absent
without harm when a judge gives none. A scripted judge stands in for the model here; the live
decoder's probabilities are tested in test_live_grounding.py."""

from __future__ import annotations

import json
import shutil

import pytest

from offline_scorer import CassetteMissError, GenerationError
from offline_scorer.cassette.judge import CassetteJudge, RecordMode
from offline_scorer.judging.protocol import JudgeIdentity
from offline_scorer.scorers.summarization.options import ScorerOptions
from offline_scorer.scorers.summarization.scorer import SummarizationScorer
from offline_scorer.testing import ScriptedJudge
from tests.conftest import ROOT
from tests.helpers import SOURCE, SUMMARY

IDENTITY = JudgeIdentity("a" * 64, "b" * 64, "test-backend/1", 0.62)


def judge(probabilities=None, coverage=2):
    return ScriptedJudge(
        alignment=[
            {"claim": "c0", "supported": True, "reason": "r"},
            {"claim": "c1", "supported": False, "reason": "r"},
        ],
        questions=["q0?", "q1?", "q2?"],
        coverage=[{"question": f"q{i}?", "answered": True, "reason": "r"} for i in range(coverage)],
        reason="Scripted.",
        probabilities=probabilities,
        threshold=0.62,
    )


def score(j, **options):
    return SummarizationScorer(j, ScorerOptions(**options)).score_texts(SOURCE, SUMMARY)


def test_probabilities_sit_beside_the_verdicts_they_belong_to():
    result = score(judge({"preprocess": [0.91234567, 0.1], "analyze": [0.7, 0.8]}))
    data = json.loads(result.to_json())
    assert data["verdictProbabilities"] == {
        "threshold": 0.62,
        "alignment": [0.9123, 0.1],
        "coverage": [0.7, 0.8, None],
    }
    # Mastra's fields are untouched by the addition
    assert list(data["preprocessStepResult"]["alignment"][0]) == ["claim", "supported", "reason"]
    assert result.verdict_probabilities.min_supported == 0.1
    assert json.loads(result.to_json()) == result.to_dict()


def test_a_judge_without_probabilities_gives_null_and_the_same_score():
    with_p = score(judge({"preprocess": [0.9, 0.1], "analyze": [0.7, 0.8]}))
    without = score(judge())
    assert json.loads(without.to_json())["verdictProbabilities"] is None
    assert without.score == with_p.score and without.reason == with_p.reason


def test_extra_coverage_verdicts_drop_their_probabilities_with_them():
    result = score(judge({"analyze": [0.7, 0.8, 0.9, 0.95]}, coverage=4))
    assert result.verdict_probabilities.coverage == (0.7, 0.8, 0.9)
    assert result.verdict_probabilities.alignment == (None, None)


def test_a_count_that_does_not_match_the_verdicts_is_an_error():
    with pytest.raises(GenerationError, match="1 verdict probabilities for 2 verdicts"):
        score(judge({"preprocess": [0.9]}))


def test_replay_gives_the_recorded_probabilities_byte_for_byte(tmp_path):
    path = tmp_path / "c.oscas"
    live = judge({"preprocess": [0.912345678901, 0.1], "analyze": [0.7, 0.8]})
    recorded = score(CassetteJudge(path, mode=RecordMode.RECORD, identity=IDENTITY, live=live))
    replayed = score(CassetteJudge(path, mode=RecordMode.REPLAY, identity=IDENTITY))
    assert replayed.to_json() == recorded.to_json()
    assert replayed.verdict_probabilities.alignment[0] == 0.9123


def test_the_threshold_is_part_of_the_key(tmp_path):
    path = tmp_path / "c.oscas"
    live = judge({"preprocess": [0.9, 0.1], "analyze": [0.7, 0.8]})
    score(CassetteJudge(path, mode=RecordMode.RECORD, identity=IDENTITY, live=live))
    other = JudgeIdentity("a" * 64, "b" * 64, "test-backend/1", 0.7)
    with pytest.raises(CassetteMissError, match=r"verdict threshold: recorded 0\.62 vs now 0\.7"):
        score(CassetteJudge(path, mode=RecordMode.REPLAY, identity=other))


def test_a_version_1_cassette_fails_with_one_line_naming_its_format(tmp_path):
    from offline_scorer.assembly.open import pinned_identity
    from offline_scorer.models.registry import load_registry

    old = tmp_path / "old.oscas"
    shutil.copy(ROOT / "tests/data/v1-fixtures.oscas", old)
    identity = pinned_identity(load_registry().resolve("default"))
    with pytest.raises(CassetteMissError) as caught:
        score(CassetteJudge(old, mode=RecordMode.REPLAY, identity=identity))
    message = str(caught.value)
    assert "\n" not in message
    assert "recorded with cassette key format 1" in message
    assert "re-record it with --record-mode record" in message


class Tap(ScriptedJudge):
    """A scripted judge that keeps the requests it was sent."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.sent = []

    def complete(self, request):
        self.sent.append(request)
        return super().complete(request)


def test_a_coverage_threshold_goes_to_the_coverage_request_and_into_the_result():
    tap = Tap(
        alignment=[{"claim": "c0", "supported": True, "reason": "r"}],
        questions=["q0?"],
        coverage=[{"question": "q0?", "answered": True, "reason": "r"}],
        reason="Scripted.",
        probabilities={"preprocess": [0.9], "analyze": [0.45]},
        threshold=0.62,
    )
    result = score(tap, coverage_threshold=0.43)
    by_step = {request.step: request.sampling for request in tap.sent}
    assert by_step["analyze"].verdict_threshold == 0.43
    assert by_step["preprocess"].verdict_threshold is None  # the judge's own
    assert by_step["analyze"].normalized()["verdict_threshold"] == 0.43  # so keys differ
    assert "verdict_threshold" not in by_step["preprocess"].normalized()  # older keys hold
    assert json.loads(result.to_json())["verdictProbabilities"]["coverageThreshold"] == 0.43
    # unset: no field, and the result's bytes are what they were before the option existed
    plain = json.loads(score(judge({"preprocess": [0.9, 0.1], "analyze": [0.7, 0.8]})).to_json())
    assert "coverageThreshold" not in plain["verdictProbabilities"]


@pytest.mark.parametrize("bad", [0, 1, 1.5, -0.1, "0.4", True])
def test_a_coverage_threshold_outside_0_and_1_is_refused(bad):
    from offline_scorer import ConfigError

    with pytest.raises(ConfigError, match="coverage_threshold must be a number between 0 and 1"):
        ScorerOptions(coverage_threshold=bad)


def test_the_options_identity_names_a_coverage_threshold_only_when_set():
    assert "coverage_threshold" not in ScorerOptions().identity()
    assert ScorerOptions(coverage_threshold=0.4).identity()["coverage_threshold"] == 0.4
