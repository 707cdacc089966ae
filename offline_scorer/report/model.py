"""The aggregate of a run as typed models: what `aggregate` returns and every view reads.

The table, the page and `--json` all read one model, so a misspelt field is a type error rather
than a KeyError in one of them. `Aggregate.to_dict` gives the JSON object `report --json` and
`eval --json` print: its keys, their order and the numbers' types (an int score stays an int)
are a published format, so the models keep `int | float` where a results line may hold either.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from offline_scorer.batch.results import ItemError

# A score or axis value as a results line holds it: 1 and 1.0 print differently in the JSON.
Number = int | float


class _Frozen(BaseModel):
    """Computed once from the lines and never changed; unknown fields are a bug."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class Figure(_Frozen):
    """One judge-quality statistic with its bootstrap interval, all rounded to 4 places.

    `resamples` is how many resamples the interval rests on (fewer than asked when some
    resamples had one class only); 0 and None values when the statistic is undefined.
    """

    value: float | None
    low: float | None
    high: float | None
    resamples: int


class CountedFigure(_Frozen):
    """A figure over a subset of the items, which `items` counts (listed first in the JSON)."""

    items: int
    value: float | None
    low: float | None
    high: float | None
    resamples: int


class Excluded(_Frozen):
    """Items left out of the judge-quality figures, by reason."""

    failed: int
    missing: int
    invalid: int


class Confusion(_Frozen):
    """The scorer's rule against a binary label; positive means faithful."""

    tp: int
    fp: int
    tn: int
    fn: int


class _Quality(_Frozen):
    label: str
    kind: str
    items: int
    excluded: Excluded
    level: float
    resamples: int
    seed: int


class NumericQuality(_Quality):
    """Against a numeric label (a human score): rank correlations of the score and of the
    kind's judged axis (`axis`) with it."""

    kind: Literal["numeric"] = "numeric"
    axis: str
    spearman_score: Figure
    spearman_axis: Figure


class BinaryQuality(_Quality):
    """Against a binary label (faithful or not): ROC AUCs and the rule's accuracy."""

    kind: Literal["binary"] = "binary"
    axis: str
    positives: int
    negatives: int
    auc_axis: Figure
    auc_score: Figure
    rule: str
    balanced_accuracy: Figure
    confusion: Confusion
    auc_weakest_p: CountedFigure | None


Quality = Annotated[NumericQuality | BinaryQuality, Field(discriminator="kind")]


class LowestItem(_Frozen):
    """One of the lowest-scoring ok items; `axes` holds its value on each named axis."""

    id: str
    score: Number
    axes: dict[str, Number]
    limiting_axis: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "score": self.score,
            **self.axes,
            "limiting_axis": self.limiting_axis,
        }


class Failure(_Frozen):
    """A failed item: listed and counted, never averaged."""

    id: str
    line: int | None
    error: ItemError


class Aggregate(_Frozen):
    """Run-level numbers over the ok items of a results file.

    `axis_means` maps each named axis, in the run's order, to its mean; `limited_by` counts the
    ok items by limiting_axis value (the axes, then the ties). Means and medians are None, and
    min and max too, when no item scored.
    """

    count: int
    ok: int
    failed: int
    mean: float | None
    median: float | None
    min: Number | None
    max: Number | None
    axis_means: dict[str, float | None]
    limited_by: dict[str, int]
    lowest: list[LowestItem]
    failures: list[Failure]
    quality: Quality | None

    @property
    def axes(self) -> tuple[str, ...]:
        """The axes the aggregate was made with, in order."""
        return tuple(self.axis_means)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object `--json` prints: the means flattened to "<axis>_mean" keys."""
        return {
            "count": self.count,
            "ok": self.ok,
            "failed": self.failed,
            "mean": self.mean,
            "median": self.median,
            "min": self.min,
            "max": self.max,
            **{f"{axis}_mean": value for axis, value in self.axis_means.items()},
            "limited_by": dict(self.limited_by),
            "lowest": [row.to_dict() for row in self.lowest],
            "failures": [failure.model_dump() for failure in self.failures],
            "quality": None if self.quality is None else self.quality.model_dump(),
        }
