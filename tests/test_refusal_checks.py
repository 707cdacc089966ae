"""Every refusal check of the summarization scorer, one row set each: a text it refuses (as the
first check of its table to do so, so the row also pins the table's order) and a text it lets
through. A check added to a table without rows here fails `test_every_check_has_rows`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from offline_scorer.scorers.summarization.evidence import QUOTE_CHECKS, Quote
from offline_scorer.scorers.summarization.explanation_checks import (
    EXPLANATION_CHECKS,
    ExplanationText,
)
from offline_scorer.scorers.summarization.misstated_result import ExplainedResult
from offline_scorer.scorers.summarization.reason_checks import (
    REASON_CHECKS,
    Allowance,
    FreeText,
    Judging,
)
from offline_scorer.scorers.summarization.refusal import first_refusal
from offline_scorer.scorers.summarization.sentence import vocabulary_of

SOURCE = "The council voted 7 to 2 on Monday to close the Mill Road bridge for repairs in April."
SUMMARY = "The council voted to close the Mill Road bridge in April."
CLAIM = "The council voted to close the Mill Road bridge in April."
OTHER_COUNT = "The council voted 8 to 1 to close the bridge."
QUESTION = "Is it true that the council voted 7 to 2 on Monday?"
REASONS = Allowance(20, vocabulary_of(SOURCE, SUMMARY), f"{SOURCE}\n{SUMMARY}")
COVERAGE = Allowance(20, vocabulary_of(SUMMARY, QUESTION), f"{SUMMARY}\n{QUESTION}")
ON_CLAIM = Judging(CLAIM, True, SOURCE, "source")
AGAINST_CLAIM = Judging(CLAIM, False, SOURCE, "source")
ON_QUESTION = Judging(QUESTION, True, SUMMARY, "summary")
GOOD = "The source states that the council voted to close the Mill Road bridge in April."


def _reason(text: str, judging: Judging = ON_CLAIM, allowed: Allowance = REASONS) -> FreeText:
    return FreeText(text, allowed, judging)


LEFT_OUT = "Is it true that the bridge reopens on 12 June?"
UNSUPPORTED = "The council voted to close the Mill Road bridge forever."
PAIR = f"{SOURCE}\n{SUMMARY}\nThe bridge reopens on 12 June."
FIGURES = "0.5 1 1 0.5 2 2 1 2"
FACTS = f"SCORE {FIGURES}\n{LEFT_OUT}\n{UNSUPPORTED}\nalignment coverage weaker axis forever"
HALF_COVERED = ExplainedResult(0.5, "coverage", (1.0, 0.5), (LEFT_OUT,), FIGURES, PAIR)
HALF_ALIGNED = ExplainedResult(
    0.5, "alignment", (0.5, 1.0), (UNSUPPORTED,), FIGURES, PAIR, (UNSUPPORTED,)
)
NONE_ALIGNED = ExplainedResult(0, "alignment", (0.0, 1.0), (UNSUPPORTED,), "0 1 0 1", PAIR)
NONE_COVERED = ExplainedResult(0, "coverage", (1.0, 0.0), (LEFT_OUT,), "0 1 1 0", PAIR)


def _explanation(text: str, result: ExplainedResult = HALF_COVERED) -> ExplanationText:
    allowed = Allowance(45, vocabulary_of(FACTS, PAIR), f"{result.figures} {LEFT_OUT}")
    return ExplanationText(text, allowed, Judging(FACTS), result)


QUOTED_GROUNDS = "The council voted 7 to 2 on Monday to close the bridge. The council also met."
ON_VOTE = "Is it true that the council voted 7 to 2 on Monday to close the bridge?"


def _quote(sentence: str, grounds: str = QUOTED_GROUNDS) -> Quote:
    return Quote(sentence, ON_VOTE, grounds, clock_always_ends=False)


@dataclass(frozen=True)
class Row:
    """One check's pair: `refused` is refused first by the check, `passed` gets through it."""

    check: str
    refused: Any
    passed: Any


