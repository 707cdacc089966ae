"""What a person reads: the judge's texts when they are whole, true-looking sentences, the
product's plain sentence otherwise, and a result field saying which is which."""

from __future__ import annotations

import json

import pytest

from offline_scorer.scorers.summarization.describe import describe
from offline_scorer.scorers.summarization.readable import problem
from offline_scorer.scorers.summarization.reason_checks import Allowance, Judging
from offline_scorer.scorers.summarization.refusal import watch
from offline_scorer.scorers.summarization.schemas import MAX_REASON_WORDS
from offline_scorer.scorers.summarization.sentence import GENERIC, vocabulary_of
from offline_scorer.scorers.summarization.stated_numbers import numbers_stated
from offline_scorer.testing import ScriptedJudge
from tests.helpers import SOURCE, SUMMARY, score_of

WORDS = vocabulary_of(SOURCE, SUMMARY, "The ferry carried twelve people and sailed on time.")
GOOD = "The source says the ferry left Port Alder with passengers."
# 12 words, the bound used below: the stop came only because the bound did
CUT = "The source says the ferry left Port Alder, with passengers, at May."


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (GOOD, None),
        ("The source does not say when it left.", None),
        ("The score is", "is not whole sentences"),
        ("1. The ferry left Port Alder on time.", "is not whole sentences"),
        ("the source says the ferry left Port Alder on time.", "does not start with a capital"),
        ("The source says the ferry left at nine with 40 people.", None),
        ("The source says the ferry left at nine with 41 people.", "states a number"),
        ("The ferry \u214f left Port Alder on time.", "is not whole sentences"),
        ("The source says the ferry left Port Alder, \u6771\u4eac.", "neither of the inputs"),
        ("The source says the ferry left with ilk ible passengers.", "of their language: 'ible'"),
        ("The source says the ferry departed punctually, as scheduled.", None),
        ("The source gives Alder's ferry no time of day.", None),  # a name's possessive
        ("The summary doesn't say the ferry departed.", None),
        ("The score is.", "too short"),
        ("The source says the ferry left Port Alder. These.", "sentence too short"),
        ("Is it true that about.", "too short"),
        ("The ferry is said to be on time, .", "is not whole sentences"),
        ("The source says the ferry left  on time.", "is not whole sentences"),
        ("The source says the ferry left with.", "cut short ends on: 'with'"),
        ("The source says the ferry left Port Alder with 40.", None),  # a number ends it
        ("Does the source say the ferry left on time?", "is not whole sentences"),
        ("The ferry of the source of the ferry of the source.", "repeats itself"),
        ("The source says the ferry carried twelve people.", "states a number"),
        ("The source says the ferry sailed and sailed and sailed on.", "repeats itself"),
        (CUT.replace(", at May", ""), None),
        (CUT, "word bound"),
    ],
)
def test_a_text_is_shown_only_when_it_reads_as_whole_sentences(text: str, why: str | None) -> None:
    assert len(CUT.split()) == 12
    found = problem(text, Allowance(12, WORDS, SOURCE))
    assert (found is None) if why is None else (why in str(found)), found


CLAIM = "A ferry left Port Alder with passengers."


@pytest.mark.parametrize(
    ("text", "verdict", "why"),
    [
        ("The source says the ferry left Port Alder with passengers.", True, None),
        ("The source does not say the ferry left Port Alder.", False, None),
        ("The source says the ferry left Port Alder, not Quillmarsh.", False, None),
        ("The source does not say the ferry left Port Alder.", True, "denies"),
        ("The answer to the claim about the ferry is yes.", False, "affirms"),
        ("The source says the ferry carried people and sailed in May.", True, "speaks mostly of"),
    ],
)
def test_a_reason_must_agree_with_its_verdict_and_speak_of_its_subject(
    text: str, verdict: bool, why: str | None
) -> None:
    found = problem(text, Allowance(MAX_REASON_WORDS, WORDS, SOURCE), Judging(CLAIM, verdict))
    assert (found is None) if why is None else (why in str(found)), found


QUESTION = "Is it true that the ferry was inspected by engineers from Quillmarsh in January?"
HOLDER = "The ferry, inspected by Quillmarsh engineers in January, left Port Alder."


