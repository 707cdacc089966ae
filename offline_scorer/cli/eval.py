"""`offline-scorer eval DATA`: score a dataset, one results line per item, resumable."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import click

from offline_scorer.assembly.run_spec import RunSpec
from offline_scorer.batch.executors import Executor, ProcessPoolExecutorBackend, SerialExecutor
from offline_scorer.batch.job import EvalJob, JobOutcome, run_job
from offline_scorer.cli.common import show_quality
from offline_scorer.cli.options import ScorerChoice, judge_options, run_spec, scorer_options
from offline_scorer.errors import InputError
from offline_scorer.settings import RAY_ADDRESS_ENV


@click.command("eval")
@click.argument("data", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Results file (JSON lines; default: DATA with suffix .results.jsonl).",
)
@click.option("--resume", is_flag=True, help="Continue an interrupted run in --out.")
@click.option("--overwrite", is_flag=True, help="Replace an existing --out.")
@click.option("--fail-fast", is_flag=True, help="Stop at the first failed item.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
@click.option("--json", "as_json", is_flag=True, help="Print the aggregate as JSON.")
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=None,
    help="Judge slots: model processes here (default 1; threads are split between them), "
    "or Ray actors with --executor ray (default: as many as the cluster's CPUs hold).",
)
@click.option(
    "--executor",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="local: this machine (--workers processes); ray: actors on a Ray cluster "
    "(needs the 'ray' extra), each with --threads CPUs (default 1).",
)
@click.option(
    "--ray-address",
    default=None,
    envvar=RAY_ADDRESS_ENV,
    help="With --executor ray: 'auto', host:port or ray://host:port of a running cluster "
    f"(default: ${RAY_ADDRESS_ENV}, else a fresh Ray instance on this machine).",
)
@scorer_options
@judge_options
def eval_command(
    data: Path,
    out: Path | None,
    resume: bool,
    overwrite: bool,
    fail_fast: bool,
    quiet: bool,
    as_json: bool,
    workers: int | None,
    executor: str,
    ray_address: str | None,
    scorer: ScorerChoice,
    **judge: Any,
) -> None:
    """Score every row of DATA (.jsonl or .csv: {id, source, summary} or {id, input, output})."""
    from offline_scorer.report import aggregate, format_table, read_results

    out = out or data.with_suffix(".results.jsonl")
    job = EvalJob(data, out, resume, overwrite, fail_fast, not quiet and sys.stderr.isatty())
    if ray_address is not None and executor != "ray":
        raise InputError("--ray-address needs --executor ray")
    total = job.check()
    run = run_spec(scorer, judge, out if resume and out.is_file() else None)
    try:
        if executor == "ray":
            outcome = _run_on_ray(job, run, total, workers, ray_address)
        else:
            outcome = _run_here(job, run, total, workers or 1)
    except KeyboardInterrupt:
        click.echo(
            f"interrupted; {out} holds every finished item: continue with --resume", err=True
        )
        sys.exit(130)
    if outcome.rescored:
        click.echo(
            f"resume: kept {outcome.kept} line(s); {outcome.rescored} line(s) from line "
            f"{outcome.kept + 1} on were scored under other options or another judge identity "
            "(model, backend, verdict threshold) and were scored again",
            err=True,
        )
    agg = aggregate(read_results(out, slim=True))
    click.echo(
        json.dumps(agg.to_dict(), ensure_ascii=False, indent=2) if as_json else format_table(agg)
    )
    show_quality(run.model(), as_json)
    click.echo(f"results: {out}", err=True)
    _print_digests(out, run, data)
    if agg.failed:
        sys.exit(1)


def _print_digests(out: Path, run: RunSpec, data: Path) -> None:
    """The results file's sha256 and the cassette's content digest: what a paper cites."""
    from offline_scorer.report.provenance import provenance

    cassette = run.cassette_path() if run.mode.uses_cassette else None
    if cassette is not None and not cassette.is_file():
        cassette = None
    for line in provenance(out, run.kind, cassette, data).lines():
        click.echo(line, err=True)


def _run_here(job: EvalJob, run: RunSpec, total: int, workers: int) -> JobOutcome:
    from offline_scorer.cli.common import report_cassette

    if workers > 1 and run.threads is None:
        run = run.with_threads(max(1, (os.cpu_count() or 1) // workers))
    if workers > 1:
        # the workers load the model; this process only writes the cassette and the results
        judge = run.identity_judge()
    else:
        judge, _model = run.open_judge()
    with judge:
        scorer = run.scorer_on(judge)
        executor: Executor = (
            SerialExecutor(scorer) if workers <= 1 else ProcessPoolExecutorBackend(workers, run)
        )
        try:
            return run_job(job, scorer, executor, total, run.results_header())
        finally:
            report_cassette(judge)


def _run_on_ray(
    job: EvalJob, run: RunSpec, total: int, workers: int | None, address: str | None
) -> JobOutcome:
    from offline_scorer.batch.cluster import RayExecutor
    from offline_scorer.cli.common import report_cassette

    with RayExecutor(run, address=address, actors=workers) as ray:
        try:
            return run_job(job, ray.scorer, ray, total, run.results_header())
        finally:
            report_cassette(ray.judge)
