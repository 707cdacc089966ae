"""The checks of the judge's explanation of a result, as one ordered table.

An explanation is read as every free text is (`reason_checks.FREE_TEXT_CHECKS`: whole
sentences, known words, only the figures' numbers), then against the result it explains
(`misstated_result.MISSTATEMENT_CHECKS`: the score, the axis, what it says of the texts). The
library's own explanation and Mastra's (`serve/mastra_reason.py`) go through the same table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from offline_scorer.scorers.summarization.misstated_result import (
    MISSTATEMENT_CHECKS,
    ExplainedResult,
)
from offline_scorer.scorers.summarization.reason_checks import (
    FREE_TEXT_CHECKS,
    Allowance,
    FreeText,
    Judging,
)
from offline_scorer.scorers.summarization.refusal import Refusal, first_refusal


@dataclass(frozen=True)
class ExplanationText(FreeText):
    """An explanation under check: a free text about the facts it explains (its subject), and
    the `result` those facts state."""

    result: ExplainedResult


EXPLANATION_CHECKS: tuple[Callable[[ExplanationText], Refusal | None], ...] = (
    *FREE_TEXT_CHECKS,
    *MISSTATEMENT_CHECKS,
)
"""The table an explanation is checked by: as a free text first, then against its result."""


def explanation_problem(
    text: str, allowed: Allowance, about: str, result: ExplainedResult
) -> Refusal | None:
    """Why an explanation is not shown (None: it is): the first of `EXPLANATION_CHECKS` that
    refuses it, for an explanation of the facts `about` that may use what `allowed` allows."""
    return first_refusal(EXPLANATION_CHECKS, ExplanationText(text, allowed, Judging(about), result))
