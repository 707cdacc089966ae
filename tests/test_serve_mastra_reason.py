"""Mastra's explanation through `serve`: read by the library's reader checks against the result
Mastra's prompt gives, shown when it passes, replaced and marked when it does not. The prompts
are the requests Mastra really sent (tests/data/mastra)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from offline_scorer.judging.protocol import Completion, JudgeIdentity
from offline_scorer.scorers.summarization.misstated_result import ExplainedResult, misstates
from offline_scorer.serve.mastra_reason import (
    GivenResult,
    read_given,
    reason_problem,
    shown_reason,
    written_reason,
)
from offline_scorer.serve.responses import reply_of
from offline_scorer.serve.translate import prepare
from offline_scorer.serve.wire import parse_request

REQUESTS = Path(__file__).parent / "data/mastra/requests"
START = "Explain the summarization score for the given summary.\n\nSource Text:\n"
END = "\n\nSummarization takes the lower of two scores"
TRUE_REASON = (
    "The score is 0.57 because coverage was the weaker axis: the summary does not say that "
    "a free shuttle bus will run every 20 minutes between the two sides of the harbor."
)


def _request(name: str = "native-3") -> dict:
    return json.loads((REQUESTS / f"{name}.json").read_text(encoding="utf-8"))


def _given(style: str = "open") -> GivenResult:
    user = _request()["messages"][1]["content"]
    end = user.index(END)
    given = read_given(user[len(START) : end], user[end:], style)
    assert given is not None
    return given


def test_the_result_is_read_back_from_mastras_prompt() -> None:
    given = _given()
    assert (given.score, given.score_value) == ("0.57", 0.57)
    assert (given.alignment, given.coverage, given.limiting_axis) == (1.0, 0.57, "coverage")
    assert given.unsupported == ()
    assert len(given.missing) == 3
    assert given.missing[2].startswith("Does the source state that a free shuttle bus")


def test_a_true_readable_reason_is_shown_as_the_judge_wrote_it() -> None:
    assert reason_problem(_given(), TRUE_REASON) is None
    assert shown_reason(_given(), TRUE_REASON) == TRUE_REASON


@pytest.mark.parametrize(
    ("reason", "check"),
    [
        (
            "The score is 0.57 because coverage was the weaker axis: the summary answers 3 of "
            "20 questions about the bridge.",
            "states a count of claims or questions the figures do not give",
        ),
        (
            "The score is 0.57 because alignment was the weaker axis: the bridge is closed.",
            "names the axis that does not limit the score",
        ),
        (
            "The score is 0.57 because coverage coverage coverage coverage was weak.",
            "repeats itself",
        ),
        (
            "The score is 0.57 because the summary leaves out 7 facts about the bridge.",
            "states a number the figures do not hold",
        ),
    ],
)
def test_a_reason_that_fails_a_check_is_replaced_by_the_products_and_says_why(
    reason: str, check: str
) -> None:
    given = _given()
    refusal = reason_problem(given, reason)
    assert refusal is not None and refusal.check == check
    shown = shown_reason(given, reason)
    assert reason not in shown
    assert shown == (
        f"{written_reason(given)} (Written by offline-scorer in place of the judge's reason, "
        f"which {check}.)"
    )
    assert shown.startswith(
        "The score is 0.57 because coverage was the weaker axis: the summary does not answer "
        '"Does the source state that the crossing, built in 1961,'
    )


def test_the_products_reason_names_the_axis_and_what_is_behind_it() -> None:
    base = _given()

    def result(score: str, alignment: float, coverage: float, claims=(), questions=()):
        return replace(
            base,
            score=score,
            score_value=float(score),
            alignment=alignment,
            coverage=coverage,
            unsupported=tuple(claims),
            missing=tuple(questions),
        )

    assert written_reason(result("0", 0.0, 1.0, ["The lamps are safe."])) == (
        'The score is 0 because alignment was the weaker axis: the source does not support "The '
        'lamps are safe.".'
    )
    assert written_reason(result("1", 1.0, 1.0)) == (
        "The score is 1 because every claim in the summary is supported by the source and the "
        "summary answers every question drawn from it."
    )
    assert written_reason(result("0", 1.0, 0.0, (), ["A?", "B?", "C?", "D?", "E?"])) == (
        "The score is 0 because coverage was the weaker axis: the summary does not answer 5 "
        'questions, among them "A?"; "B?"; "C?".'
    )
    assert written_reason(result("0.5", 0.5, 0.5, ["A."], ["B?"])) == (
        "The score is 0.5 because alignment and coverage were equally weak: the source does not "
        'support "A."; the summary does not answer "B?".'
    )


def test_a_share_the_axes_hold_passes_and_one_they_do_not_is_refused() -> None:
    """2 of 3 is Mastra's 0.67; the worked example's 2 of 4 is not this result's."""
    said = (
        "The score is 0.67 because coverage was the weaker axis: the summary answers {} questions."
    )
    assert misstates(said.format("2 of 3"), ExplainedResult(0.67, "coverage", (1.0, 0.67))) is None
    refusal = misstates(said.format("2 of 4"), ExplainedResult(0.67, "coverage", (1.0, 0.67)))
    assert refusal is not None and refusal.detail == "2 of 4"
    # a count of the pair's own facts is not a share of claims or questions
    fact = "The score is 0.67 because coverage was the weaker axis: 2 of 9 beams were worn."
    assert misstates(fact, ExplainedResult(0.67, "coverage", (1.0, 0.67))) is None


