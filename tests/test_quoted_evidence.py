"""Quoted evidence (`quote_evidence`): a claim judged supported gives as its reason the source
sentence the judge points to, and a coverage question judged answered the summary sentence,
each whole. What is sent, what a reader is shown, and the grammar that holds the judge to it.
A scripted judge stands in for the model; the live check that P(true) is unchanged is in
test_live_judge.py."""

from __future__ import annotations

import pytest

from offline_scorer.backends.llama_cpp.gbnf import request_grammar
from offline_scorer.errors import ConfigError
from offline_scorer.scorers.summarization.evidence import (
    as_quote,
    quotable,
    quote_problem,
    quoted,
)
from offline_scorer.scorers.summarization.grounding import claims_of
from offline_scorer.scorers.summarization.options import ScorerOptions
from offline_scorer.scorers.summarization.readable import problem
from offline_scorer.scorers.summarization.reason_checks import Allowance, Judging
from offline_scorer.scorers.summarization.scorer import SummarizationScorer
from offline_scorer.scorers.summarization.sentence import vocabulary_of
from offline_scorer.testing import ScriptedJudge

SOURCE = (
    "The council voted 7 to 2 to close the bridge from April 3. "
    "Repairs will cost 2.4 million dollars. "
    "A free shuttle will run every 20 minutes."
)
SUMMARY = "The council voted to close the bridge. A shuttle will run every hour."
CLAIMS = claims_of(SUMMARY, clock_always_ends=False)
QUESTIONS = [
    "Is it true that the council voted 7 to 2 to close the bridge from April 3?",
    "Is it true that a free shuttle will run every 20 minutes?",
    "Is it true that repairs will cost 2.4 million dollars?",
]
VOTE_IN_SUMMARY = as_quote(CLAIMS[0], "summary")
VOTE_IN_SOURCE = as_quote(claims_of(SOURCE, clock_always_ends=False)[0], "source")


def scored(claim_reasons: list[str], reasons: list[str], answered: list[bool]):
    judge = ScriptedJudge(
        alignment=[
            {"claim": c, "supported": True, "reason": r}
            for c, r in zip(CLAIMS, claim_reasons, strict=True)
        ],
        questions=QUESTIONS,
        coverage=[
            {"question": q, "answered": a, "reason": r}
            for q, a, r in zip(QUESTIONS, answered, reasons, strict=True)
        ],
        reason="Scripted.",
    )
    options = ScorerOptions(free_text="open", one_by_one=True, quote_evidence=True)
    return judge, SummarizationScorer(judge, options).score_texts(SOURCE, SUMMARY)


def default_run():
    return scored(
        [VOTE_IN_SOURCE, VOTE_IN_SOURCE],
        [VOTE_IN_SUMMARY, VOTE_IN_SUMMARY, "The summary gives no cost."],
        [True, True, False],
    )


def test_an_affirmed_verdict_may_only_quote_a_sentence_of_its_text_about_its_subject():
    judge, _ = default_run()
    claim_requests = [r for r in judge.requests if r.step == "preprocess"][1:]
    question_requests = [r for r in judge.requests if r.step == "analyze"]
    assert len(claim_requests) == 2 and len(question_requests) == 3
    supported, unsupported = claim_requests[0].output_schema["anyOf"]
    assert supported["properties"]["supported"] == {"const": True}
    assert supported["properties"]["reason"]["enum"] == [VOTE_IN_SOURCE]
    assert unsupported["properties"]["supported"] == {"const": False}
    answered, left_out = question_requests[1].output_schema["anyOf"]
    assert answered["properties"]["answered"] == {"const": True}
    assert answered["properties"]["reason"]["enum"] == [
        'The summary says: "A shuttle will run every hour."'
    ]
    assert left_out["properties"]["answered"] == {"const": False}
    assert left_out["properties"]["reason"]["pattern"].startswith("^The summary")
    grammar = request_grammar(question_requests[1].output_schema)
    assert grammar is not None and grammar.startswith("root ::= root-0 | root-1\n")


def test_with_no_sentence_about_its_subject_every_reason_is_worded():
    """No summary sentence speaks of the repairs' cost: a judge that calls that question
    answered words its reason, and the reader checks read it as any other."""
    judge, _ = default_run()
    cost = [r for r in judge.requests if r.step == "analyze"][2]
    assert "anyOf" not in cost.output_schema
    assert cost.output_schema["properties"]["reason"]["pattern"].startswith("^The summary")


