"""`offline-scorer migrate cassette|results FILE`: bring a recording of an earlier format
forward, so it replays, reproduces and resumes with no flags (`assembly.migrate`)."""

from __future__ import annotations

from pathlib import Path

import click

from offline_scorer.assembly.open import JudgeSettings
from offline_scorer.assembly.recording import model_named_by_records
from offline_scorer.cassette.judge import require_cassette
from offline_scorer.cassette.modes import RecordMode
from offline_scorer.cassette.store.file import CassetteFile
from offline_scorer.cli.options import ScorerChoice, model_options, scorer_options
from offline_scorer.errors import InputError


@click.group()
def migrate() -> None:
    """Bring a file of an earlier release forward: a recording without its recipe, a model
    registry of the earlier shape."""


_OUT = click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where to write the migrated file (default: replace FILE atomically).",
)


@migrate.command("cassette")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@_OUT
@scorer_options
@model_options
def migrate_cassette_command(
    file: Path, out: Path | None, scorer: ScorerChoice, model: str | None, backend: str | None
) -> None:
    """Give FILE a header naming the run that recorded it: the model its records name (or
    --model) and the scorer kind and options given as flags over that model's registry
    defaults over the defaults of the time (`FORMER_DEFAULTS`). Every exchange stays byte for
    byte: the content digest does not change."""
    from offline_scorer.assembly.migrate import migrate_cassette, run_without_recipe

    require_cassette(file)
    if model is None:
        model = model_named_by_records(file)
        if model is None:
            raise InputError(
                f"{file} holds no records of exactly one registered model; pass --model"
            )
    settings = JudgeSettings(model=model, backend=backend, cassette=file, mode=RecordMode.REPLAY)
    with CassetteFile(file, create=False) as cassette:
        writer = cassette.writer
    run = run_without_recipe(scorer.kind, scorer.options(), settings, writer)
    click.echo(migrate_cassette(file, run, out or file).summary)


@migrate.command("results")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--data",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The dataset the run scored: each line's digest is derived again from it.",
)
@click.option(
    "--cassette",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The cassette the run recorded: says which decoder of the backend answered "
    "(an earlier decoder's records keep its id in the digests).",
)
@_OUT
@scorer_options
@model_options
def migrate_results_command(
    file: Path,
    data: Path,
    cassette: Path | None,
    out: Path | None,
    scorer: ScorerChoice,
    model: str | None,
    backend: str | None,
) -> None:
    """Give the format 2 results FILE the recipe header of format 3, from --model and the
    option flags (the run's), after checking every line's digest against that recipe."""
    from offline_scorer.assembly.migrate import migrate_results, run_without_recipe

    if not file.is_file():
        raise InputError(f"no such results file: {file}")
    if cassette is not None:
        require_cassette(cassette)
    settings = JudgeSettings(
        model=model, backend=backend, cassette=cassette, mode=RecordMode.REPLAY
    )
    run = run_without_recipe(scorer.kind, scorer.options(), settings, None)
    click.echo(migrate_results(file, data, run, out or file).summary)


@migrate.command("registry")
@click.argument("file", type=click.Path(dir_okay=False, exists=True, path_type=Path))
def migrate_registry_command(file: Path) -> None:
    """Convert a model registry FILE written for offline-scorer 0.3 (one verdict_threshold and
    quality per model) to the per-kind shape ([models.NAME.scorers.KIND]), in place, every
    value and the comments inside moved tables kept."""
    from offline_scorer.assembly.migrate import migrate_registry

    click.echo(migrate_registry(file).summary)
