"""`offline-scorer cassette ...`: look inside, check, re-run, merge and repair cassettes."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from offline_scorer.cassette.fields import DUMPED
from offline_scorer.cassette.store.file import CassetteFile
from offline_scorer.cassette.store.salvage import repair
from offline_scorer.cli.cassette_check import (
    digest_command,
    keygen_command,
    open_cassette,
    read_exchanges,
    sign_command,
    verify_command,
)
from offline_scorer.cli.options import ScorerChoice, model_options, scorer_options
from offline_scorer.errors import CassetteMissError, InputError, OfflineScorerError

_path = click.argument("path", type=click.Path(dir_okay=False, path_type=Path))


def _model_name(sha256: str) -> str:
    """The registry name of the model a record names by its sha256, for a person."""
    from offline_scorer.models.registry import load_registry

    try:
        names = load_registry().names_pinning(sha256)
    except OfflineScorerError:  # a broken user registry should not hide the cassette
        names = []
    return " / ".join(names) or "unregistered model"


@click.group()
def cassette() -> None:
    """Recorded model exchanges: show, dump, digest, verify, sign, merge, upgrade, repair."""


for _command in (digest_command, keygen_command, sign_command, verify_command):
    cassette.add_command(_command)


@cassette.command()
@_path
def show(path: Path) -> None:
    """Format version, size, and exchange counts by model and step."""
    with open_cassette(path) as cas:
        exchanges = read_exchanges(cas)
        click.echo(f"cassette:  {path}")
        click.echo(f"format:    version {cas.format_version}, written by {cas.writer}")
        click.echo(f"recipe:    {_recipe_line(cas.recipe, path)}")
        click.echo(
            f"size:      {cas.size_bytes} bytes, {len(exchanges)} exchange records "
            f"({cas.exchange_count} distinct keys), {cas.blob_count} blobs"
        )
        formats = Counter((ex.parts.key_format, ex.parts.backend) for ex in exchanges)
        for (key_format, backend), count in sorted(formats.items()):
            click.echo(f"keys:      format {key_format}, backend {backend}: {count}")
        counts = Counter((ex.parts.model_sha256, ex.step) for ex in exchanges)
        for (sha, step), count in sorted(counts.items()):
            click.echo(f"  {_model_name(sha)} ({sha[:12]})  {step:<10} {count}")


def _recipe_line(recipe: Mapping[str, object] | None, path: Path) -> str:
    """The header's recipe in one line (options as JSON), or what to do when it has none."""
    if recipe is None:
        return f"none (made before recordings carried one: offline-scorer migrate cassette {path})"
    options = json.dumps(recipe.get("options"), sort_keys=True)
    return (
        f"{recipe.get('scorer')} scorer, model {recipe.get('model')!r} ({recipe.get('backend')}), "
        f"verdict threshold {recipe.get('verdict_threshold')}, options {options}"
    )


@cassette.command()
@_path
def dump(path: Path) -> None:
    """Every exchange as one JSON line, texts expanded (for review and diffs).

    A record shows the key fields of its own key format: the schema as JSON (format 3), the
    grammar text (formats 1 and 2)."""
    with open_cassette(path) as cas:
        for ex in read_exchanges(cas):
            record: dict[str, Any] = {
                "key": ex.key.hex(),
                "step": ex.step,
                **{
                    field.name: field.show(getattr(ex.parts, field.name))
                    for field in DUMPED
                    if field.in_format(ex.parts.key_format)
                },
                "response": ex.text,
                "verdict_probabilities": None
                if ex.completion.verdict_probabilities is None
                else list(ex.completion.verdict_probabilities),
                "meta": dict(ex.meta),
            }
            click.echo(json.dumps(record, ensure_ascii=False))