def test_the_grammar_offers_exactly_the_quotes_the_reader_checks_would_show():
    summary = (
        "The 1961 bridge will close for eleven weeks. Traffic will use the crossing. Dear John,"
    )
    question = "Is it true that the crossing, built in 1961, will remain shut for eleven weeks?"
    offered = quotable(question, summary, clock_always_ends=False)
    assert offered == (claims_of(summary, clock_always_ends=False)[0],)
    for sentence in claims_of(summary, clock_always_ends=False):
        assert (quote_problem(sentence, question, summary, clock_always_ends=False) is None) == (
            sentence in offered
        )


def test_a_quote_about_its_subject_is_shown_as_the_judges():
    _, result = default_run()
    assert result.analyze_step_result.coverage[0].reason == VOTE_IN_SUMMARY
    assert result.text_authors.coverage[0] == "model"
    assert result.preprocess_step_result.alignment[0].reason == VOTE_IN_SOURCE
    assert result.text_authors.alignment[0] == "model"


def test_a_quote_of_another_fact_is_replaced_and_marked():
    """The vote's sentences share no content word with the shuttle's claim or question; the
    grammar would not offer them, a recording made without it (or a scripted judge) may."""
    _, result = default_run()
    assert result.text_authors.coverage[1] == "product"
    assert result.analyze_step_result.coverage[1].reason != VOTE_IN_SUMMARY
    assert result.text_authors.alignment[1] == "product"


def test_a_quote_of_words_its_text_does_not_hold_is_not_a_quote():
    invented = 'The summary says: "The council voted 7 to 2 to close the bridge."'
    assert quoted(invented, SUMMARY, "summary", clock_always_ends=False) is None
    assert (
        quoted(VOTE_IN_SOURCE, SOURCE, "summary", clock_always_ends=False) is None
    )  # the source is not the summary
    assert quoted(VOTE_IN_SUMMARY, SUMMARY, "summary", clock_always_ends=False) == CLAIMS[0]
    _, result = scored(
        [VOTE_IN_SUMMARY, VOTE_IN_SOURCE],  # a claim's quote must be of the source
        [invented, invented, "The summary gives no cost."],
        [True, True, False],
    )
    assert result.text_authors.coverage[0] == "product"
    assert result.text_authors.alignment[0] == "product"


def test_a_quote_further_from_its_subject_than_another_sentence_is_refused():
    summary = "The 1961 bridge will close for eleven weeks. Traffic will use the crossing."
    question = "Is it true that the crossing, built in 1961, will remain shut for eleven weeks?"
    weeks, traffic = (as_quote(s, "summary") for s in claims_of(summary, clock_always_ends=False))
    vocabulary = vocabulary_of(summary, question)

    def why(text: str) -> str | None:
        found = problem(
            text, Allowance(40, vocabulary, summary), Judging(question, True, summary, "summary")
        )
        return None if found is None else found.check

    assert why(weeks) is None
    assert why(traffic) == "quotes a sentence further from what it judges than another"


def test_the_option_is_in_the_identity_only_when_on():
    assert "quote_evidence" not in ScorerOptions(one_by_one=True).identity()
    on = ScorerOptions(one_by_one=True, quote_evidence=True)
    assert on.identity()["quote_evidence"] is True
    assert ScorerOptions.from_mapping({"oneByOne": True, "quoteEvidence": True}) == on


def test_quoting_without_one_by_one_is_a_clear_error():
    with pytest.raises(ConfigError, match="set one_by_one too"):
        ScorerOptions(quote_evidence=True)
    with pytest.raises(ConfigError, match="quote_evidence must be true or false"):
        ScorerOptions(one_by_one=True, quote_evidence="yes")


def test_the_command_refuses_quotes_without_one_by_one_in_one_line():
    from tests.test_cli import assert_clean_error, run_cli

    pair = "fixtures/pairs/01-harbor-bridge"
    proc = run_cli(
        *("score", "--model", "smollm2-135m", "--quote-evidence", "true", "--one-by-one", "false"),
        *("--source", f"{pair}.source.txt", "--summary", f"{pair}.summary.txt"),
    )
    assert_clean_error(proc, 2, "set one_by_one too")
