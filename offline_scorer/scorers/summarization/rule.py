"""The scoring rule, in one place: verdicts in, numbers out. No model, no I/O."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Literal

from offline_scorer.scorers.summarization.schemas import ClaimVerdict, QuestionVerdict

LimitingAxis = Literal["alignment", "coverage", "both", "none"]
AXES = ("alignment", "coverage")  # the sub-scores, in display order; the score is their minimum

NO_VERDICT_REASON = "The judge returned no verdict for this question; it counts as not answered."


@functools.lru_cache(maxsize=4096)
def round2(value: float) -> float | int:
    """Round half away from zero at two decimals; whole numbers come back as int (5, not 5.0).

    Decimal of the shortest repr keeps 0.665 -> 0.67, where binary float rounding gives 0.66.
    Cached: scores are ratios of small counts, so few values recur, and Decimal is slow.
    """
    rounded = Decimal(repr(float(value))).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    return int(rounded) if rounded == rounded.to_integral_value() else float(rounded)


def _ratio(part: int, whole: int) -> float:
    return min(part / whole, 1.0) if whole else 0.0


def align_verdicts(
    asked: Sequence[str], verdicts: Sequence[QuestionVerdict]
) -> list[QuestionVerdict]:
    """One verdict per asked question, by position: missing ones are 'not answered', extras go."""
    aligned = list(verdicts[: len(asked)])
    for question in asked[len(aligned) :]:
        aligned.append(QuestionVerdict(question=question, answered=False, reason=NO_VERDICT_REASON))
    return aligned


def limiting_axis(alignment: float, coverage: float) -> LimitingAxis:
    """The axis that limits min(alignment, coverage): the lower one, "both" when they are
    equal and below 1, "none" when both are whole. One rule for the library's result and for
    the result Mastra's reason prompt gives `serve`."""
    if alignment == coverage:
        return "none" if alignment >= 1 else "both"
    return "alignment" if alignment < coverage else "coverage"


@dataclass(frozen=True)
class ScoreOutcome:
    score: float | int
    alignment: float | int
    coverage: float | int
    scale: float | int
    supported_claims: int
    total_claims: int
    answered_questions: int
    asked_questions: int
    unsupported_claims: tuple[ClaimVerdict, ...]
    missing_questions: tuple[QuestionVerdict, ...]

    @property
    def limiting_axis(self) -> LimitingAxis:
        return limiting_axis(self.alignment, self.coverage)

    @property
    def nothing_to_score(self) -> str | None:
        """Why the score is 0 by rule rather than by verdicts, if it is."""
        if self.total_claims == 0:
            return "the summary yields no claims to judge"
        if self.asked_questions == 0:
            return "the source yields no questions to check coverage against"
        return None


def score_verdicts(
    claims: Sequence[ClaimVerdict],
    asked: Sequence[str],
    coverage: Sequence[QuestionVerdict],
    scale: float,
) -> ScoreOutcome:
    """`coverage` must already be aligned to `asked` (see align_verdicts)."""
    supported = sum(1 for c in claims if c.supported)
    answered = sum(1 for v in coverage if v.answered)
    alignment = _ratio(supported, len(claims))
    covered = _ratio(answered, len(asked))
    raw = 0.0 if not claims or not asked else min(alignment, covered)
    return ScoreOutcome(
        score=round2(raw * scale),
        alignment=round2(alignment),
        coverage=round2(covered),
        scale=round2(scale) if float(scale).is_integer() else scale,
        supported_claims=supported,
        total_claims=len(claims),
        answered_questions=answered,
        asked_questions=len(asked),
        unsupported_claims=tuple(c for c in claims if not c.supported),
        missing_questions=tuple(v for v in coverage if not v.answered),
    )
