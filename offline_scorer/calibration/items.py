"""Calibrating the verdicts a kind gives on listed items, against people's label of each item.

Coverage is the case: a summary and the questions asked of it, each labelled by people (does
the summary state this fact?). The judge gives P(answered) per question; the threshold that
best separates the labelled items is the kind's `coverage_threshold` on this judge. What a
person wants to know of it is measured beside it: how well P(answered) separates the items
(ROC AUC, with an interval that resamples whole cases, since one summary's verdicts are not
independent), the balanced accuracy of the verdicts at the threshold, and how well the axis
(the share of a case's items judged positive) follows the share people found (Pearson and
Spearman over cases).

Measured on the rows it was fit on, the threshold would flatter itself; so the figures are
out of sample: the cases are split into folds by their document (the id before its first
"/": two summaries of one article never sit on both sides), each fold is judged at the
threshold fit on the others, and the figures are taken over all folds. The threshold shipped
is the one fit on every case.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from offline_scorer.calibration.registry_file import kind_table, write_document
from offline_scorer.errors import ConfigError, InputError
from offline_scorer.models.entry import AxisSignal
from offline_scorer.report import stats
from offline_scorer.scorers.protocol import Scorer
from offline_scorer.scorers.spec import ItemCalibration, ScorerSpec

DEFAULT_FOLDS = 5


@dataclass(frozen=True)
class ItemCase:
    """One labelled case: a text (a summary), its items (questions) and a label for each."""

    id: str
    text: str
    items: tuple[str, ...]
    labels: tuple[bool, ...]

    @property
    def group(self) -> str:
        """The document the case belongs to: its id before the first "/"."""
        return self.id.split("/", 1)[0]


def _case(row: Any, where: str) -> ItemCase:
    if not isinstance(row, dict):
        raise InputError(f"{where}: expected a JSON object with id, summary, questions, labels")
    missing = [k for k in ("id", "summary", "questions", "labels") if k not in row]
    if missing:
        raise InputError(
            f"{where}: missing {', '.join(missing)} (a coverage row is "
            '{"id", "summary", "questions": [...], "labels": [true/false, ...]})'
        )
    questions, labels = row["questions"], row["labels"]
    if not isinstance(row["summary"], str) or not isinstance(questions, list):
        raise InputError(f"{where}: summary must be text and questions a list of texts")
    if not all(isinstance(q, str) and q.strip() for q in questions):
        raise InputError(f"{where}: every question must be a non-empty text")
    if not isinstance(labels, list) or not all(isinstance(y, bool) for y in labels):
        raise InputError(f"{where}: labels must be a list of true/false, one per question")
    if len(labels) != len(questions) or not questions:
        raise InputError(
            f"{where}: {len(questions)} questions and {len(labels)} labels; give one label "
            "per question, and at least one question"
        )
    return ItemCase(str(row["id"]), row["summary"], tuple(questions), tuple(labels))


def read_item_cases(path: Path) -> list[ItemCase]:
    """The labelled cases of a JSON-lines file, each line checked (`InputError` naming the
    line and what to give)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror or error}") from None
    cases: list[ItemCase] = []
    seen: set[str] = set()
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}, line {number}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise InputError(f"{where}: not JSON ({error.msg})") from None
        case = _case(row, where)
        if case.id in seen:
            raise InputError(f"{where}: id {case.id!r} given twice; ids must be unique")
        seen.add(case.id)
        cases.append(case)
    if not cases:
        raise InputError(f"{path} has no rows")
    return cases


@dataclass(frozen=True)
class ScoredCase:
    case: ItemCase
    probabilities: tuple[float, ...]


def item_reader(spec: ScorerSpec) -> ItemCalibration:
    """The kind's item calibration; a ConfigError when it has none."""
    found = spec.item_calibration
    if found is None:
        raise ConfigError(f"the {spec.kind} scorer has no axis of labelled items to calibrate")
    return found


def collect_items(
    cases: Iterable[ItemCase],
    spec: ScorerSpec,
    scorer: Scorer,
    on_case: Callable[[], None] | None = None,
) -> list[ScoredCase]:
    """Each case with the judge's P(positive) of each of its items."""
    read = item_reader(spec).probabilities
    found = []
    for case in cases:
        probabilities = read(scorer, case.text, case.items)
        if probabilities is None:
            raise ConfigError(
                "this judge gives no verdict probabilities, so it cannot be calibrated; use a "
                "backend that reads them (the built-in llama.cpp judge does)"
            )
        found.append(ScoredCase(case, tuple(probabilities)))
        if on_case is not None:
            on_case()
    return found


@dataclass(frozen=True)
class ItemsCalibration:
    """What calibrating an axis on labelled items found. `threshold` is the one written (fit on
    every case, or kept); the other figures are out of sample unless `folds` is 0 (a kept
    threshold, fit on none of these cases)."""

    axis: str
    threshold: float
    best_threshold: float
    cases: int
    items: int
    positives: int
    roc_auc: float | None
    roc_auc_ci: tuple[float, float] | None
    balanced_accuracy: float | None
    pearson: float | None
    spearman: float | None
    axis_mean: float
    human_mean: float
    folds: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "axis": self.axis,
            "threshold": self.threshold,
            "best_threshold": self.best_threshold,
            "cases": self.cases,
            "items": self.items,
            "positives": self.positives,
            "roc_auc": self.roc_auc,
            "roc_auc_ci": None if self.roc_auc_ci is None else list(self.roc_auc_ci),
            "balanced_accuracy": self.balanced_accuracy,
            "pearson": self.pearson,
            "spearman": self.spearman,
            "axis_mean": self.axis_mean,
            "human_mean": self.human_mean,
            "folds": self.folds,
        }


