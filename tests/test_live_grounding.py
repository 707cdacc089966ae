"""Grounding and verdict probabilities, enforced in decoding: proved on the real default GGUF,
which copies from its prompt and loops whenever decoding lets it."""

from __future__ import annotations

import json

import pytest

from offline_scorer.judging.protocol import JudgeRequest, Message, SamplingSettings, as_completion
from offline_scorer.scorers.summarization import prompts
from offline_scorer.scorers.summarization.asking import Asking
from offline_scorer.scorers.summarization.grounding import claims_of, question_candidates, words
from offline_scorer.scorers.summarization.options import ScorerOptions
from offline_scorer.scorers.summarization.schemas import reason_schema
from offline_scorer.scorers.summarization.scorer import SummarizationScorer
from offline_scorer.scorers.summarization.sentence import vocabulary_of

pytestmark = pytest.mark.live

# A summary that repeats itself and a source whose sentences repeat: the answer may repeat
# neither, and may speak of nothing else.
SOURCE = (
    "The ferry to Kellow Island runs twice a day from the north pier. "
    "A return ticket costs twelve euros, and children under five travel free. "
    "The ferry to Kellow Island runs twice a day from the north pier. "
    "In winter storms the morning crossing is often cancelled by the harbour master. "
    "The island has one shop, a chapel and a small museum of fishing boats."
)
SUMMARY = (
    "The Kellow Island ferry runs twice daily. The Kellow Island ferry runs twice daily. "
    "Children under ten travel free, and the island has two shops."
)


def _runs(text: str, n: int) -> set[tuple[str, ...]]:
    w = words(text)
    return {tuple(w[i : i + n]) for i in range(len(w) - n + 1)}


@pytest.fixture(scope="module")
def preprocess(live_judge):
    request = prompts.preprocess_request(SOURCE, SUMMARY, 10, Asking.of(ScorerOptions()))
    completion = as_completion(live_judge.complete(request))
    return request, completion, json.loads(completion.text)


def test_every_claim_is_a_sentence_of_the_summary_once(preprocess):
    _, _, answer = preprocess
    claims = [c["claim"] for c in answer["alignment"]]
    assert claims == list(claims_of(SUMMARY, clock_always_ends=False))
    assert len(claims) == len(set(claims)) == 2


def test_every_question_is_made_from_a_source_sentence_and_none_repeats(preprocess):
    _, _, answer = preprocess
    questions = answer["questions"]
    candidates = question_candidates(SOURCE, clock_always_ends=False)
    assert len(candidates) == 4  # the repeated source sentence is offered once
    assert set(questions) <= set(candidates)
    assert len(questions) == len(set(questions)) == 4
    assert questions == sorted(questions, key=candidates.index)


def test_nothing_in_the_answer_comes_from_a_worked_example(preprocess):
    request, _, answer = preprocess
    prompt = request.text()
    assert "Example" not in prompt and "ANSWER:" not in prompt
    for claim in answer["alignment"]:
        assert claim["claim"] in SUMMARY
    for question in answer["questions"]:
        body = question.removeprefix("Is it true that ").removesuffix("?")
        assert body.lower() in SOURCE.lower()


def test_each_verdict_follows_its_probability_and_the_threshold(live_judge, preprocess):
    request, completion, answer = preprocess
    probabilities = completion.verdict_probabilities
    assert probabilities is not None and len(probabilities) == len(answer["alignment"])
    assert all(0.0 < p < 1.0 for p in probabilities)
    threshold = live_judge.verdict_threshold
    assert completion.verdict_threshold == threshold
    assert [c["supported"] for c in answer["alignment"]] == [p >= threshold for p in probabilities]
    # The same model with the threshold at its ends commits every verdict one way.
    for edge, expected in ((0.0, True), (1.0, False)):
        from offline_scorer.backends.llama_cpp.judge import LlamaJudge

        spec = live_judge.spec.model_copy(update={"verdict_threshold": edge})
        judge = LlamaJudge(spec, threads=live_judge.threads)
        forced = json.loads(as_completion(judge.complete(request)).text)
        assert {c["supported"] for c in forced["alignment"]} == {expected}


def test_coverage_verdicts_carry_probabilities_too(live_judge):
    result = SummarizationScorer(live_judge, ScorerOptions()).score_texts(SOURCE, SUMMARY)
    found = result.verdict_probabilities
    assert found is not None
    assert len(found.coverage) == len(result.analyze_step_result.coverage)
    for verdict, p in zip(result.analyze_step_result.coverage, found.coverage, strict=True):
        assert p is not None and verdict.answered == (p >= found.threshold)


def test_the_explanation_copies_nothing_from_the_prompt(live_judge):
    facts = (
        "SCORE: 0.5 of 1 (alignment 0.5, coverage 1)\nLIMITING AXIS: alignment\n"
        "UNSUPPORTED CLAIMS:\n- Children under ten travel free.\nUNANSWERED QUESTIONS:\n"
        "- none"
    )
    request = prompts.reason_request(facts)
    explanation = json.loads(as_completion(live_judge.complete(request)).text)["explanation"]
    fixed = set().union(*(_runs(text, 6) for text in prompts.instructions(prompts._REASON)))
    assert not _runs(explanation, 6) & fixed, explanation
    assert not any(ch.isdigit() for ch in explanation)


def _echo(no_repeat: int, no_copy: tuple[str, ...]) -> tuple[str, JudgeRequest]:
    text = "the quick brown fox jumps over the lazy dog near the old stone bridge"
    return text, JudgeRequest(
        step="probe",
        messages=(Message("user", f"Repeat this sentence exactly, three times: {text}"),),
        output_schema=reason_schema(vocabulary_of(text)),  # its words may be written
        sampling=SamplingSettings(max_tokens=200, no_repeat_ngram=no_repeat, no_copy=no_copy),
    )


def test_the_guard_stops_copying_and_looping_that_the_model_does_without_it(live_judge):
    text, free = _echo(0, ())
    unguarded = json.loads(as_completion(live_judge.complete(free)).text)["explanation"]
    assert _runs(unguarded, 6) & _runs(text, 6), unguarded  # the model copies when allowed
    _, guarded_request = _echo(4, (text,))
    guarded = json.loads(as_completion(live_judge.complete(guarded_request)).text)["explanation"]
    assert not _runs(guarded, 6) & _runs(text, 6), guarded
    seen: set[tuple[str, ...]] = set()
    w = words(guarded)
    for i in range(len(w) - 5):  # no run of six words twice
        run = tuple(w[i : i + 6])
        assert run not in seen, guarded
        seen.add(run)


@pytest.mark.parametrize(("threshold", "answered"), [(0.01, True), (0.99, False)])
def test_a_requests_own_threshold_commits_its_verdicts(live_judge, threshold, answered):
    """The coverage step may be calibrated apart from the claims: the decoder commits each
    verdict at the request's threshold and says which one it used."""
    questions = question_candidates(SOURCE, clock_always_ends=False)[:3]
    request = prompts.analyze_request(SUMMARY, questions, "sentences", threshold)
    completion = as_completion(live_judge.complete(request))
    verdicts = [v["answered"] for v in json.loads(completion.text)["coverage"]]
    assert verdicts == [answered] * len(questions)
    assert completion.verdict_threshold == threshold
    assert completion.verdict_probabilities is not None
    assert all(0 < p < 1 for p in completion.verdict_probabilities)
