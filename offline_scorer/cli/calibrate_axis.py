"""`offline-scorer calibrate --axis AXIS`: the threshold of an axis's verdicts, from items
people labelled one by one (coverage: does this summary state this fact?)."""

from __future__ import annotations

import datetime
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from offline_scorer.errors import ConfigError, InputError

if TYPE_CHECKING:
    from offline_scorer.assembly.run_spec import RunSpec
    from offline_scorer.calibration import ItemsCalibration
    from offline_scorer.models.registry import ModelSpec


def _ci(ci: tuple[float, float] | None) -> str:
    return "" if ci is None else f" (95% CI {ci[0]:.3f}-{ci[1]:.3f}, cases resampled)"


def _f(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def calibrate_axis(
    run: RunSpec,
    labelled: Path,
    axis: str,
    folds: int,
    keep_threshold: bool,
    per_row: Path | None,
    as_json: bool,
    target: Path | None,
) -> None:
    """Judge every labelled item, fit the threshold, show the figures and, unless `target` is
    None, write the threshold and the figures to that registry."""
    from tqdm import tqdm

    from offline_scorer.calibration import calibrate_items, collect_items, read_item_cases
    from offline_scorer.calibration.items import item_reader, per_case_lines

    calibration = item_reader(run.spec)
    if axis != calibration.axis:
        raise InputError(
            f"the {run.kind} scorer calibrates --axis {calibration.axis}, not {axis!r}"
        )
    cases = read_item_cases(labelled)
    backend = run.backend()
    if not backend.verdict_probabilities:
        raise ConfigError(
            f"the {backend.name} backend gives no verdict probabilities, so it cannot be "
            "calibrated; calibrate with --backend llama_cpp (the default)"
        )
    opened, model_spec = run.open_judge()
    current = getattr(run.options, calibration.option, None)
    kept = float(current if current is not None else model_spec.verdict_threshold)
    with opened:
        bar = tqdm(total=len(cases), unit="case", disable=not sys.stderr.isatty(), file=sys.stderr)

        def tick() -> None:
            bar.update(1)

        try:
            scored = collect_items(cases, run.spec, run.scorer_on(opened), tick)
        finally:
            bar.close()
    result = calibrate_items(scored, axis, folds, kept if keep_threshold else None)
    if per_row is not None:
        per_row.write_text("".join(per_case_lines(scored, result.threshold)), encoding="utf-8")
    _show(result, model_spec, calibration.option, kept, as_json, target)
    if target is not None:
        _write(target, result, model_spec, run, labelled)


def _show(
    result: ItemsCalibration,
    model_spec: ModelSpec,
    option: str,
    before: float,
    as_json: bool,
    target: Path | None,
) -> None:
    if as_json:
        shown = {
            "model": model_spec.name,
            **result.to_dict(),
            "written_to": None if target is None else str(target),
        }
        click.echo(json.dumps(shown, indent=2))
        return
    sample = f"out of sample, {result.folds} folds by document" if result.folds else "kept"
    click.echo(f"model              {model_spec.name} ({option} before: {before})")
    click.echo(
        f"labelled items     {result.items} ({result.positives} true) in {result.cases} cases"
    )
    click.echo(
        f"ROC AUC            {_f(result.roc_auc)}{_ci(result.roc_auc_ci)}  "
        f"(P(true) of each {result.axis} verdict vs its label)"
    )
    click.echo(f"balanced accuracy  {_f(result.balanced_accuracy)}  ({sample})")
    click.echo(
        f"{result.axis} vs people  Pearson {_f(result.pearson)}, Spearman "
        f"{_f(result.spearman)} over cases; mean {result.axis} {result.axis_mean:.3f}, "
        f"people's share {result.human_mean:.3f}"
    )
    note = "" if result.folds else f" (kept; the best on these rows: {result.best_threshold})"
    click.echo(f"threshold          {result.threshold}{note}")


def _write(
    target: Path, result: ItemsCalibration, model_spec: ModelSpec, run: RunSpec, labelled: Path
) -> None:
    from offline_scorer.calibration import item_quality, write_item_threshold
    from offline_scorer.calibration.items import item_reader

    day = datetime.datetime.now(datetime.UTC).date().isoformat()
    calibration = item_reader(run.spec)
    measured = item_quality(result, labelled.name, day)
    write_item_threshold(
        target,
        model_spec.name,
        model_spec.to_entry(),
        run.kind,
        calibration,
        result.threshold,
        measured,
    )
    click.echo(
        f"wrote {calibration.option} = {result.threshold}"
        f"{' and what was measured' if measured else ''} for {model_spec.name}, {run.kind} "
        f"scorer, to {target}",
        err=True,
    )