@pytest.mark.parametrize("name", ["inline-3", "native-3"])
def test_the_reply_mastra_receives_is_the_vetted_text(name: str) -> None:
    """What `serve` sends for Mastra's reason step: the judge's text when it passes, the
    product's marked sentence when it does not; other steps' replies are untouched."""
    prepared = prepare(parse_request(_request(name)))
    bad = "The score is 0.57 because alignment was the weaker axis: the bridge is closed."
    for text, expected in ((TRUE_REASON, TRUE_REASON), (bad, shown_reason(_given(), bad))):
        reply = reply_of(prepared, Completion(json.dumps(text)), b"\0" * 32, _identity())
        assert reply.text == expected
    other = prepare(parse_request(_request(name.replace("-3", "-2"))))
    assert other.shown is None


def _identity() -> JudgeIdentity:
    return JudgeIdentity("0" * 64, "0" * 64, "scripted", 0.5)


@pytest.mark.parametrize(
    ("said", "wrong"),
    [
        ("the summary answers 2 of 40,000 questions", "2 of 40,000"),  # not a coverage of 0
        ("the summary answers 1 of 1 questions", "1 of 1"),  # alignment's share, not coverage's
        ("2 of 3 claims are supported", "2 of 3"),  # coverage's share, not alignment's
        ("the summary answers 0 of 3 questions", None),
        ("1 of 1 claims is supported", None),
    ],
)
def test_a_count_is_checked_against_the_share_of_its_own_axis(said: str, wrong: str | None) -> None:
    """Questions answered are coverage's share, claims supported alignment's; a share of none is
    none exactly (the default judge wrote "answers 2 of 40,000 questions" for a coverage of 0)."""
    text = f"The score is 0 because coverage was the weaker axis: {said}."
    refusal = misstates(text, ExplainedResult(0.0, "coverage", (1.0, 0.0)))
    assert (refusal.detail if refusal else None) == wrong


def test_words_run_together_at_an_apostrophe_are_refused() -> None:
    """The default judge through Mastra wrote "the project lead'scale" and "the
    treasurer'spring plant sale report"; a plural possessive without its space still reads."""
    given = _given()
    head = "The score is 0.57 because coverage was the weaker axis: the summary leaves out the"
    refusal = reason_problem(given, f"{head} bridge'shuttle.")
    assert refusal is not None and refusal.check == "runs words together at an apostrophe"
    assert reason_problem(given, f"{head} crossings'shuttle.") is None


@pytest.mark.parametrize(
    ("said", "check"),
    [
        (
            "the summary answers 2019 as the year the school closed, which is not supported by "
            "the source text",
            "says a claim is unsupported where the source supports every claim",
        ),
        ("the claim about the bridge contradicts the source", "says a claim is unsupported"),
        ("no claim of the summary contradicts the source", None),
        ("the summary leaves out the shuttle", None),  # coverage is 0.57: true enough to show
    ],
)
def test_an_explanation_that_contradicts_a_whole_axis_is_refused(
    said: str, check: str | None
) -> None:
    """Alignment is 1 here (no claim is listed as unsupported): an explanation saying a claim
    is unsupported contradicts the figures, as the default judge's did through Mastra."""
    text = f"The score is 0.57 because coverage was the weaker axis: {said}."
    refusal = misstates(text, ExplainedResult(0.57, "coverage", (1.0, 0.57)))
    assert (refusal is None) == (check is None)
    assert refusal is None or check is None or refusal.check.startswith(check)


@pytest.mark.parametrize(
    ("said", "refused"),
    [
        ("the summary answers 2023 as the opening date", True),
        ("the summary answers none of the questions", False),
        ("the summary answers 0 of 6 questions", False),
        ("no question is answered by the summary", False),
    ],
)
def test_an_explanation_that_says_the_summary_answers_at_a_coverage_of_0_is_refused(
    said: str, refused: bool
) -> None:
    """The default judge wrote "the summary answers 2023 as the opening date" through Mastra
    for a summary that, by the judge's own verdicts, answers no question."""
    refusal = misstates(
        f"The score is 0 because coverage was the weaker axis: {said}.",
        ExplainedResult(0.0, "coverage", (1.0, 0.0)),
    )
    assert (refusal is not None) == refused