@pytest.mark.parametrize(
    ("summary", "text", "verdict", "why"),
    [
        # the judge restates its question as if the summary said it: false, however readable
        (SUMMARY, "The summary states that engineers from Quillmarsh inspected it.", True, "holds"),
        (HOLDER, "The summary states that engineers from Quillmarsh inspected it.", True, None),
        # a denial reports an absence: nothing to find in the summary
        (SUMMARY, "The summary does not say that engineers inspected the ferry.", False, None),
    ],
)
def test_an_affirming_reason_speaks_of_what_its_text_holds(
    summary: str, text: str, verdict: bool, why: str | None
) -> None:
    words = vocabulary_of(summary, QUESTION)
    found = problem(
        text,
        Allowance(MAX_REASON_WORDS, words, summary),
        Judging(QUESTION, verdict, grounds=summary),
    )
    assert (found is None) if why is None else (why in str(found)), found


NEGATED = "Passengers will not need new tickets for the ferry."


@pytest.mark.parametrize(
    ("text", "verdict", "why"),
    [
        # the claim's own "not", restated, is no denial of the verdict
        ("The source says passengers will not need new tickets for the ferry.", True, None),
        ("The source does not say passengers will not need new tickets.", True, "denies"),
        ("The source says passengers will not need tickets, which is correct.", False, "affirms"),
    ],
)
def test_a_denying_word_the_subject_writes_is_not_a_denial(
    text: str, verdict: bool, why: str | None
) -> None:
    words = vocabulary_of(SOURCE, NEGATED)
    found = problem(text, Allowance(MAX_REASON_WORDS, words, SOURCE), Judging(NEGATED, verdict))
    assert (found is None) if why is None else (why in str(found)), found


def test_a_loop_is_read_over_words_and_numbers() -> None:
    source = "The council voted 7 to 2 to close the bridge."
    words = vocabulary_of(source)
    shown = "The source says the council voted 7 to 2 to close the bridge."
    assert problem(shown, Allowance(MAX_REASON_WORDS, words, source)) is None
    looped = "The source says the council voted to to close the bridge."
    assert "repeats" in str(problem(looped, Allowance(MAX_REASON_WORDS, words, source)))


def test_fact_nouns_count_in_what_a_reason_says_its_text_holds() -> None:
    question = "Is it true that the ferry's phone number will not change?"
    text = "The summary states that the ferry's phone number will not change."
    words = vocabulary_of(SUMMARY, question)
    found = problem(
        text, Allowance(MAX_REASON_WORDS, words, SUMMARY), Judging(question, True, grounds=SUMMARY)
    )
    assert "holds" in str(found), found


@pytest.mark.parametrize(
    ("text", "why"),
    [
        # the question's distance, said to be the summary's: false of a summary without it
        (
            "The summary states that traffic will use the Mill Road crossing, 2 kilometers away.",
            "number",
        ),
        ("The summary states that traffic will use the Mill Road crossing from April 3.", None),
    ],
)
def test_an_affirming_reason_states_only_numbers_its_text_holds(text: str, why: str | None) -> None:
    summary = "The bridge closes from April 3, and traffic will use the Mill Road crossing."
    question = "Is it true that traffic will use the Mill Road crossing, 2 kilometers upstream?"
    words = vocabulary_of(summary, question)
    # the question's numbers may be stated (numbers_from), but the reason says the summary holds it
    numbers_from = f"{summary}\n{question}"
    found = problem(
        text,
        Allowance(MAX_REASON_WORDS, words, numbers_from),
        Judging(question, True, grounds=summary),
    )
    assert (found is None) if why is None else (why in str(found)), found


SOUP_SOURCE = "Hanne Lorimer's lentil soup serves six and takes about 50 minutes."
SOUP_CLAIM = "Hanne Lorimer's lentil soup serves eight and takes about 50 minutes."


@pytest.mark.parametrize(
    ("text", "why"),
    [
        # six for the claim's eight, while saying the two agree: false
        (
            "The source states that the soup serves six and takes about 50 minutes, which "
            "matches the summary.",
            "in place of one it judges",
        ),
        # the claim's own numbers, and one more the source gives: no number replaced
        ("The source states that the soup takes about 50 minutes and serves six.", None),
    ],
)
def test_an_affirming_reason_gives_no_other_number_in_place_of_its_subjects(
    text: str, why: str | None
) -> None:
    claim = SOUP_CLAIM if why else "Hanne Lorimer's lentil soup takes about 50 minutes."
    words = vocabulary_of(SOUP_SOURCE, claim, "matches the summary")
    found = problem(
        text,
        Allowance(MAX_REASON_WORDS, words, SOUP_SOURCE),
        Judging(claim, True, grounds=SOUP_SOURCE),
    )
    assert (found is None) if why is None else (why in str(found)), found


