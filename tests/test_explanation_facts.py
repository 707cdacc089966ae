"""An explanation states only what the verdicts say: its figures, names and words of the judged
texts must be those of a failing claim or question (or the result's figures)."""

from __future__ import annotations

import pytest

from offline_scorer.scorers.summarization.misstated_result import (
    ExplainedResult,
    misstates,
    uncarried,
)
from offline_scorer.scorers.summarization.refusal import Refusal

PAIR = (
    "Starbucks opened its first branch in Italy in 2018. Lavazza plans 40 new cafes by 2030. "
    "The group discussed ways to reduce costs of the remote control.\n"
    "Starbucks opened in Italy in 2018, and Lavazza plans new cafes."
)
FAILING = (
    "Is it true that Lavazza plans 40 new cafes by 2030?",
    "Is it true that the group discussed ways to reduce costs of the remote control?",
)
FIGURES = "0.5 1 1.0 0.5 1 1 1 2"


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        (
            "The score is 0.5 because coverage was the weaker axis: the summary answers 2030 as "
            "the year when Starbucks opened its first branch in Italy.",
            "2030, Italy, Starbucks",
        ),
        (
            "The score is 0.5 because coverage was the weaker axis: Starbucks opened in 2018.",
            "2018, Starbucks",
        ),
    ],
)
def test_numbers_and_names_no_single_failing_item_states_together_are_refused(
    text: str, detail: str
) -> None:
    refusal = uncarried(text, FAILING, FIGURES, PAIR)
    assert refusal is not None
    assert refusal.check == "states a fact no failing claim or question carries"
    assert refusal.detail == detail


def test_words_of_the_texts_beyond_the_failing_items_are_refused() -> None:
    text = "The score is 0.5 because coverage was the weaker axis: the first branch is omitted."
    refusal = uncarried(text, FAILING, FIGURES, PAIR)
    assert refusal is not None and refusal.detail == "branch, first"
    assert refusal.check == "speaks of the texts beyond the failing claims and questions"


@pytest.mark.parametrize(
    "text",
    [
        "The score is 0.5 because coverage was the weaker axis: the summary does not say that "
        "Lavazza plans 40 new cafes by 2030.",
        "The score is 0.5 because coverage was the weaker axis: the summary leaves out the "
        "ways to reduce costs that the group discussed.",
        "The score is 0.5 because it is aligned with the criteria only in part.",
    ],
)
def test_what_a_failing_item_carries_or_no_word_of_the_texts_passes(text: str) -> None:
    assert uncarried(text, FAILING, FIGURES, PAIR) is None


def test_misstates_checks_the_figures_first_and_then_what_the_verdicts_carry() -> None:
    wrong_score = "The score is 1 because the summary omits Starbucks."
    found = misstates(
        wrong_score, ExplainedResult(0.5, "coverage", (1.0, 0.5), FAILING, FIGURES, PAIR)
    )
    assert found is not None and found.check == "gives another score"
    beyond = "The score is 0.5 because coverage was the weaker axis: Starbucks opened in 2018."
    found = misstates(beyond, ExplainedResult(0.5, "coverage", (1.0, 0.5), FAILING, FIGURES, PAIR))
    assert found is not None and found.check.startswith("states a fact")
    assert (
        misstates(beyond, ExplainedResult(0.5, "coverage", (1.0, 0.5))) is None
    )  # without the items: unchecked


CLAIM = (
    "The group thought the production costs were too high, but they did not discuss any ways "
    "to reduce costs, such as leaving out certain features and using cheaper materials."
)


def test_an_unsupported_claim_restated_as_the_reason_is_refused() -> None:
    """The default judge's explanation of a dev row: the very claim it found unsupported, given
    as what happened."""
    text = (
        "The score is 0 because the group did not discuss any ways to reduce costs, such as "
        "leaving out certain features and using cheaper materials."
    )
    refusal = misstates(
        text,
        ExplainedResult(
            0, "alignment", (0, 1), failing=[CLAIM], figures="0 1", unsupported=[CLAIM]
        ),
    )
    assert (
        refusal is not None
        and refusal.check == "presents a claim the source does not support as true"
    )


def test_the_same_claim_named_as_unsupported_is_kept() -> None:
    text = (
        "The score is 0 because the claim that the group did not discuss ways to reduce costs, "
        "such as using cheaper materials, is not supported by the source."
    )
    assert (
        misstates(
            text,
            ExplainedResult(
                0, "alignment", (0, 1), failing=[CLAIM], figures="0 1", unsupported=[CLAIM]
            ),
        )
        is None
    )


def test_saying_nothing_fails_where_something_does_is_refused() -> None:
    text = "The score is 0 because there are no unsupported claims or unanswered questions."
    refusal = misstates(
        text,
        ExplainedResult(
            0, "alignment", (0, 1), failing=[CLAIM], figures="0 1", unsupported=[CLAIM]
        ),
    )
    assert refusal is not None and refusal.check == "says no claim or question fails where one does"
    assert (
        misstates(
            "The score is 1 because no claim is unsupported.", ExplainedResult(1, "none", (1, 1))
        )
        is None
    )


def test_answering_what_a_left_out_question_states_is_refused() -> None:
    """Mastra's printed reason through serve on fixture 02: 2019 is in a question the summary
    leaves out."""
    question = "Is it true that the Brennock seed bank donated 64 varieties in 2019?"
    text = (
        "The score is 0.33 because coverage was the weaker axis: the summary answers 2019 and "
        "2019, but leaves out the information about the seed cleaning workshop."
    )
    refusal = misstates(
        text, ExplainedResult(0.33, "coverage", (1, 0.33), failing=[question], figures="0.33 1")
    )
    assert refusal is not None
    assert refusal.check == "says the summary answers what a question it leaves out states"
    fine = "The score is 0.33 because the summary does not answer 2019 as the year of the gift."
    assert (
        misstates(
            fine, ExplainedResult(0.33, "coverage", (1, 0.33), failing=[question], figures="0.33 1")
        )
        is None
    )


def test_a_source_said_to_state_what_the_contradicting_claim_states_is_refused() -> None:
    claim = "The soup takes 50 minutes from start to finish."
    text = (
        "The score is 0.5 because alignment was the weaker axis: the claim about 50 minutes "
        "from start to finish contradicts the source, which reports 50 minutes."
    )
    refusal = misstates(
        text,
        ExplainedResult(
            0.5, "alignment", (0.5, 1), failing=[claim], figures="0.5 1", unsupported=[claim]
        ),
    )
    assert refusal is not None
    assert refusal.check == "says the source states what the claim it contradicts states"


def test_a_number_put_in_a_claim_that_does_not_state_it_is_refused() -> None:
    """Mastra's printed reason through serve on fixture 10: the claim says 45 minutes; 50 is a
    question's number."""
    claim = "Squash, red lentils, cumin and stock are simmered for 45 minutes, then blended."
    text = (
        "The score is 0.5 because alignment was the weaker axis: the claim about 50 minutes "
        "from start to finish contradicts the source, which reports 50 minutes."
    )
    question = "Is it true that it serves six and takes about 50 minutes from start to finish?"

    def judged(explanation: str) -> Refusal | None:
        return misstates(
            explanation,
            ExplainedResult(
                0.5,
                "alignment",
                (0.5, 0.71),
                failing=[claim, question],
                figures="0.5 1 0.71",
                unsupported=[claim],
            ),
        )

    refusal = judged(text)
    assert refusal is not None
    assert refusal.check == "says a claim states a number no claim it lists states"
    assert (
        judged("The score is 0.5 because the claim about 45 minutes contradicts the source.")
        is None
    )
