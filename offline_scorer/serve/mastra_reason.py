"""Mastra's explanation, vetted before Mastra prints it, as the library vets its own.

Mastra's reason step asks the judge to explain a result Mastra computed: its prompt gives the
score, both axes and the claims and questions behind them. The judge's reply is decoded under
a grammar (`mastra._reason`), which bounds its form, but a grammar cannot tell a true sentence
from "the summary answers 2 of 40,000 Lumenwick portable lamps are being recalled". So the
reply is read by the library's own checks (`explanation_checks.EXPLANATION_CHECKS`)
against the result read back from the prompt; one that fails is replaced by a sentence written
from that result, in Mastra's form, that says it is offline-scorer's and why the judge's was not
shown. The checks read only the prompt and the reply, so a replayed run prints the same bytes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from offline_scorer.scorers.summarization.explanation_checks import explanation_problem
from offline_scorer.scorers.summarization.misstated_result import ExplainedResult
from offline_scorer.scorers.summarization.reason_checks import Allowance
from offline_scorer.scorers.summarization.refusal import Refusal, noted
from offline_scorer.scorers.summarization.rule import LimitingAxis, limiting_axis
from offline_scorer.scorers.summarization.schemas import word_bounds
from offline_scorer.scorers.summarization.sentence import (
    Vocabulary,
    citing_numbers,
    vocabulary_of,
)

__all__ = [
    "REASON_START",
    "GivenResult",
    "axis_clause",
    "given_in",
    "parts",
    "read_given",
    "reason_problem",
    "reason_vocabulary",
    "shown_reason",
    "written_by_product",
    "written_reason",
]

REASON_START = "Explain the summarization score for the given summary.\n\nSource Text:\n"
REASON_END = "\n\nSummarization takes the lower of two scores"
EXAMPLES_START = "\n\nExample responses:"
FIGURES_START = "\n\nScore: "
QUESTIONS_START = "\nQuestions the summary cannot answer:\n"
_CLAIMS_START = "\nClaims the source does not support:\n"
_SCORES = re.compile(
    r"\n\nScore: (?P<score>\S+) out of \S+\nAlignment score: (?P<alignment>\S+)\n"
    r"Coverage score: (?P<coverage>\S+)\n"
)
_NONE = "- none"
PRODUCT_MARK = " (Written by offline-scorer in place of the judge's reason, which "
"""What follows the product's sentence in a reason it replaced: the judge's failed check."""


@dataclass(frozen=True)
class GivenResult:
    """The result Mastra asks the judge to explain, as its reason prompt gives it (`score` as
    Mastra writes it, `score_value` its number), and what an explanation of it may say: the
    prompt's words, the figures' numbers and the listed claims' and questions' numbers
    (`figures`; `scores` the figures alone), in at most `max_words` words; `texts` is the
    source and summary the prompt gives."""

    score: str
    score_value: float
    alignment: float
    coverage: float
    unsupported: tuple[str, ...]
    missing: tuple[str, ...]
    figures: str
    scores: str
    texts: str
    vocabulary: Vocabulary
    max_words: int

    @property
    def limiting_axis(self) -> LimitingAxis:
        """The axis that limits the score, by the library's rule (`rule.limiting_axis`)."""
        return limiting_axis(self.alignment, self.coverage)


def score_figures(given: str) -> list[str]:
    """The figures Mastra computed: the score lines (score, scale, the two axes) and how many
    claims and questions are listed."""
    figures = given[given.rfind(FIGURES_START) :]
    counted = figures.split(QUESTIONS_START)
    counts = [
        str(sum(ln.startswith("- ") and ln != _NONE for ln in part.splitlines()))
        for part in counted
    ]
    return [figures.split("\nClaims")[0], *counts]


def figure_texts(given: str) -> list[str]:
    """What an explanation may state in digits: the figures (`score_figures`) and the numbers
    in the listed claims and questions."""
    figures = given[given.rfind(FIGURES_START) :]
    listed = [line for line in figures.splitlines() if line.startswith("- ") and line != _NONE]
    return [*score_figures(given), *listed]


def reason_vocabulary(given: str, rules: str) -> Vocabulary:
    """The words of the inputs, listed claims and questions and the prompt's rules, and the
    figures' numbers: what the explanation is decoded under in the open style."""
    return citing_numbers(vocabulary_of(given, rules), *figure_texts(given))