def test_numbers_are_read_in_words_and_digits() -> None:
    assert numbers_stated("Forty? No: 41 and twelve, half of them.") == {"40", "41", "12", "half"}
    assert numbers_stated(SOURCE) >= {"9", "3", "2021", "40"}


def test_words_of_the_inputs_in_any_script_are_allowed() -> None:
    words = vocabulary_of("\u041f\u0430\u0440\u043e\u043c \u0432\u044b\u0448\u0435\u043b.", SUMMARY)
    text = "The source says \u043f\u0430\u0440\u043e\u043c \u0432\u044b\u0448\u0435\u043b."
    assert problem(text, Allowance(20, words, "")) is None
    assert problem(text, Allowance(20, GENERIC, "")) is not None


def _judge(
    claim_reasons: list[str], coverage_reasons: list[str], explanation: str
) -> ScriptedJudge:
    return ScriptedJudge(
        alignment=[
            {"claim": SUMMARY, "supported": False, "reason": claim_reasons[0]},
        ],
        questions=["Is it true that the ferry left Port Alder?", "Is it true that it rained?"],
        coverage=[
            {
                "question": "Is it true that the ferry left Port Alder?",
                "answered": True,
                "reason": coverage_reasons[0],
            },
        ],
        reason=explanation,
    )


def test_the_result_marks_which_texts_the_product_wrote() -> None:
    judge = _judge(
        ["1. East Palestine residents were told to leave the area at on"],
        ["The summary states that the ferry left Port Alder."],
        "The score is",
    )
    result = score_of(judge)
    data = json.loads(result.to_json())
    assert data["textAuthors"] == {
        "explanation": "product",
        "alignment": ["product"],
        "coverage": ["model", "product"],  # the second question got no verdict
    }
    claim = data["preprocessStepResult"]["alignment"][0]
    assert claim["reason"] == "The judge found that the source does not support this claim."
    assert claim["claim"] == SUMMARY and claim["supported"] is False  # the verdict is untouched
    assert data["analyzeStepResult"]["coverage"][0]["reason"] == (
        "The summary states that the ferry left Port Alder."
    )
    assert "Judge's explanation" not in data["reason"]
    assert data["reason"].endswith(
        "Explanation (written by offline-scorer): The judge found claims in the summary that "
        "the source does not support."
    )
    shown = describe(result)
    assert "offline-scorer wrote 3 of the 4 texts from the verdicts" in shown
    assert "The score is" not in shown.replace("The score is 0", "")


def test_the_judges_readable_explanation_is_shown_as_its_own() -> None:
    explanation = "Alignment limits the score because the source does not mention the passengers."
    result = score_of(_judge([GOOD], [GOOD], explanation))
    data = json.loads(result.to_json())
    assert data["textAuthors"]["explanation"] == "model"
    assert data["reason"].endswith(f"Judge's explanation: {explanation}")
    assert data["preprocessStepResult"]["alignment"][0]["reason"] == GOOD
    assert "offline-scorer wrote 1 of the 4 texts" in describe(result)


def test_an_explanation_may_state_only_the_computed_figures() -> None:
    def author(explanation: str) -> str:
        judge = _judge([GOOD], [GOOD], explanation)
        judge.answers["preprocess"]["alignment"][0]["claim"] = "One ferry left with forty people."
        return json.loads(score_of(judge).to_json())["textAuthors"]["explanation"]

    # "forty" is a word of the claim, so the grammar allows it, but it is no figure: 0 of 1
    assert author("Alignment limits the score because forty people is not supported.") == "product"
    assert author("Alignment limits the score because one claim is not supported.") == "model"
    assert author("Alignment limits the score because seven claims failed.") == "product"


def test_reason_bound_is_the_decoding_bound() -> None:
    words = "source says summary states claim mentions question asks text gives fact details"
    words += " date names number figures amount place time"
    text = f"The {words}."
    assert len(text.split()) == MAX_REASON_WORDS
    assert "word bound" in str(problem(text, Allowance(MAX_REASON_WORDS, GENERIC, "")))


