"""`offline-scorer reproduce RESULTS --cassette FILE --data DATA`: derive a results file again.

A results line holds the scorer kind, the item's id and content digest and its result, but not
the item's texts, so the data the run scored is given with --data. The scorer kind is read from
the results file; its options and the judge (--model, --backend) are flags as for `eval`, and
the line's digest, which covers both, says when they are not the run's. The judge only
replays: no model file and no model runtime are needed.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterator
from pathlib import Path

import click

from offline_scorer.assembly.open import JudgeSettings
from offline_scorer.assembly.run_spec import RunSpec
from offline_scorer.batch.datasets import iter_dataset
from offline_scorer.batch.executors import Executor, ProcessPoolExecutorBackend, SerialExecutor
from offline_scorer.batch.reproduce import compare_lines, first_kind, version_advice
from offline_scorer.batch.results import file_header
from offline_scorer.batch.run import item_context
from offline_scorer.cassette.judge import require_cassette
from offline_scorer.cassette.modes import RecordMode
from offline_scorer.cli.options import ScorerChoice, model_options, recorded_run, scorer_options
from offline_scorer.errors import InputError
from offline_scorer.settings import RAY_ADDRESS_ENV


@click.command("reproduce")
@click.argument("results", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--cassette",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The cassette the run recorded (only replayed).",
)
@click.option(
    "--data",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The dataset the run scored (.jsonl or .csv, as given to eval): results lines "
    "hold no texts.",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=None,
    help="Replaying processes here (default 1), or Ray actors with --executor ray.",
)
@click.option(
    "--executor",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="local: this machine (--workers processes); ray: actors on a Ray cluster.",
)
@click.option(
    "--ray-address",
    default=None,
    envvar=RAY_ADDRESS_ENV,
    help="With --executor ray: 'auto', host:port or ray://host:port of a running cluster.",
)
@scorer_options
@model_options
def reproduce_command(
    results: Path,
    cassette: Path,
    data: Path,
    workers: int | None,
    executor: str,
    ray_address: str | None,
    scorer: ScorerChoice,
    model: str | None,
    backend: str | None,
) -> None:
    """Replay every line of RESULTS from the cassette and compare the bytes.

    Prints "N of N lines identical", or the first differing lines (number, id, the field that
    differs) and exits 1. The run's model and options come from RESULTS' header (a file of
    format 2 has none: give them as flags if they were not the defaults); flags win over it.
    """
    from offline_scorer.cassette.digest import content_digest

    if ray_address is not None and executor != "ray":
        raise InputError("--ray-address needs --executor ray")
    kind = first_kind(results)
    if scorer.kind_given and scorer.kind != kind:
        raise InputError(f"{results} holds lines of the {kind} scorer, not {scorer.kind}")
    require_cassette(cassette)
    digest = content_digest(cassette)  # also refuses a damaged or edited cassette up front
    if not data.is_file():
        raise InputError(f"no such dataset: {data}")
    judge = JudgeSettings(model=model, backend=backend, cassette=cassette, mode=RecordMode.REPLAY)
    run = recorded_run(ScorerChoice(kind, scorer.given, scorer.kind_given), judge, results)
    if file_header(results) is None:
        raise InputError(
            f"{results} is a results file of an earlier format, without the recipe header "
            f"lines are derived again under; bring it forward with `offline-scorer migrate "
            f"results {results} --data {data} --cassette {cassette}` (with the run's --model "
            "and options), then reproduce the migrated file"
        )
    lines = itertools.chain(
        [run.results_header()], _lines(run, data, executor, workers, ray_address)
    )
    outcome = compare_lines(results, lines)
    for difference in outcome.differences:
        click.echo(difference.describe())
    if outcome.differing > len(outcome.differences):
        click.echo(f"... and {outcome.differing - len(outcome.differences)} more differing lines")
    click.echo(f"{outcome.identical} of {outcome.lines} lines identical")
    click.echo(f"results  sha256:{outcome.sha256}  {results}")
    click.echo(f"cassette {digest}  {cassette}")
    if not outcome.ok:
        advice = version_advice(digest.writer)
        if advice is not None:
            click.echo(advice)
        sys.exit(1)


def _lines(
    run: RunSpec, data: Path, executor: str, workers: int | None, address: str | None
) -> Iterator[str]:
    """The results lines a replay of `data` writes, in input order, one at a time."""
    if executor == "ray":
        from offline_scorer.batch.cluster import RayExecutor

        with RayExecutor(run, address=address, actors=workers) as ray:
            context = item_context([ray.scorer])
            for result in ray.results(iter_dataset(data), context):
                yield result.to_line()
        return
    judge = run.identity_judge() if (workers or 1) > 1 else run.open_judge()[0]
    with judge:
        scorer = run.scorer_on(judge)
        pool: Executor = (
            SerialExecutor(scorer)
            if (workers or 1) <= 1
            else ProcessPoolExecutorBackend(workers or 1, run)
        )
        for result in pool.results(iter_dataset(data), item_context([scorer])):
            yield result.to_line()
