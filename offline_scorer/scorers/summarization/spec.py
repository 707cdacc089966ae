"""The summarization scorer as a registered kind: what `eval`, `report`, `calibrate` and the
CLI read about it (entry point `summarization` of the `offline_scorer.scorers` group)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from offline_scorer.judging.protocol import Judge
from offline_scorer.scorers.protocol import Scorer
from offline_scorer.scorers.spec import ItemCalibration, ScorerSpec, VerdictColumn
from offline_scorer.scorers.summarization.describe import describe
from offline_scorer.scorers.summarization.examples import example_requests
from offline_scorer.scorers.summarization.options import ScorerOptions
from offline_scorer.scorers.summarization.result import ScorerResult
from offline_scorer.scorers.summarization.rule import AXES
from offline_scorer.scorers.summarization.scorer import REVISIONS, SummarizationScorer


def _build(judge: Judge, options: ScorerOptions) -> Scorer:
    return SummarizationScorer(judge, options)


def _unsupported_claims(result: Mapping[str, Any]) -> list[tuple[str, str]]:
    verdicts = result["preprocessStepResult"]["alignment"]
    return [(v["claim"], v.get("reason", "")) for v in verdicts if not v["supported"]]


def _unanswered_questions(result: Mapping[str, Any]) -> list[tuple[str, str]]:
    verdicts = result["analyzeStepResult"]["coverage"]
    return [(v["question"], v.get("reason", "")) for v in verdicts if not v["answered"]]


def _weakest_claim(result: Mapping[str, Any]) -> float | None:
    """The lowest P(supported) over the result's claims; None when it has none."""
    probabilities = result.get("verdictProbabilities")
    if not isinstance(probabilities, dict):
        return None
    values = [p for p in probabilities.get("alignment") or [] if p is not None]
    return min(values) if values else None


def _claim_probabilities(scorer: Scorer, run: Mapping[str, Any]) -> tuple[float, ...] | None:
    assert isinstance(scorer, SummarizationScorer)
    return scorer.claim_probabilities(run)


def _question_probabilities(
    scorer: Scorer, summary: str, questions: tuple[str, ...]
) -> tuple[float, ...] | None:
    assert isinstance(scorer, SummarizationScorer)
    return scorer.judge_coverage(summary, list(questions)).probabilities


SPEC = ScorerSpec(
    kind="summarization",
    title="Summarization (Mastra's Summarization Scorer)",
    options=ScorerOptions,
    result=ScorerResult,
    axes=AXES,
    label_fields={"faithful": "binary", "label": "binary", "human_score": "numeric"},
    judged_axis="alignment",
    build=_build,
    describe=describe,
    verdict_columns=(
        VerdictColumn("unsupported claims", _unsupported_claims),
        VerdictColumn("unanswered questions", _unanswered_questions),
    ),
    weakest_probability=_weakest_claim,
    calibration_probabilities=_claim_probabilities,
    item_calibration=ItemCalibration("coverage", "coverage_threshold", _question_probabilities),
    examples=example_requests,
    revisions=REVISIONS,
)
