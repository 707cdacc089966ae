"""What a person reads: the judge's texts when they are whole, true-looking sentences, the
product's plain sentence otherwise, and a result field saying which is which."""

from __future__ import annotations

import json

import pytest

from offline_scorer.scorers.summarization.describe import describe
from offline_scorer.scorers.summarization.readable import numbers_stated, problem
from offline_scorer.scorers.summarization.schemas import MAX_REASON_CHARS
from offline_scorer.scorers.summarization.sentence import LATIN, alphabet_of
from offline_scorer.testing import ScriptedJudge
from tests.helpers import SOURCE, SUMMARY, score_of

GOOD = "The source says the ferry carried forty passengers."
# 90 characters, the bound used below: the period came only because the bound did
CUT = "The source describes the ferry, its passengers, its crew and the captain of the vinylchlo."


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (GOOD, None),
        ("The source does not say when it left.", None),
        ("The score is", "is not whole sentences"),
        ("1. The ferry left Port Alder on time.", "is not whole sentences"),
        ("the ferry left Port Alder on time.", "is not whole sentences"),
        ("The ferry left at nine with 40 people.", "is not whole sentences"),
        ("The ferry ⅏ left Port Alder on time.", "is not whole sentences"),
        ("The ferry left Port Alder. 東京.", "is not whole sentences"),
        ("The score is.", "too short"),
        ("The ferry of the ferry of the ferry.", "repeats itself"),
        ("The ferry carried twelve passengers.", "states a number"),
        ("The ferry sailed on and sailed on and on.", "repeats itself"),
        (CUT[:-2] + ".", None),
        (CUT, "length bound"),
    ],
)
def test_a_text_is_shown_only_when_it_reads_as_whole_sentences(text: str, why: str | None) -> None:
    assert len(CUT) == 90
    found = problem(text, 90, LATIN, numbers_stated(SOURCE))
    assert (found is None) if why is None else (why in (found or "")), found


def test_numbers_are_read_in_words_and_digits() -> None:
    assert numbers_stated("Forty? No: 41 and twelve, half of them.") == {"40", "41", "12", "half"}
    assert numbers_stated(SOURCE) >= {"9", "3", "2021", "40"}


def test_letters_of_the_inputs_scripts_are_allowed() -> None:
    alphabet = alphabet_of("Паром вышел из порта.", SUMMARY)
    assert alphabet.scripts == ("CYRILLIC",)
    assert problem("Источник говорит то же самое здесь.", 90, alphabet, ()) is None
    assert problem("Источник говорит то же самое здесь.", 90, LATIN, ()) is not None


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
    explanation = "Alignment limits the score because the source never mentions the passengers."
    result = score_of(_judge([GOOD], [GOOD], explanation))
    data = json.loads(result.to_json())
    assert data["textAuthors"]["explanation"] == "model"
    assert data["reason"].endswith(f"Judge's explanation: {explanation}")
    assert data["preprocessStepResult"]["alignment"][0]["reason"] == GOOD
    assert "offline-scorer wrote 1 of the 4 texts" in describe(result)


def test_an_explanation_may_state_only_the_headline_figures() -> None:
    wrong = "Alignment limits the score because seven claims are unsupported."
    right = "Alignment limits the score because one claim is not supported."
    assert (
        json.loads(score_of(_judge([GOOD], [GOOD], wrong)).to_json())["textAuthors"]["explanation"]
        == "product"
    )
    assert (
        json.loads(score_of(_judge([GOOD], [GOOD], right)).to_json())["textAuthors"]["explanation"]
        == "model"
    )


def test_reason_bound_is_the_decoding_bound() -> None:
    text = "The source says " + "a" * (MAX_REASON_CHARS - 17) + "."
    assert len(text) == MAX_REASON_CHARS
    assert "length bound" in (problem(text, MAX_REASON_CHARS, LATIN, ()) or "")
