"""An explanation states only what the verdicts say: its figures, names and words of the judged
texts must be those of a failing claim or question (or the result's figures)."""

from __future__ import annotations

import pytest

from offline_scorer.scorers.summarization.misstated_result import misstates, uncarried

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
    found = misstates(wrong_score, 0.5, "coverage", (1.0, 0.5), FAILING, FIGURES, PAIR)
    assert found is not None and found.check == "gives another score"
    beyond = "The score is 0.5 because coverage was the weaker axis: Starbucks opened in 2018."
    found = misstates(beyond, 0.5, "coverage", (1.0, 0.5), FAILING, FIGURES, PAIR)
    assert found is not None and found.check.startswith("states a fact")
    assert misstates(beyond, 0.5, "coverage", (1.0, 0.5)) is None  # without the items: unchecked


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
        text, 0, "alignment", (0, 1), failing=[CLAIM], figures="0 1", unsupported=[CLAIM]
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
        misstates(text, 0, "alignment", (0, 1), failing=[CLAIM], figures="0 1", unsupported=[CLAIM])
        is None
    )


def test_saying_nothing_fails_where_something_does_is_refused() -> None:
    text = "The score is 0 because there are no unsupported claims or unanswered questions."
    refusal = misstates(
        text, 0, "alignment", (0, 1), failing=[CLAIM], figures="0 1", unsupported=[CLAIM]
    )
    assert refusal is not None and refusal.check == "says no claim or question fails where one does"
    assert misstates("The score is 1 because no claim is unsupported.", 1, "none", (1, 1)) is None
