"""`offline-scorer eval DATA`: score a dataset, one results line per item, resumable."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import click

from offline_scorer.batch.executors import Executor, ProcessPoolExecutorBackend, SerialExecutor
from offline_scorer.batch.job import EvalJob, run_job
from offline_scorer.cli.options import judge_options, scorer_options
from offline_scorer.errors import InputError
from offline_scorer.judging.open import JudgeSettings
from offline_scorer.scorers import build_scorer
from offline_scorer.scorers.summarization.options import ScorerOptions
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
    max_questions: int,
    scale: float,
    **judge: Any,
) -> None:
    """Score every row of DATA (.jsonl or .csv: {id, source, summary} or {id, input, output})."""
    from offline_scorer.cli.options import judge_settings
    from offline_scorer.report import aggregate, format_table, read_results

    options = ScorerOptions(max_questions=max_questions, scale=scale)
    out = out or data.with_suffix(".results.jsonl")
    job = EvalJob(data, out, resume, overwrite, fail_fast, not quiet and sys.stderr.isatty())
    if ray_address is not None and executor != "ray":
        raise InputError("--ray-address needs --executor ray")
    total = job.check()
    settings = judge_settings(**judge)
    try:
        if executor == "ray":
            _run_on_ray(job, settings, options, total, workers, ray_address)
        else:
            _run_here(job, settings, options, total, workers or 1)
    except KeyboardInterrupt:
        click.echo(
            f"interrupted; {out} holds every finished item: continue with --resume", err=True
        )
        sys.exit(130)
    agg = aggregate(read_results(out, slim=True))
    click.echo(
        json.dumps(agg.to_dict(), ensure_ascii=False, indent=2) if as_json else format_table(agg)
    )
    click.echo(f"results: {out}", err=True)
    if agg.failed:
        sys.exit(1)


def _run_here(
    job: EvalJob, settings: JudgeSettings, options: ScorerOptions, total: int, workers: int
) -> None:
    from offline_scorer.cli.common import report_cassette
    from offline_scorer.judging.open import open_judge

    if workers > 1 and settings.threads is None:
        settings.threads = max(1, (os.cpu_count() or 1) // workers)
    judge, _spec = open_judge(settings)
    with judge:
        scorer = build_scorer("summarization", judge, options)
        executor: Executor = (
            SerialExecutor(scorer)
            if workers <= 1
            else ProcessPoolExecutorBackend(workers, settings, "summarization", options)
        )
        try:
            run_job(job, scorer, executor, total)
        finally:
            report_cassette(judge)


def _run_on_ray(
    job: EvalJob,
    settings: JudgeSettings,
    options: ScorerOptions,
    total: int,
    workers: int | None,
    address: str | None,
) -> None:
    from offline_scorer.batch.cluster import RayExecutor
    from offline_scorer.cli.common import report_cassette

    with RayExecutor(settings, "summarization", options, address=address, actors=workers) as ray:
        try:
            run_job(job, ray.scorer, ray, total)
        finally:
            report_cassette(ray.judge)