REASON_ROWS = [
    Row("not_whole_sentences", _reason("The source says the council voted"), _reason(GOOD)),
    Row("too_short", _reason("The source agrees."), _reason(GOOD)),
    Row(
        "ends_dangling",
        _reason("The source says the council voted to close the."),
        _reason("The source says the council voted to close the bridge."),
    ),
    Row(
        "says_nothing_of_judging",
        _reason("The council voted to close the Mill Road bridge."),
        _reason("The source says the council voted to close the Mill Road bridge."),
    ),
    Row(
        "not_about_subject",
        _reason("The source says the weather was sunny on Tuesday."),
        _reason("The source says the council met on Tuesday."),
    ),
    Row(
        "copies_question",
        _reason("Is it true that the source says the council voted to close the bridge."),
        _reason("The source says the council voted to close the bridge."),
    ),
    Row(
        "repeats_itself",
        _reason("The source says the the council voted to close the bridge."),
        _reason("The source says the council voted to close the bridge."),
    ),
    Row(
        "ended_at_word_bound",
        _reason(
            "The source says that the council voted seven to two on Monday to close the Mill "
            "Road bridge for repairs in April."
        ),
        _reason(GOOD),
    ),
    Row(
        "short_sentence",
        _reason("The source says the council voted to close the bridge. It agrees."),
        _reason("The source says the council voted to close the bridge. The summary agrees."),
    ),
    Row(
        "uncapitalised_sentence",
        _reason("the source says the council voted to close the bridge."),
        _reason("The source says the council voted to close the bridge."),
    ),
    Row(
        "runs_words_together",
        _reason("The source says the council'scheme closes the bridge."),
        _reason("The source says the council's scheme closes the bridge."),
    ),
    Row(
        "unknown_word",
        _reason("The source says the council voted to close the bridge blorptastically."),
        _reason("The source says the council voted to close the bridge quickly."),
    ),
    Row(
        "number_beyond_inputs",
        _reason("The source says the council voted 9 to 2 to close the bridge."),
        _reason("The source says the council voted 7 to 2 to close the bridge."),
    ),
    Row(
        "denies_its_verdict",
        _reason("The source does not say the council voted to close the bridge."),
        _reason("The source says the council voted to close the bridge."),
    ),
    Row(
        "affirms_against_verdict",
        _reason("The source confirms the council voted to close the bridge.", AGAINST_CLAIM),
        _reason("The source says the council voted to keep the bridge open.", AGAINST_CLAIM),
    ),
    Row(
        "mostly_off_subject",
        _reason("The source says the council met on Monday about repairs.", AGAINST_CLAIM),
        _reason("The source says the council voted on Monday to close the bridge.", AGAINST_CLAIM),
    ),
    Row(
        "holds_what_grounds_do_not",
        _reason("The summary states that the vote was on Monday at noon.", ON_QUESTION, COVERAGE),
        _reason("The summary states that the council voted.", ON_QUESTION, COVERAGE),
    ),
    Row(
        "number_beyond_grounds",
        _reason("The summary states that the council voted 7 to 2.", ON_QUESTION, COVERAGE),
        _reason("The summary states that the council voted.", ON_QUESTION, COVERAGE),
    ),
    Row(
        "substitutes_number",
        _reason(
            "The source states that the council voted 7 to 2, which matches the claim.",
            Judging(OTHER_COUNT, True, SOURCE, "source"),
        ),
        _reason(
            "The source states that the council voted 7 to 2, which differs from the claim.",
            Judging(OTHER_COUNT, False, SOURCE, "source"),
        ),
    ),
]

QUOTE_ROWS = [
    Row(
        "not_a_whole_sentence",
        _quote("ok see you then", "ok see you then\nThe council voted."),
        _quote("The council voted 7 to 2 on Monday to close the bridge."),
    ),
    Row(
        "quote_not_about_subject",
        _quote("The weather was sunny.", "The council voted. The weather was sunny."),
        _quote("The council voted.", "The council voted. The weather was sunny."),
    ),
    Row(
        "another_sentence_is_closer",
        _quote("The council also met."),
        _quote("The council voted 7 to 2 on Monday to close the bridge."),
    ),
]