def parts(user: str) -> tuple[str, str] | None:
    """(the given part: source, summary and figures; the rules) of Mastra's reason prompt;
    None for another prompt."""
    end = user.find(REASON_END)
    if not user.startswith(REASON_START) or end < 0:
        return None
    examples = user.find(EXAMPLES_START, end)
    return user[len(REASON_START) : end], user[end : examples if examples > 0 else len(user)]


def given_in(user: str, style: str) -> GivenResult | None:
    """The result Mastra's reason prompt `user` asks to explain, checked for a judge decoding
    in `style`; None for another prompt."""
    found = parts(user)
    return None if found is None else read_given(*found, style)


def read_given(given: str, rules: str, style: str) -> GivenResult | None:
    """The result in `given` (the prompt from the source to the figures' lists); None when its
    figures are not in Mastra's form, so nothing is checked against figures misread."""
    every = list(_SCORES.finditer(given))  # the last: a source may hold a line like Mastra's
    if not every:
        return None
    found = every[-1]
    try:
        score = float(found["score"])
        alignment, coverage = float(found["alignment"]), float(found["coverage"])
    except ValueError:
        return None
    lists = given[found.end() - 1 :]
    claims, _, questions = lists.partition(QUESTIONS_START)
    return GivenResult(
        score=found["score"],
        score_value=score,
        alignment=alignment,
        coverage=coverage,
        unsupported=_listed(claims.removeprefix(_CLAIMS_START)),
        missing=_listed(questions),
        figures=" ".join(figure_texts(given)),
        scores=" ".join(score_figures(given)),
        texts=given[: found.start()],
        vocabulary=reason_vocabulary(given, rules),
        max_words=word_bounds(style)[1],
    )


def _listed(block: str) -> tuple[str, ...]:
    return tuple(ln[2:] for ln in block.splitlines() if ln.startswith("- ") and ln != _NONE)


def reason_problem(given: GivenResult, text: str) -> Refusal | None:
    """Why Mastra may not print `text` as the judge's (None: it may): the library's checks of
    an explanation, against the figures Mastra gave."""
    result = ExplainedResult(
        given.score_value,
        given.limiting_axis,
        (given.alignment, given.coverage),
        failing=(*given.unsupported, *given.missing),
        figures=given.scores,
        pair=given.texts,
        unsupported=given.unsupported,
    )
    allowed = Allowance(given.max_words, given.vocabulary, given.figures)
    return explanation_problem(text, allowed, given.figures, result)


def shown_reason(given: GivenResult, text: str) -> str:
    """The judge's `text` if it passes the checks, else offline-scorer's sentence, marked."""
    refusal = noted(reason_problem(given, text), text, given.figures)
    if refusal is None:
        return text
    return f"{written_reason(given)}{PRODUCT_MARK}{refusal.check}.)"


def written_by_product(reason: str) -> bool:
    """Whether a reason Mastra printed is the product's sentence (`shown_reason` marks it)."""
    return PRODUCT_MARK in reason


def axis_clause(given: GivenResult) -> str:
    """What limits the score, as Mastra's worked examples say it ("coverage was the weaker
    axis"); empty when nothing does (a whole score needs no axis)."""
    return {
        "none": "",
        "alignment": "alignment was the weaker axis",
        "coverage": "coverage was the weaker axis",
        "both": "alignment and coverage were equally weak",
    }[given.limiting_axis]


def written_reason(given: GivenResult) -> str:
    """Mastra's form, "The score is S because ...", stated from the result alone: the axis
    that limits the score, and the claims or questions behind it (at most `NAMED` quoted)."""
    unsupported = f"the source does not support {_quoted(given.unsupported, 'claim')}"
    missing = f"the summary does not answer {_quoted(given.missing, 'question')}"
    behind = {
        "none": [],
        "alignment": [unsupported] if given.unsupported else [],
        "coverage": [missing] if given.missing else [],
        "both": [
            part
            for part, listed in ((unsupported, given.unsupported), (missing, given.missing))
            if listed
        ],
    }[given.limiting_axis]
    if given.limiting_axis == "none":
        because = (
            "every claim in the summary is supported by the source and the summary answers "
            "every question drawn from it"
        )
    else:
        because = axis_clause(given) + (f": {'; '.join(behind)}" if behind else "")
    return f"The score is {given.score} because {because}."


NAMED = 3
"""Claims or questions a product reason quotes; with more, it gives their number ("5 questions,
among them ..."): Mastra asks for a short explanation, and its result lists them all."""


def _quoted(items: tuple[str, ...], noun: str) -> str:
    named = "; ".join(f'"{item}"' for item in items[:NAMED])
    if len(items) <= NAMED:
        return named
    return f"{len(items)} {noun}s, among them {named}"
