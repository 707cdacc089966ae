"""What was measured of a judge, defined once: the judged axis's figures (`MeasuredQuality`) and
each other axis's (`AxisSignal`), as a registry entry records them and a person reads them."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt

Count = Annotated[StrictInt, Field(ge=0)]
_COUNT = "a whole number >= 0"

Unit = Annotated[StrictFloat | StrictInt, Field(ge=0, le=1)]

MEASURE_HINT = (
    "use a judge with measured signal (`offline-scorer models list` shows each judge's "
    "figures; `offline-scorer models install NAME` installs one), or register your own GGUF "
    "and measure it with `offline-scorer calibrate LABELLED.jsonl --model NAME`"
)


Correlation = Annotated[StrictFloat | StrictInt, Field(ge=-1, le=1)]


class AxisSignal(BaseModel):
    """What was measured of one axis's verdicts on labelled items: whether P(true) separates
    true from false items (ROC AUC, the interval resampling whole cases), and, where
    `calibrate --axis` measured it on items people labelled (`cases` given), the balanced
    accuracy of the verdicts at the threshold and how the axis follows the share people found
    (Pearson and Spearman over cases), out of sample by document over `folds` folds (0: at a
    kept threshold, fit on none of them). An older table (`bench_coverage`, summaries made of
    known source sentences) gives `true_when_false` instead: the share of left-out facts
    judged answered."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    dataset: str = Field(description="the labelled set's name")
    verdicts: Count = Field(description=_COUNT)
    cases: Count | None = Field(None, description=_COUNT)
    roc_auc: Unit = Field(description="a number from 0 to 1")
    roc_auc_low: Unit = Field(description="a number from 0 to 1")
    roc_auc_high: Unit = Field(description="a number from 0 to 1")
    balanced_accuracy: Unit | None = Field(None, description="a number from 0 to 1")
    pearson: Correlation | None = Field(None, description="a number from -1 to 1")
    spearman: Correlation | None = Field(None, description="a number from -1 to 1")
    folds: Count | None = Field(None, description=_COUNT)
    true_when_false: Unit | None = Field(None, description="a number from 0 to 1")
    measured: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$", description="a date, YYYY-MM-DD")

    @property
    def at_chance(self) -> bool:
        return self.roc_auc_low <= 0.5 <= self.roc_auc_high

    def line(self, axis: str) -> str:
        """The figures as a person reads them, after the alignment figures."""
        auc = f"ROC AUC {self.roc_auc:.3f} [{self.roc_auc_low:.3f}, {self.roc_auc_high:.3f}]"
        if self.cases is None:
            left_out = "" if self.true_when_false is None else f", {self.true_when_false:.0%}"
            return (
                f"{axis} quality: {auc}{left_out} of left-out facts answered, on "
                f"{self.verdicts} verdicts of {self.dataset} ({self.measured})"
            )
        parts = [auc]
        if self.balanced_accuracy is not None:
            parts.append(f"balanced accuracy {self.balanced_accuracy:.3f}")
        if self.pearson is not None and self.spearman is not None:
            parts.append(
                f"{axis} vs people's share: Pearson {self.pearson:.3f}, Spearman "
                f"{self.spearman:.3f}"
            )
        sample = "out of sample" if self.folds else "at the kept threshold"
        return (
            f"{axis} quality: {', '.join(parts)}, on {self.verdicts} labelled items of "
            f"{self.cases} summaries of {self.dataset} (calibrate --axis {axis}, {sample}, "
            f"{self.measured})"
        )


def axis_warnings(axis: str, signal: AxisSignal) -> list[str]:
    """A line for a reader when an axis's verdicts carried no signal on labelled items."""
    if not signal.at_chance:
        return []
    left_out = (
        ""
        if signal.true_when_false is None
        else f", 'answered' for {signal.true_when_false:.0%} of facts left out"
    )
    return [
        f"warning: this judge's {axis} verdicts carried no signal on labelled items (ROC AUC "
        f"{signal.roc_auc:.3f} [{signal.roc_auc_low:.3f}, {signal.roc_auc_high:.3f}]"
        f"{left_out}): its {axis} axis is uninformative"
    ]


class MeasuredQuality(BaseModel):
    """What `calibrate` measured of a judge on labelled pairs: kept in its registry entry so
    that every score the judge gives can be shown beside what the judge is worth."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    dataset: str = Field(description="the labelled file's name")
    rows: Count = Field(description=_COUNT)
    roc_auc: Unit = Field(description="a number from 0 to 1")
    roc_auc_low: Unit = Field(description="a number from 0 to 1")
    roc_auc_high: Unit = Field(description="a number from 0 to 1")
    balanced_accuracy: Unit = Field(description="a number from 0 to 1")
    measured: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$", description="a date, YYYY-MM-DD")
    coverage: AxisSignal | None = Field(
        None, description="a table bench_coverage wrote (calibrate --axis now writes axes)"
    )

    @property
    def at_chance(self) -> bool:
        """Whether the AUC's 95% interval holds 0.5: no evidence the verdicts beat a coin."""
        return self.roc_auc_low <= 0.5 <= self.roc_auc_high

    def line(self) -> str:
        return (
            f"judge quality: ROC AUC {self.roc_auc:.3f} [{self.roc_auc_low:.3f}, "
            f"{self.roc_auc_high:.3f}], balanced accuracy {self.balanced_accuracy:.3f}, on "
            f"{self.rows} labelled pairs of {self.dataset} (calibrate, {self.measured})"
        )

    def warnings(self) -> list[str]:
        """A line for a reader when the verdicts were at chance on labelled data (the coverage
        figures' own warning is `axis_warnings`, shown with `KindPart.figures`)."""
        found = []
        if self.at_chance:
            found.append(
                "warning: this judge's verdicts were at chance on labelled data (the interval "
                f"of its ROC AUC holds 0.5): do not read these scores as evidence; {MEASURE_HINT}"
            )
        return found