WEAKER = "The score is 0.5 because coverage was the weaker axis"
EXPLANATION_ROWS = [
    Row(
        "gives_another_score",
        _explanation("The score is 1 because coverage was the weaker axis."),
        _explanation(f"{WEAKER}."),
    ),
    Row(
        "states_a_wrong_share",
        _explanation(f"{WEAKER}: the summary answers 1 of 1 questions."),
        _explanation(f"{WEAKER}: the summary answers 1 of 2 questions."),
    ),
    Row(
        "unsupported_where_all_are",
        _explanation(f"{WEAKER}: one claim is unsupported by the source."),
        _explanation(f"{WEAKER}: no claim is unsupported by the source."),
    ),
    Row(
        "open_where_all_are_answered",
        _explanation("The score is 0.5 because the summary leaves out a question.", HALF_ALIGNED),
        _explanation("The score is 0.5 because the source does not support a claim.", HALF_ALIGNED),
    ),
    Row(
        "none_fails_where_one_does",
        _explanation(f"{WEAKER}: there are no unanswered questions."),
        _explanation(f"{WEAKER}: there are unanswered questions."),
    ),
    Row(
        "supported_where_none_is",
        _explanation("The score is 0 because the source supports the claim.", NONE_ALIGNED),
        _explanation("The score is 0 because the source supports no claim.", NONE_ALIGNED),
    ),
    Row(
        "answered_where_none_is",
        _explanation("The score is 0 because the summary answers the question.", NONE_COVERED),
        _explanation("The score is 0 because the summary answers no question.", NONE_COVERED),
    ),
    Row(
        "names_the_other_axis",
        _explanation("The score is 0.5 because alignment was the weaker axis."),
        _explanation(f"{WEAKER}."),
    ),
    Row(
        "states_what_no_verdict_carries",
        _explanation(f"{WEAKER}: the Mill Road bridge closes."),
        _explanation(f"{WEAKER}: the summary does not say the bridge reopens."),
    ),
    Row(
        "restates_an_unsupported_claim",
        _explanation(
            "The score is 0.5 because the council voted to close the Mill Road bridge forever.",
            HALF_ALIGNED,
        ),
        _explanation(
            "The score is 0.5 because the source does not support that the council voted to "
            "close the Mill Road bridge forever.",
            HALF_ALIGNED,
        ),
    ),
    Row(
        "turns_a_verdict_around",
        _explanation(
            "The score is 0.5 because the summary answers 12 as the day the bridge reopens."
        ),
        _explanation(
            "The score is 0.5 because the summary does not answer 12 as the day the bridge reopens."
        ),
    ),
]

TABLES: dict[str, tuple[tuple[Callable[[Any], Any], ...], list[Row]]] = {
    "reason": (REASON_CHECKS, REASON_ROWS),
    "quote": (QUOTE_CHECKS, QUOTE_ROWS),
    "explanation": (EXPLANATION_CHECKS, EXPLANATION_ROWS),
}
CASES = [
    pytest.param(table, row, id=f"{table}-{row.check}")
    for table, (_, rows) in TABLES.items()
    for row in rows
]


@pytest.mark.parametrize(("table", "row"), CASES)
def test_a_check_refuses_its_text_and_lets_the_other_through(table: str, row: Row) -> None:
    checks, _ = TABLES[table]
    refusal = first_refusal(checks, row.refused)
    assert refusal is not None and refusal.by == row.check, refusal
    check = next(c for c in checks if c.__name__ == row.check)
    assert check(row.passed) is None
    assert str(refusal).startswith(refusal.check)  # a person reads the phrase, not the name


def test_every_check_has_rows() -> None:
    """Each table's checks are exactly the checks with rows (the explanation table also runs
    the free-text checks, whose rows are the reason table's)."""
    named = {t: {c.__name__ for c in checks} for t, (checks, _) in TABLES.items()}
    rows = {t: {r.check for r in found} for t, (_, found) in TABLES.items()}
    assert named["reason"] == rows["reason"]
    assert named["quote"] == rows["quote"]
    assert named["explanation"] == rows["explanation"] | (named["reason"] & named["explanation"])
    assert rows["explanation"].isdisjoint(named["reason"])
