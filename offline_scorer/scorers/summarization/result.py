"""The scorer's result, defined once as a pydantic model in Mastra's field names and key order.

The dict, the JSON bytes, the published JSON schema and the report's validation of results
files are all derived from `ScorerResult`; nothing else spells the shape out.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from offline_scorer import jsontext
from offline_scorer.scorers.summarization.readable import Author
from offline_scorer.scorers.summarization.rule import AXES, ScoreOutcome
from offline_scorer.scorers.summarization.schemas import ClaimVerdict, QuestionVerdict

PROBABILITY_PLACES = 4

Probability = Annotated[float, Field(ge=0, le=1)]


class _Part(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        populate_by_name=True,
        json_schema_serialization_defaults_required=True,
    )


class PreprocessStepResult(_Part):
    alignment: tuple[ClaimVerdict, ...]
    questions: tuple[str, ...]


class AnalyzeStepResult(_Part):
    coverage: tuple[QuestionVerdict, ...]  # exactly one per asked question, by position


class VerdictProbabilities(_Part):
    """The judge's P(true) behind each verdict, beside Mastra's fields (which stay as they are).

    `alignment[i]` belongs to claim i, `coverage[i]` to coverage verdict i; None where the judge
    gave no probability (a verdict the judge never returned counts as "not answered").
    `threshold` is the P(true) at or above which the judge committed to `true`;
    `coverageThreshold`, present only when the coverage verdicts were committed at another
    one (the scorer option `coverage_threshold`), is theirs.
    """

    threshold: Probability | None
    alignment: tuple[Probability | None, ...]
    coverage: tuple[Probability | None, ...]
    coverage_threshold: Probability | None = Field(
        None, alias="coverageThreshold", exclude_if=lambda value: value is None
    )

    @classmethod
    def aligned(
        cls,
        threshold: float | None,
        found: tuple[tuple[float, ...] | None, tuple[float, ...] | None],
        counts: tuple[int, int],
        coverage_threshold: float | None = None,
    ) -> VerdictProbabilities:
        """P(true) of each claim and question as the judge gave them (`found`: supported, then
        answered; None: none given), fitted to the verdicts' `counts` (claims, then asked
        questions): cut to the count, or filled with None."""
        supported, answered = found
        claims, asked = counts

        def fit(values: tuple[float, ...] | None, count: int) -> tuple[float | None, ...]:
            kept = [round(v, PROBABILITY_PLACES) for v in (values or ())[:count]]
            return (*kept, *([None] * (count - len(kept))))

        return cls(
            threshold=threshold,
            alignment=fit(supported, claims),
            coverage=fit(answered, asked),
            coverage_threshold=coverage_threshold,
        )

    @property
    def min_supported(self) -> float | None:
        """The weakest claim's P(supported): alignment is 1 exactly when it clears the threshold."""
        known = [p for p in self.alignment if p is not None]
        return min(known) if known else None


class TextAuthors(_Part):
    """Who wrote each text a person reads, beside Mastra's fields (which keep their meaning).

    "model": the judge's own words. "product": a plain sentence offline-scorer wrote from the
    verdict, because the judge's text failed the readability checks (`readable`) or no verdict
    came back. `alignment[i]` is claim i's reason, `coverage[i]` coverage verdict i's, and
    `explanation` the part of `reason` after the headline.
    """

    explanation: Author
    alignment: tuple[Author, ...]
    coverage: tuple[Author, ...]

    @property
    def product_written(self) -> int:
        return [self.explanation, *self.alignment, *self.coverage].count("product")

    @property
    def texts(self) -> int:
        return 1 + len(self.alignment) + len(self.coverage)


class ScorerResult(_Part):
    """Mastra's result object, plus `verdictProbabilities` and `textAuthors`; `outcome` is for
    display only."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    score: Annotated[float | int, Field(ge=0)]
    reason: str
    preprocess_step_result: PreprocessStepResult = Field(alias="preprocessStepResult")
    analyze_step_result: AnalyzeStepResult = Field(alias="analyzeStepResult")
    verdict_probabilities: VerdictProbabilities | None = Field(None, alias="verdictProbabilities")
    text_authors: TextAuthors | None = Field(None, alias="textAuthors")
    # derived numbers, for display; not serialised (the spec derives them from the verdicts)
    outcome: ScoreOutcome | None = Field(None, exclude=True)

    @model_validator(mode="after")
    def _one_entry_per_verdict(self) -> ScorerResult:
        for field, found in (
            ("verdictProbabilities", self.verdict_probabilities),
            ("textAuthors", self.text_authors),
        ):
            if found is None:
                continue
            for key, verdicts in (
                ("alignment", self.preprocess_step_result.alignment),
                ("coverage", self.analyze_step_result.coverage),
            ):
                count = len(getattr(found, key))
                if count != len(verdicts):
                    raise ValueError(
                        f"{field}.{key} has {count} entries for {len(verdicts)} {key} verdicts"
                    )
        return self

    @property
    def numbers(self) -> ScoreOutcome:
        """The derived numbers; only a result the scorer built has them (a parsed one does not)."""
        if self.outcome is None:
            raise ValueError("this result was read back from JSON and carries no derived numbers")
        return self.outcome

    @property
    def axes(self) -> dict[str, float | int]:
        """The named sub-scores a batch run and a report show beside the score."""
        if self.outcome is None:
            return {}
        return {axis: getattr(self.outcome, axis) for axis in AXES}

    @property
    def limiting_axis(self) -> str | None:
        return None if self.outcome is None else self.outcome.limiting_axis

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)

    def to_json(self) -> str:
        """Stable bytes: Mastra's key order, UTF-8 text kept as is, two-space indent."""
        numbers: list[float | int] = [self.score]
        if (found := self.verdict_probabilities) is not None:
            thresholds = (found.threshold, found.coverage_threshold)
            numbers += [p for p in (*thresholds, *found.alignment, *found.coverage) if p]
        return jsontext.indented(self.to_dict(), numbers)


def result_json_schema() -> dict[str, Any]:
    """The JSON schema of `ScorerResult.to_dict()`, derived from the model."""
    schema = ScorerResult.model_json_schema(by_alias=True, mode="serialization")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


RESULT_JSON_SCHEMA: dict[str, Any] = result_json_schema()
