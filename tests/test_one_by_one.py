"""Judging one claim and one question per request (`one_by_one`): the requests a scorer sends,
what they share, and a result the same as the judge's verdicts in one answer give. A scripted
judge stands in for the model; the default judge runs this way live in test_default_judge.py."""

from __future__ import annotations

import json

import pytest

from offline_scorer.errors import ConfigError
from offline_scorer.scorers.summarization.grounding import claims_of
from offline_scorer.scorers.summarization.options import ScorerOptions
from offline_scorer.scorers.summarization.scorer import SummarizationScorer
from offline_scorer.testing import ScriptedJudge

SOURCE = (
    "The council voted 7 to 2 to close the bridge from April 3. "
    "Repairs will cost 2.4 million dollars. "
    "A free shuttle will run every 20 minutes."
)
SUMMARY = "The council voted to close the bridge. A shuttle will run every hour."
QUESTIONS = [
    "Is it true that the council voted 7 to 2 to close the bridge from April 3?",
    "Is it true that repairs will cost 2.4 million dollars?",
]


ASKED_OF_A_CLAIM = "Is every fact in this sentence supported by the document? Answer in JSON."


def judge() -> ScriptedJudge:
    claims = claims_of(SUMMARY, clock_always_ends=False)
    return ScriptedJudge(
        alignment=[
            {"claim": claims[0], "supported": True, "reason": "The source states the vote."},
            {"claim": claims[1], "supported": False, "reason": "The source says 20 minutes."},
        ],
        questions=QUESTIONS,
        coverage=[
            {"question": QUESTIONS[0], "answered": True, "reason": "The summary states it."},
            {"question": QUESTIONS[1], "answered": False, "reason": "The summary omits it."},
        ],
        reason="Scripted.",
        probabilities={"preprocess": [0.9, 0.2], "analyze": [0.8, 0.3]},
        threshold=0.5,
    )


def score(j: ScriptedJudge, one_by_one: bool):
    options = ScorerOptions(free_text="open", one_by_one=one_by_one, max_questions=2)
    return SummarizationScorer(j, options).score_texts(SOURCE, SUMMARY)


def test_each_claim_and_question_is_a_request_of_its_own():
    j = judge()
    score(j, one_by_one=True)
    steps = [request.step for request in j.requests]
    # the questions, one request per claim, one per question, the explanation
    assert steps == ["preprocess", "preprocess", "preprocess", "analyze", "analyze", "reason"]
    questions, *claims = j.requests[:3]
    assert list(questions.output_schema["properties"]) == ["questions"]
    for request, claim in zip(claims, claims_of(SUMMARY, clock_always_ends=False), strict=True):
        assert list(request.output_schema["properties"]) == ["supported", "reason"]
        assert request.text().endswith(f"{claim}\n\n" + ASKED_OF_A_CLAIM)
    for request, question in zip(j.requests[3:5], QUESTIONS, strict=True):
        assert list(request.output_schema["properties"]) == ["answered", "reason"]
        assert f"Question:\n{question}\n" in request.text()


def test_requests_differ_only_after_the_texts_they_share():
    """What lets a runtime keep the source's KV state: every claim's prompt is the same text up
    to the claim, and opens as the questions' prompt does, with the source."""
    j = judge()
    score(j, one_by_one=True)
    texts = [request.text() for request in j.requests]
    first, second = texts[1], texts[2]
    shared = first[: first.index("Sentence of the summary:")]
    assert shared.startswith("[user]\nDocument:")  # no system message: the model's own
    assert second.startswith(shared) and SOURCE in shared and SUMMARY in shared
    assert texts[0].startswith(shared[: shared.index("\n\nSummary:")])
    coverage_shared = texts[3][: texts[3].index("Question:")]
    assert texts[4].startswith(coverage_shared) and SOURCE not in texts[3]