def test_an_unknown_free_text_style_is_one_line(tmp_path) -> None:
    from tests.test_cli import assert_clean_error, run_cli

    source = tmp_path / "source.txt"
    source.write_text("The ferry left.", encoding="utf-8")
    proc = run_cli(
        "score", "--source", str(source), "--summary", str(source), "--free-text", "prose"
    )
    assert_clean_error(proc, 2, "free_text must be one of sentences, open, bounded, got 'prose'")


def test_a_reason_must_judge_and_be_about_its_subject() -> None:
    numbers = SOURCE
    assert "says nothing about" in str(
        problem("The ferry passengers are at Port Alder.", Allowance(20, WORDS, numbers))
    )
    assert "copies a question" in str(
        problem("Is it true that the source says the ferry left.", Allowance(20, WORDS, numbers))
    )
    assert "repeats itself" in str(
        problem("The source says the the ferry left.", Allowance(20, WORDS, numbers))
    )
    about_rain = "Is it true that it rained at sea?"
    assert "is not about what it judges" in str(
        problem(
            "The source says the ferry left Port Alder.",
            Allowance(20, WORDS, numbers),
            Judging(about_rain),
        )
    )
    assert problem(GOOD, Allowance(20, WORDS, numbers), Judging(SUMMARY)) is None


def _scored_zero_by_coverage(explanation: str) -> dict:
    judge = ScriptedJudge(
        alignment=[{"claim": SUMMARY, "supported": True, "reason": GOOD}],
        questions=["Is it true that the ferry left Port Alder?"],
        coverage=[
            {
                "question": "Is it true that the ferry left Port Alder?",
                "answered": False,
                "reason": "The summary does not say where the ferry left from.",
            }
        ],
        reason=explanation,
    )
    return json.loads(score_of(judge).to_json())


def test_mastras_reason_form_is_shown_verbatim() -> None:
    """Mastra's reason prompt asks for "The score is {score} because {reason}": a true sentence
    in that form, with the computed figure as a digit and words of its own, is the judge's."""
    explanation = "The score is 0 because coverage was the weaker axis."
    data = _scored_zero_by_coverage(explanation)
    assert data["score"] == 0
    assert data["textAuthors"]["explanation"] == "model"
    assert data["reason"].endswith(f"Judge's explanation: {explanation}")


@pytest.mark.parametrize(
    "explanation",
    [
        "The score is 0 because alignment was the weaker axis.",  # coverage limits it
        "The score is 1 because coverage was the weaker axis.",  # the score is 0
        "The score is 0 because coverage was the weakr axis.",  # not a word
    ],
)
def test_an_explanation_that_misstates_the_result_is_replaced(explanation: str) -> None:
    data = _scored_zero_by_coverage(explanation)
    assert data["textAuthors"]["explanation"] == "product"
    assert explanation not in data["reason"]


def test_a_refusal_is_counted_under_its_check_whatever_word_it_quotes():
    cut = problem("The summary states the facts of the source and.", Allowance(60, WORDS, SOURCE))
    other = problem(
        "The summary states the facts of the source with.", Allowance(60, WORDS, SOURCE)
    )
    assert cut is not None and other is not None and cut != other
    assert cut.check == other.check == "ends on a word a sentence cut short ends on"
    assert (cut.detail, other.detail) == ("'and'", "'with'")
    assert str(cut) == "ends on a word a sentence cut short ends on: 'and'"


def test_every_refusal_the_scorer_makes_is_seen_by_a_watcher_and_only_inside_its_block() -> None:
    """`refusal.watch` is how a benchmark counts refusals by check: it sees each text the scorer
    refused, with its check and subject, and changes nothing the scorer decides."""
    wrong_axis = "The score is 0 because alignment was the weaker axis."
    with watch() as refused:
        data = _scored_zero_by_coverage(wrong_axis)
    assert data == _scored_zero_by_coverage(wrong_axis)  # the same result unwatched
    assert [(r.refusal.check, r.text) for r in refused] == [
        (
            "ends on a word a sentence cut short ends on",
            "The summary does not say where the ferry left from.",
        ),
        ("names the axis that does not limit the score", wrong_axis),
    ]
    assert refused[0].subject == "Is it true that the ferry left Port Alder?"
    assert refused[1].subject is not None and "LIMITING AXIS: coverage" in refused[1].subject
    with watch() as outer:
        _scored_zero_by_coverage(wrong_axis)
        with watch() as inner:
            _scored_zero_by_coverage(wrong_axis)
    assert (len(outer), len(inner)) == (2, 2)  # a block sees its own, not a nested one's
