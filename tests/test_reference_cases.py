"""The spec's reference table, every row, through ScriptedJudge."""

from __future__ import annotations

import json

import pytest

from offline_scorer.scorers.summarization.rule import round2
from tests.helpers import score_of, scripted

T, F = True, False

CASES = [
    # claims supported, questions drawn, verdicts returned, options, expected score
    ("2/2 2/2", [T, T], 2, [T, T], {}, 1),
    ("1/2 2/2", [T, F], 2, [T, T], {}, 0.5),
    ("1/1 1/4", [T], 4, [T, F, F, F], {}, 0.25),
    ("0/1 1/1", [F], 1, [T], {}, 0),
    ("2/3 2/2", [T, T, F], 2, [T, T], {}, 0.67),
    ("1/2 2/2 scale 10", [T, F], 2, [T, T], {"scale": 10}, 5),
    ("no claims", [], 1, [T], {}, 0),
    ("no questions", [T], 0, [], {}, 0),
    ("4 asked 1 verdict", [T], 4, [T], {}, 0.25),
    ("1 asked 3 verdicts", [T], 1, [T, F, F], {}, 1),
    ("14 drawn default cap", [T], 14, [T] * 10 + [F] * 4, {}, 1),
    ("3 drawn cap 1", [T], 3, [T, F, F], {"max_questions": 1}, 1),
]


@pytest.mark.parametrize(
    ("claims", "questions", "verdicts", "options", "expected"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_reference_case(claims, questions, verdicts, options, expected):
    result = score_of(scripted(claims, questions, verdicts), **options)
    assert result.score == expected
    assert type(result.score) is type(expected)  # 5 stays 5, never 5.0, in JSON output
    assert json.loads(result.to_json())["score"] == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.665, 0.67),
        (2 / 3, 0.67),
        (0.125, 0.13),
        (0.005, 0.01),
        (1.005, 1.01),
        (0.664, 0.66),
        (5.0, 5),
        (0.0, 0),
        (1 / 3, 0.33),
    ],
)
def test_round2_half_away_from_zero(value, expected):
    assert round2(value) == expected


def test_missing_verdicts_count_as_unanswered_and_are_listed():
    result = score_of(scripted([T], 4, [T]))
    coverage = result.analyze_step_result.coverage
    assert [v.answered for v in coverage] == [T, F, F, F]
    assert [v.question for v in coverage] == [f"Is fact {i} true?" for i in range(4)]
    assert len(result.outcome.missing_questions) == 3
    assert "no verdict" in coverage[1].reason


def test_extra_verdicts_are_ignored():
    result = score_of(scripted([T], 1, [T, F, F]))
    assert len(result.analyze_step_result.coverage) == 1
    assert result.outcome.missing_questions == ()


def test_cap_keeps_all_drawn_questions_but_asks_only_the_first_n():
    judge = scripted([T], 14, [T] * 10 + [F] * 4)
    result = score_of(judge)
    assert len(result.preprocess_step_result.questions) == 14
    assert len(result.analyze_step_result.coverage) == 10
    analyze_text = dict(judge.calls)["analyze"]
    assert "Is fact 9 true?" in analyze_text
    assert "Is fact 10 true?" not in analyze_text


def test_three_calls_one_per_step_in_order():
    judge = scripted([T], 1, [T])
    score_of(judge)
    assert [step for step, _ in judge.calls] == ["preprocess", "analyze", "reason"]
