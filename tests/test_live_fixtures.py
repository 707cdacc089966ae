"""The live path on the real default GGUF over every fixture pair (not a mock).

One pass over the fixtures is shared by the assertions below; it is the slowest part of the
suite (about half a minute per pair on 2 cores).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from offline_scorer.judge import JudgeRequest
from offline_scorer.options import ScorerOptions
from offline_scorer.result import RESULT_JSON_SCHEMA
from offline_scorer.scorer import SummarizationScorer

pytestmark = pytest.mark.live
jsonschema = pytest.importorskip("jsonschema")


@dataclass
class Exchange:
    request: JudgeRequest
    text: str


class Tap:
    """Passes requests to the live judge and keeps every exchange."""

    def __init__(self, inner):
        self.inner = inner
        self.exchanges: list[Exchange] = []

    def complete(self, request: JudgeRequest) -> str:
        text = self.inner.complete(request)
        self.exchanges.append(Exchange(request, text))
        return text


@pytest.fixture(scope="module")
def live_runs(live_judge, fixture_pairs):
    runs = []
    for pair in fixture_pairs:
        tap = Tap(live_judge)
        result = SummarizationScorer(tap, ScorerOptions()).score_texts(
            pair["source"], pair["summary"]
        )
        runs.append((pair, tap.exchanges, result))
    return runs


def test_at_least_ten_pairs(fixture_pairs):
    assert len(fixture_pairs) >= 10


def test_exactly_three_calls_per_evaluation(live_runs):
    for pair, exchanges, _ in live_runs:
        steps = [e.request.step for e in exchanges]
        assert steps == ["preprocess", "analyze", "reason"], pair["id"]


def test_every_structured_output_matches_its_schema(live_runs):
    checked = 0
    for _pair, exchanges, _ in live_runs:
        for exchange in exchanges:
            data = json.loads(exchange.text)  # raises on broken JSON
            jsonschema.validate(data, exchange.request.output_schema)
            checked += 1
    assert checked == 3 * len(live_runs)


def test_coverage_verdicts_echo_the_asked_questions_in_order(live_runs):
    for pair, exchanges, result in live_runs:
        asked = list(result.preprocess_step_result.questions[:10])
        raw = json.loads(exchanges[1].text)["coverage"]
        assert [v["question"] for v in raw] == asked, pair["id"]


def _analyze_text_without_questions(exchanges) -> str:
    """The coverage prompt minus the questions, which the judge drew from the source itself."""
    text = exchanges[1].request.text()
    for question in json.loads(exchanges[0].text)["questions"]:
        text = text.replace(question, "")
    return text


def test_coverage_prompt_never_contains_the_source(live_runs):
    for pair, exchanges, _ in live_runs:
        assert pair["summary"] in exchanges[1].request.text()
        analyze = _analyze_text_without_questions(exchanges).replace(pair["summary"], "")
        sentences = [s.strip() for s in pair["source"].replace("\n", " ").split(". ")]
        for sentence in (s for s in sentences if len(s) > 20):
            assert sentence not in analyze, (pair["id"], sentence)


def test_distinctive_source_word_never_reaches_the_coverage_prompt(live_runs):
    words = {"01": "Quillmarsh", "04": "Veskerholt", "09": "Skelvin", "12": "Brindlecombe"}
    for pair, exchanges, _ in live_runs:
        word = words.get(pair["id"][:2])
        if word:
            assert word in exchanges[0].request.text()
            assert word not in _analyze_text_without_questions(exchanges)


def test_results_validate_against_the_result_schema(live_runs):
    for _, _, result in live_runs:
        jsonschema.validate(json.loads(result.to_json()), RESULT_JSON_SCHEMA)
        assert 0 <= result.score <= 1
        assert result.reason.startswith(f"Score {result.score!r} of 1:")
