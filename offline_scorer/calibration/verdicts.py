"""Calibrating a judge's verdict threshold on labelled rows (MiniCheck-style: P(yes) >= t).

A kind's judged axis (summarization: alignment) is 1 exactly when the weakest of its verdicts'
P(positive) reaches the threshold, so the threshold that best separates positive from negative
rows on "judged axis == 1" is the one that best separates them on that weakest probability.
The kind says how to get those probabilities with as few requests as it can (summarization:
the preprocess step only). Verdicts are committed one after another, so a later verdict's
probability can depend on an earlier one; a run with the new threshold can therefore differ
slightly from what calibration predicted, which is why `report` measures the judge again.

It sits above `batch/` (datasets) and `report/` (statistics) and knows no kind by name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from offline_scorer.batch.datasets import DataItem, RowError
from offline_scorer.calibration.registry_file import kind_table, write_document
from offline_scorer.errors import ConfigError, InputError
from offline_scorer.models.entry import BASE_KIND, AxisSignal, MeasuredQuality
from offline_scorer.report import stats
from offline_scorer.report.quality import binary_label
from offline_scorer.scorers.protocol import Scorer
from offline_scorer.scorers.spec import ScorerSpec


@dataclass(frozen=True)
class Labelled:
    id: str
    positive: bool  # the label: faithful, say
    weakest: float  # the smallest P(positive) over the verdicts that decide the judged axis


@dataclass(frozen=True)
class Calibration:
    threshold: float  # the one measured at, and written
    best_threshold: float  # the one that best separates these rows (== threshold unless kept)
    items: int
    skipped: int  # rows without a label, or without a verdict (a summary with no claim)
    roc_auc: float | None
    roc_auc_ci: tuple[float, float] | None
    balanced_accuracy: float
    balanced_accuracy_ci: tuple[float, float] | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "threshold": self.threshold,
            "best_threshold": self.best_threshold,
            "items": self.items,
            "skipped": self.skipped,
            "roc_auc": self.roc_auc,
            "roc_auc_ci": None if self.roc_auc_ci is None else list(self.roc_auc_ci),
            "balanced_accuracy": self.balanced_accuracy,
            "balanced_accuracy_ci": None
            if self.balanced_accuracy_ci is None
            else list(self.balanced_accuracy_ci),
        }


def label_of(spec: ScorerSpec, metadata: Mapping[str, Any]) -> bool | None:
    """The first of the kind's binary label fields the row has (true/false, 0/1)."""
    for name, kind in spec.label_fields.items():
        label = binary_label(metadata.get(name)) if kind == "binary" else None
        if label is not None:
            return label
    return None


def probability_reader(spec: ScorerSpec) -> Callable[[Scorer, Mapping[str, Any]], Any]:
    """The kind's calibration probabilities; a ConfigError when it has none."""
    read = spec.calibration_probabilities
    if read is None:
        raise ConfigError(f"the {spec.kind} scorer has no verdict threshold to calibrate")
    return read


def collect(
    rows: Iterable[DataItem | RowError],
    spec: ScorerSpec,
    scorer: Scorer,
    on_item: Callable[[], None] | None = None,
) -> tuple[list[Labelled], int]:
    """(labelled items with their weakest verdict's P(positive), rows skipped)."""
    read = probability_reader(spec)
    found: list[Labelled] = []
    skipped = 0
    for row in rows:
        if isinstance(row, RowError):
            raise InputError(row.message)
        label = label_of(spec, row.metadata)
        if label is None:
            skipped += 1
            continue
        probabilities = read(scorer, {"input": row.input, "output": row.output})
        if on_item is not None:
            on_item()
        if probabilities is None:
            raise ConfigError(
                "this judge gives no verdict probabilities, so it cannot be calibrated; use a "
                "backend that reads them (the built-in llama.cpp judge does)"
            )
        if not probabilities:
            skipped += 1
            continue
        found.append(Labelled(row.id, label, min(probabilities)))
    return found, skipped


def calibrate(
    items: Sequence[Labelled], skipped: int = 0, keep: float | None = None
) -> Calibration:
    """The threshold that best separates the rows, and the judge's quality measured there; with
    `keep`, the quality at that threshold instead (the best one is still reported). Keeping a
    threshold keeps every cassette key it is part of, so recorded runs replay as they were."""
    if len({item.positive for item in items}) < 2:
        raise InputError("calibration needs labelled rows of both kinds (positive and not)")
    scores = [item.weakest for item in items]
    labels = [item.positive for item in items]
    best = stats.best_threshold(scores, labels)
    assert best is not None  # both classes are present
    best_threshold = round(best[0], 4)
    threshold = best_threshold if keep is None else keep

    def accuracy(s: Sequence[float], y: Sequence[bool]) -> float | None:
        return stats.balanced_accuracy([v >= threshold for v in s], y)

    balanced = accuracy(scores, labels)
    assert balanced is not None
    return Calibration(
        threshold=threshold,
        best_threshold=best_threshold,
        items=len(items),
        skipped=skipped,
        roc_auc=stats.roc_auc(scores, labels),
        roc_auc_ci=_pair(stats.bootstrap_ci(stats.roc_auc, [scores, labels])),
        balanced_accuracy=balanced,
        balanced_accuracy_ci=_pair(stats.bootstrap_ci(accuracy, [scores, labels])),
    )


def _pair(interval: stats.Interval | None) -> tuple[float, float] | None:
    return None if interval is None else (interval.low, interval.high)


def measured_quality(
    result: Calibration, dataset: str, day: str, coverage: AxisSignal | None = None
) -> MeasuredQuality | None:
    """What a calibration measured, as the registry keeps it (None: no AUC was measurable);
    `coverage`, measured apart (benchmarks.coverage), is carried over unchanged."""
    if result.roc_auc is None or result.roc_auc_ci is None:
        return None
    return MeasuredQuality(
        dataset=dataset,
        rows=result.items,
        roc_auc=round(result.roc_auc, 3),
        roc_auc_low=round(result.roc_auc_ci[0], 3),
        roc_auc_high=round(result.roc_auc_ci[1], 3),
        balanced_accuracy=round(result.balanced_accuracy, 3),
        measured=day,
        coverage=coverage,
    )


def write_threshold(
    registry: Path,
    name: str,
    entry: Mapping[str, Any],
    threshold: float,
    quality: MeasuredQuality | None = None,
    kind: str = BASE_KIND,
) -> None:
    """Set `verdict_threshold` of scorer kind `kind` on model `name` in a registry file
    (`[models.NAME.scorers.KIND]`), keeping its comments, and with `quality` that table's
    `quality` (what the calibration measured). Every other kind's table is left as it was: a
    threshold measured with one kind's requests says nothing of another's
    (`registry_file.kind_table`)."""
    import tomlkit

    document, part = kind_table(registry, name, entry, kind)
    part["verdict_threshold"] = threshold
    if quality is not None:
        table = tomlkit.table()
        for key, value in quality.model_dump(exclude_none=True).items():
            table[key] = value
        part["quality"] = table
    write_document(registry, document)