@cassette.command()
@click.argument("output", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("inputs", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
def merge(output: Path, inputs: tuple[Path, ...]) -> None:
    """Append the exchanges of INPUTS to OUTPUT (created if missing), skipping known keys."""
    from offline_scorer.cassette.records import to_payload

    added = skipped = 0
    with CassetteFile(output, create=True) as out:
        for source in inputs:
            with open_cassette(source) as cas:
                for ex in read_exchanges(cas):
                    if out.get_exchange(ex.key) is not None:
                        skipped += 1
                        continue
                    out.append_exchange(
                        ex.key, to_payload(out, ex.step, ex.parts, ex.completion, ex.meta)
                    )
                    added += 1
    click.echo(f"{output}: added {added} exchange(s), skipped {skipped} already present")


@cassette.command("upgrade")
@click.argument("old", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--data",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The dataset OLD was recorded from (.jsonl or .csv, as for eval).",
)
@click.option(
    "--out",
    "new",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The upgraded cassette to write (OLD is left as it is).",
)
@click.option("--overwrite", is_flag=True, help="Replace an existing --out.")
@scorer_options
@model_options
def upgrade_command(
    old: Path,
    data: Path,
    new: Path,
    overwrite: bool,
    scorer: ScorerChoice,
    model: str | None,
    backend: str | None,
) -> None:
    """Re-key a cassette of an older key format by scoring DATA with its answers.

    Give the scorer kind and options, model and backend it was recorded with, where OLD
    carries no recipe (options not given are those of the release that wrote it).
    """
    from offline_scorer.assembly.migrate import run_without_recipe
    from offline_scorer.assembly.migrate.keys import upgrade_cassette
    from offline_scorer.assembly.open import JudgeSettings
    from offline_scorer.assembly.recording import RecordedRun, cassette_recipe, run_from
    from offline_scorer.batch.datasets import iter_dataset

    if not old.is_file():
        raise InputError(f"no such cassette: {old}")
    settings = JudgeSettings(model=model, backend=backend)
    found = cassette_recipe(old)
    if found is None:
        with CassetteFile(old, create=False) as source:
            writer = source.writer
        recipe = run_without_recipe(scorer.kind, scorer.options(), settings, writer)
    else:
        given = RecordedRun(scorer.kind if scorer.kind_given else None, scorer.options(), settings)
        recipe = run_from(found, given, old)
    report = upgrade_cassette(
        old,
        new,
        iter_dataset(data),
        recipe.scorer_on,
        model=recipe.judge.model,
        backend=recipe.judge.backend,
        overwrite=overwrite,
    )
    click.echo(f"{new}: converted {report.converted} exchange(s) from {old}")
    if report.failed_items or report.skipped_items:
        click.echo(
            f"  items: {report.failed_items} failed on a recorded answer, "
            f"{report.skipped_items} unreadable or without output (as when recorded)"
        )
    unreached = sum(report.unreached.values())
    steps = ", ".join(f"{step} {count}" for step, count in report.unreached.items())
    click.echo(
        f"  {unreached} record(s) of {old} were not reached" + (f" ({steps})" if steps else "")
    )
    if report.not_carried:
        first, why = report.not_carried[0]
        raise CassetteMissError(
            f"{new} was written without {len(report.not_carried)} item(s) whose records the "
            f"backend made by an earlier decoder no longer stand (first: item {first!r}, {why}); "
            f"record them live: offline-scorer eval {data} --out RESULTS.jsonl --cassette {new} "
            "--record-mode auto"
        )


@cassette.command("repair")
@_path
def repair_command(path: Path) -> None:
    """Keep every intact record of a damaged cassette (the original is kept as PATH.bak)."""
    report = repair(path)
    if not report.changed:
        click.echo(f"{path}: intact, nothing to repair ({report.kept_records} records)")
        return
    click.echo(
        f"{path}: kept {report.kept_records} records ({report.kept_bytes} bytes), dropped "
        f"{report.dropped_bytes} damaged bytes in {report.dropped_ranges} range(s); "
        f"original saved as {report.backup_path}"
    )