def test_the_result_is_the_one_the_same_verdicts_give_in_one_answer():
    alone, together = score(judge(), one_by_one=True), score(judge(), one_by_one=False)
    assert alone.to_json() == together.to_json()
    assert json.loads(alone.to_json())["verdictProbabilities"] == {
        "threshold": 0.5,
        "alignment": [0.9, 0.2],
        "coverage": [0.8, 0.3],
    }


def test_calibration_reads_the_claims_only():
    j = judge()
    options = ScorerOptions(free_text="open", one_by_one=True)
    run = {
        "input": {"inputMessages": [{"id": "u", "role": "user", "content": SOURCE}]},
        "output": [{"id": "a", "role": "assistant", "content": SUMMARY}],
    }
    assert SummarizationScorer(j, options).claim_probabilities(run) == (0.9, 0.2)
    assert [r.step for r in j.requests] == ["preprocess", "preprocess"]


def test_a_blank_summary_sends_no_claim_request():
    j = judge()
    options = ScorerOptions(free_text="open", one_by_one=True)
    result = SummarizationScorer(j, options).score_texts(SOURCE, "   ")
    assert result.preprocess_step_result.alignment == ()
    assert "claim" not in json.dumps([r.output_schema for r in j.requests[:1]])


def test_the_option_is_named_in_the_identity_only_when_on():
    assert "one_by_one" not in ScorerOptions().identity()
    assert ScorerOptions.from_mapping({"oneByOne": True}).identity()["one_by_one"] is True


@pytest.mark.parametrize("bad", ["yes", 1, None])
def test_a_one_by_one_that_is_not_true_or_false_is_refused(bad):
    with pytest.raises(ConfigError, match="one_by_one must be true or false"):
        ScorerOptions(one_by_one=bad)


def test_the_claim_and_coverage_thresholds_go_to_their_own_requests():
    j = judge()
    options = ScorerOptions(
        free_text="open", one_by_one=True, claim_threshold=0.7, coverage_threshold=0.4
    )
    SummarizationScorer(j, options).score_texts(SOURCE, SUMMARY)
    thresholds = [(r.step, r.sampling.verdict_threshold) for r in j.requests[1:5]]
    assert thresholds == [("preprocess", 0.7)] * 2 + [("analyze", 0.4)] * 2
    assert ScorerOptions(claim_threshold=0.7).identity()["claim_threshold"] == 0.7


def test_questions_of_facts_are_the_products_choice_and_need_no_request():
    """With `questions = facts` the scorer asks the source's facts of most weight, each a
    clause in the source's words, and sends no request for the judge to choose them."""
    from offline_scorer.scorers.summarization.facts import fact_questions

    asked = fact_questions(SOURCE, 2, clock_always_ends=False)
    claims = claims_of(SUMMARY, clock_always_ends=False)
    j = ScriptedJudge(
        alignment=[
            {"claim": claims[0], "supported": True, "reason": "The source states the vote."},
            {"claim": claims[1], "supported": False, "reason": "The source says 20 minutes."},
        ],
        coverage=[
            {"question": asked[0], "answered": True, "reason": "The summary states it."},
            {"question": asked[1], "answered": False, "reason": "The summary omits it."},
        ],
        reason="Scripted.",
        probabilities={"preprocess": [0.9, 0.2], "analyze": [0.8, 0.3]},
        threshold=0.5,
    )
    options = ScorerOptions(free_text="open", one_by_one=True, max_questions=2, questions="facts")
    result = SummarizationScorer(j, options).score_texts(SOURCE, SUMMARY)
    steps = [request.step for request in j.requests]
    assert steps == ["preprocess", "preprocess", "analyze", "analyze", "reason"]
    assert result.preprocess_step_result.questions == asked
    assert [v.answered for v in result.analyze_step_result.coverage] == [True, False]
    assert options.identity()["questions"] == "facts"
    assert "questions" not in ScorerOptions().identity()  # sentences: identities as before
    with pytest.raises(ConfigError, match="questions must be one of sentences, facts"):
        ScorerOptions(questions="clauses")