def _fold_of(group: str, folds: int) -> int:
    """A document's fold: from its name's digest, so it does not depend on the file's order."""
    return int.from_bytes(hashlib.sha256(group.encode("utf-8")).digest()[:8], "big") % folds


def _fit(scored: Sequence[ScoredCase]) -> float:
    scores = [p for s in scored for p in s.probabilities]
    labels = [y for s in scored for y in s.case.labels]
    best = stats.best_threshold(scores, labels)
    if best is None:
        raise InputError("calibration needs labelled items of both kinds (true and false)")
    return round(best[0], 4)


def _share(values: Sequence[bool]) -> float:
    return sum(values) / len(values)


def calibrate_items(
    scored: Sequence[ScoredCase],
    axis: str,
    folds: int = DEFAULT_FOLDS,
    keep: float | None = None,
) -> ItemsCalibration:
    """The threshold that best separates the labelled items (or `keep`, to measure the judge
    at its current one), and the figures at it, out of sample by document (see the module)."""
    if len(scored) < 2:
        raise InputError("calibration needs at least two labelled cases")
    best = _fit(scored)
    groups = sorted({s.case.group for s in scored})
    if keep is None and len(groups) < folds:
        raise InputError(
            f"out-of-sample figures need at least {folds} documents (ids before their first "
            f'"/"); these rows have {len(groups)}: pass fewer --folds'
        )
    at: dict[str, float] = {}
    if keep is not None:
        at = {s.case.id: keep for s in scored}
    else:
        for fold in range(folds):
            train = [s for s in scored if _fold_of(s.case.group, folds) != fold]
            held = [s for s in scored if _fold_of(s.case.group, folds) == fold]
            if not held:
                continue
            fitted = _fit(train)
            at.update((s.case.id, fitted) for s in held)
    scores = [p for s in scored for p in s.probabilities]
    labels = [y for s in scored for y in s.case.labels]
    predicted = [p >= at[s.case.id] for s in scored for p in s.probabilities]
    axis_values = [_share([p >= at[s.case.id] for p in s.probabilities]) for s in scored]
    human = [_share(s.case.labels) for s in scored]
    per_case = [list(s.probabilities) for s in scored]
    per_labels = [list(s.case.labels) for s in scored]

    def pooled_auc(cases: list[list[float]], case_labels: list[list[bool]]) -> float | None:
        return stats.roc_auc([p for c in cases for p in c], [y for c in case_labels for y in c])

    interval = stats.bootstrap_ci(pooled_auc, [per_case, per_labels])
    return ItemsCalibration(
        axis=axis,
        threshold=best if keep is None else keep,
        best_threshold=best,
        cases=len(scored),
        items=len(labels),
        positives=sum(labels),
        roc_auc=stats.roc_auc(scores, labels),
        roc_auc_ci=None if interval is None else (interval.low, interval.high),
        balanced_accuracy=stats.balanced_accuracy(predicted, labels),
        pearson=stats.pearson(axis_values, human),
        spearman=stats.spearman(axis_values, human),
        axis_mean=sum(axis_values) / len(axis_values),
        human_mean=sum(human) / len(human),
        folds=0 if keep is not None else folds,
    )


def per_case_lines(scored: Sequence[ScoredCase], threshold: float) -> Iterable[str]:
    """One JSON line per case: its items' labels and P(positive), and the axis at `threshold`
    beside the human share (to see which cases the judge gets wrong)."""
    for s in scored:
        values = [p >= threshold for p in s.probabilities]
        yield (
            json.dumps(
                {
                    "id": s.case.id,
                    "labels": list(s.case.labels),
                    "p_true": list(s.probabilities),
                    "axis": _share(values),
                    "human": _share(s.case.labels),
                }
            )
            + "\n"
        )


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def item_quality(result: ItemsCalibration, dataset: str, day: str) -> AxisSignal | None:
    """What was measured, as the registry keeps it (None: no AUC was measurable)."""
    if result.roc_auc is None or result.roc_auc_ci is None:
        return None
    return AxisSignal(
        dataset=dataset,
        verdicts=result.items,
        cases=result.cases,
        roc_auc=round(result.roc_auc, 3),
        roc_auc_low=round(result.roc_auc_ci[0], 3),
        roc_auc_high=round(result.roc_auc_ci[1], 3),
        balanced_accuracy=_round(result.balanced_accuracy),
        pearson=_round(result.pearson),
        spearman=_round(result.spearman),
        folds=result.folds,
        measured=day,
    )


def write_item_threshold(
    registry: Path,
    name: str,
    entry: Mapping[str, Any],
    kind: str,
    calibration: ItemCalibration,
    threshold: float,
    quality: AxisSignal | None,
) -> None:
    """Set the kind's option that holds the items' threshold (`coverage_threshold`) on model
    `name` in a registry file, and with `quality` the kind's table of what was measured of
    that axis (`[models.NAME.scorers.KIND.axes.AXIS]`), keeping the file's comments
    (`registry_file.kind_table`)."""
    import tomlkit

    document, part = kind_table(registry, name, entry, kind)
    options = part.setdefault("options", tomlkit.table())
    options[calibration.option] = threshold
    if quality is not None:
        axes = part.setdefault("axes", tomlkit.table(is_super_table=True))
        table = tomlkit.table()
        for key, value in quality.model_dump(exclude_none=True).items():
            table[key] = value
        axes[calibration.axis] = table
    write_document(registry, document)
