"""Coverage read against the content-free baseline (`coverage_baseline`): the arithmetic, the
requests a scorer sends for it, and what it gives back. A scripted judge stands in for the
model; the default judge runs this way live in test_default_judge.py."""

from __future__ import annotations

import math

import pytest

from offline_scorer.errors import ConfigError
from offline_scorer.models.registry import load_registry
from offline_scorer.scorers.summarization.baseline import against_baseline, threshold_on_question
from offline_scorer.scorers.summarization.options import ScorerOptions
from offline_scorer.scorers.summarization.question_prompts import EMPTY_SUMMARY
from offline_scorer.scorers.summarization.scorer import SummarizationScorer
from offline_scorer.serve.mastra import served_options
from offline_scorer.testing import ScriptedJudge

SOURCE = "The council voted to close the bridge. Repairs will cost 2.4 million dollars."
SUMMARY = "The council voted to close the bridge."
QUESTIONS = [
    "Is it true that the council voted to close the bridge?",
    "Is it true that repairs will cost 2.4 million dollars?",
]
ANSWERED, EMPTY, THRESHOLD = (0.8, 0.3), (0.7, 0.1), 0.6


def judge() -> ScriptedJudge:
    return ScriptedJudge(
        alignment=[{"claim": SUMMARY, "supported": True, "reason": "The source states it."}],
        questions=QUESTIONS,
        coverage=[
            {"question": QUESTIONS[0], "answered": True, "reason": "It is stated."},
            {"question": QUESTIONS[1], "answered": False, "reason": "It is left out."},
        ],
        reason="Scripted.",
        probabilities={"preprocess": [0.9], "analyze": list(ANSWERED), "baseline": list(EMPTY)},
        threshold=0.5,
    )


def options() -> ScorerOptions:
    return ScorerOptions(
        free_text="open",
        one_by_one=True,
        coverage_baseline=True,
        coverage_threshold=THRESHOLD,
        questions="facts",
    )


def test_a_question_counts_against_its_baseline_exactly_at_the_threshold_carried_to_it() -> None:
    for threshold in (0.2, 0.5, 0.83):
        for empty in (0.05, 0.3, 0.9):
            raw = threshold_on_question(threshold, empty)
            assert against_baseline(raw, empty) == pytest.approx(threshold, abs=1e-12)
            assert against_baseline(raw + 1e-6, empty) > threshold
    assert against_baseline(0.4, 0.4) == pytest.approx(0.5)  # no more than the empty summary
    assert against_baseline(0.9, 0.1) > against_baseline(0.9, 0.6)
    assert math.isfinite(against_baseline(1.0, 0.0)) and math.isfinite(against_baseline(0.0, 1.0))


def test_each_question_is_asked_of_the_empty_summary_once_then_of_the_summary() -> None:
    j = judge()
    scorer = SummarizationScorer(j, options())
    result = scorer.score_texts(SOURCE, SUMMARY)
    analyze = [r for r in j.requests if r.step == "analyze"]
    baselines, asked = analyze[:2], analyze[2:]
    for request, question in zip(baselines, QUESTIONS, strict=True):
        assert request.output_schema is not None
        assert list(request.output_schema["properties"]) == ["answered"]
        assert request.text().startswith(f"[user]\nSummary:\n{EMPTY_SUMMARY}\n\nQuestion:\n")
        assert question in request.text() and request.sampling.verdict_threshold is None
    for request, empty in zip(asked, EMPTY, strict=True):
        assert "Does the summary itself state this fact?" in request.text()
        assert request.sampling.verdict_threshold == threshold_on_question(THRESHOLD, empty)
    found = result.verdict_probabilities
    assert found is not None and found.coverage_threshold == THRESHOLD
    assert found.coverage == tuple(
        round(against_baseline(p, e), 4) for p, e in zip(ANSWERED, EMPTY, strict=True)
    )
    scorer.score_texts(SOURCE, "The council voted to close it.")  # same questions: no baseline
    again = [r for r in j.requests[len(j.requests) // 2 :] if r.step == "analyze"]
    assert all("Summary:\nN/A" not in r.text() for r in again)


def test_the_option_says_what_it_needs() -> None:
    with pytest.raises(ConfigError, match="set one_by_one too"):
        ScorerOptions(coverage_baseline=True, coverage_threshold=0.6)
    with pytest.raises(ConfigError, match="needs coverage_threshold"):
        ScorerOptions(one_by_one=True, coverage_baseline=True)
    with pytest.raises(ConfigError, match="true or false"):
        ScorerOptions.from_mapping({"oneByOne": True, "coverageBaseline": "yes"})
    assert options().identity()["coverage_baseline"] is True
    assert "coverage_baseline" not in ScorerOptions().identity()  # older identities hold


def test_serve_keeps_mastra_s_list_requests_off_the_baseline_s_scale() -> None:
    spec = load_registry().resolve("qwen2.5-coder-1.5b")
    assert spec.scorer_options["summarization"]["coverage_baseline"] is True
    served = served_options(spec)
    assert not served.coverage_baseline and not served.one_by_one
    assert served.coverage_threshold == spec.served_options["summarization"]["coverage_threshold"]
