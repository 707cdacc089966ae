"""`offline-scorer calibrate`: pick a model's verdict threshold from labelled pairs."""

from __future__ import annotations

import datetime
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from offline_scorer.cli.options import ScorerChoice, judge_options, run_spec, scorer_options
from offline_scorer.errors import ConfigError, InputError

if TYPE_CHECKING:
    from offline_scorer.assembly.run_spec import RunSpec
    from offline_scorer.calibration import Calibration, Labelled
    from offline_scorer.models.registry import ModelSpec


def _interval(ci: tuple[float, float] | None) -> str:
    return "" if ci is None else f" (95% CI {ci[0]:.3f}-{ci[1]:.3f})"


def _advance(bar: Any) -> None:
    bar.update(1)


@click.command("calibrate")
@click.argument("labelled", type=click.Path(dir_okay=False, path_type=Path))
@scorer_options
@click.option(
    "--write-shipped",
    is_flag=True,
    help="Write the threshold to the shipped models.toml instead of your registry.",
)
@click.option(
    "--keep-threshold",
    is_flag=True,
    help="Measure and record the judge's quality at its current threshold without moving it "
    "(a new threshold changes every cassette key it is part of, so recorded runs would miss).",
)
@click.option("--dry-run", is_flag=True, help="Report the threshold; write nothing.")
@click.option(
    "--per-row",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write each labelled row's label and weakest P(true) to this JSON lines file "
    "(for bench/bench_auc_change.py, or to see which rows the judge gets wrong).",
)
@click.option(
    "--axis",
    default=None,
    help="Calibrate the verdicts of this axis's items instead (coverage: LABELLED rows are "
    '{"id", "summary", "questions", "labels"}, one label per question): sets the option that '
    "holds their threshold (coverage_threshold) and records the figures, out of sample.",
)
@click.option(
    "--folds",
    type=click.IntRange(min=2),
    default=5,
    show_default=True,
    help="With --axis: folds of the out-of-sample figures (cases split by document, the id "
    'before its first "/").',
)
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@judge_options
def calibrate_command(
    labelled: Path,
    scorer: ScorerChoice,
    write_shipped: bool,
    keep_threshold: bool,
    dry_run: bool,
    per_row: Path | None,
    axis: str | None,
    folds: int,
    as_json: bool,
    **judge: Any,
) -> None:
    """Run the judge over LABELLED rows (JSONL/CSV with a label field of the scorer kind, e.g.
    `faithful`) and set the model's verdict threshold to the one that best separates them;
    with --axis, the threshold of that axis's verdicts, from rows that label each item."""
    from tqdm import tqdm

    if write_shipped and dry_run:
        raise InputError("--write-shipped and --dry-run contradict each other; give one of them")
    if axis is not None:
        from offline_scorer.cli.calibrate_axis import calibrate_axis

        target = _target(write_shipped, dry_run)
        run = run_spec(scorer, judge)
        calibrate_axis(run, labelled, axis, folds, keep_threshold, per_row, as_json, target)
        return

    from offline_scorer.batch.datasets import load_dataset
    from offline_scorer.calibration import calibrate, collect, probability_reader

    run = run_spec(scorer, judge)
    probability_reader(run.spec)  # a kind without verdict probabilities is refused first
    rows = load_dataset(labelled)
    if not rows:
        raise InputError(f"{labelled} has no rows")
    backend = run.backend()
    if not backend.verdict_probabilities:
        raise ConfigError(
            f"the {backend.name} backend gives no verdict probabilities, so it cannot be "
            "calibrated; calibrate with --backend llama_cpp (the default)"
        )
    opened, model_spec = run.open_judge()  # the threshold and figures of the kind calibrated
    with opened:
        bar = tqdm(total=len(rows), unit="row", disable=not sys.stderr.isatty(), file=sys.stderr)
        try:
            items, skipped = collect(
                rows, run.spec, run.scorer_on(opened), on_item=lambda: _advance(bar)
            )
        finally:
            bar.close()
    if per_row is not None:
        _write_per_row(per_row, run, items)
    result = calibrate(
        items, skipped, float(model_spec.verdict_threshold) if keep_threshold else None
    )
    target = _target(write_shipped, dry_run)
    _show(result, model_spec, run, keep_threshold, as_json, target)
    if target is not None:
        _write_registry(target, result, model_spec, run, labelled)


def _target(write_shipped: bool, dry_run: bool) -> Path | None:
    """The registry file a calibration writes to (None: a dry run)."""
    from offline_scorer.models.registry import SHIPPED_REGISTRY
    from offline_scorer.settings import user_registry_path

    if dry_run:
        return None
    return SHIPPED_REGISTRY.resolve() if write_shipped else user_registry_path()


def _write_per_row(per_row: Path, run: RunSpec, items: list[Labelled]) -> None:
    """Each row's label and weakest P(true), for a paired comparison with another reading."""
    label = next(iter(run.spec.label_fields))
    per_row.write_text(
        "".join(
            json.dumps({"id": i.id, label: i.positive, "p_true": i.weakest}) + "\n" for i in items
        ),
        encoding="utf-8",
    )


def _show(
    result: Calibration,
    model_spec: ModelSpec,
    run: RunSpec,
    keep_threshold: bool,
    as_json: bool,
    target: Path | None,
) -> None:
    """What was measured, as JSON or as the lines a person reads."""
    if as_json:
        shown = {
            "model": model_spec.name,
            **result.to_dict(),
            "written_to": None if target is None else str(target),
        }
        click.echo(json.dumps(shown, indent=2))
        return
    axis = run.spec.judged_axis
    click.echo(
        f"model              {model_spec.name} ({run.kind} threshold before: "
        f"{model_spec.verdict_threshold})"
    )
    click.echo(
        f"labelled rows      {result.items} ({result.skipped} skipped: no label or no verdict)"
    )
    auc = "n/a" if result.roc_auc is None else f"{result.roc_auc:.3f}"
    click.echo(
        f"ROC AUC            {auc}{_interval(result.roc_auc_ci)}  "
        f"(weakest {axis} verdict's P(true) vs the label)"
    )
    click.echo(
        f"balanced accuracy  {result.balanced_accuracy:.3f}"
        f"{_interval(result.balanced_accuracy_ci)}  ({run.spec.rule} at the threshold)"
    )
    note = f" (kept; the best on these rows: {result.best_threshold})" if keep_threshold else ""
    click.echo(f"threshold          {result.threshold}{note}")


def _write_registry(
    target: Path, result: Calibration, model_spec: ModelSpec, run: RunSpec, labelled: Path
) -> None:
    """The threshold and what was measured, into the kind's table of the registry `target`."""
    from offline_scorer.calibration import measured_quality, write_threshold

    day = datetime.datetime.now(datetime.UTC).date().isoformat()
    kept = None if model_spec.quality is None else model_spec.quality.coverage
    measured = measured_quality(result, labelled.name, day, kept)
    write_threshold(
        target, model_spec.name, model_spec.to_entry(), result.threshold, measured, run.kind
    )
    click.echo(
        f"wrote verdict_threshold = {result.threshold}"
        f"{' and what was measured' if measured else ''} for {model_spec.name}, {run.kind} "
        f"scorer, to {target}",
        err=True,
    )
