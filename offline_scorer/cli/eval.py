"""`offline-scorer eval DATA`: score a dataset, one results line per item, resumable.

The results file is written in input order, one `write` per line followed by fsync, so an
interrupted run leaves only whole lines (a kill -9 in mid-write can leave one torn last line,
which --resume drops). --resume keeps the longest prefix of lines that match the data (by id
and content digest) and continues after it, so a resumed run ends with the same bytes as an
uninterrupted one.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import click

from offline_scorer.batch.datasets import DataItem, RowError, load_dataset
from offline_scorer.batch.run import (
    ItemResult,
    dump_line,
    evaluate_item,
    item_context,
    item_digest,
    with_metadata,
)
from offline_scorer.cli.options import judge_options
from offline_scorer.errors import InputError
from offline_scorer.scorers.summarization.options import ScorerOptions
from offline_scorer.scorers.summarization.scorer import SummarizationScorer


def _existing_prefix(
    out: Path, expected: Sequence[tuple[str, str, Mapping[str, Any]]]
) -> tuple[list[bytes], bool]:
    """The lines of an existing results file that match the data, each brought up to date.

    A line matches its item by id and content digest. Its metadata is taken from the data (it
    never changes a score): a line written before results lines carried metadata gains the
    key, and an edited label replaces the old one. Returns the kept lines (without their line
    breaks) and whether any of them differs from the file's bytes. Refuses a mismatch.
    """
    data = out.read_bytes()
    lines = data.split(b"\n")
    complete = lines[:-1]  # the last piece is empty, or a torn line from a killed run
    kept: list[bytes] = []
    changed = False
    for number, raw in enumerate(complete):
        try:
            record = json.loads(raw)
            found = (record["id"], record["digest"])
        except (ValueError, KeyError, TypeError):
            raise InputError(
                f"{out}: line {number + 1} is not a results line; use another "
                "--out, or --overwrite to start again"
            ) from None
        if number >= len(expected) or found != expected[number][:2]:
            raise InputError(
                f"{out}: line {number + 1} (id {found[0]!r}) does not match item "
                f"{number + 1} of the data (changed data or options?); use another --out, or "
                "--overwrite to start again"
            )
        line = dump_line(with_metadata(record, expected[number][2])).encode("utf-8")
        if line != raw:
            changed = True
            raw = line
        kept.append(raw)
    return kept, changed


def _rewrite(out: Path, lines: Sequence[bytes]) -> int:
    """Replace `out` by `lines` atomically (a crash leaves the old file or the new one)."""
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    data = b"".join(line + b"\n" for line in lines)
    try:
        with open(tmp, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, out)
    except OSError as error:
        tmp.unlink(missing_ok=True)
        raise InputError(f"cannot update {out}: {error.strerror or error}") from None
    return len(data)


class _Writer:
    def __init__(self, path: Path, keep_bytes: int) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
        os.ftruncate(self.fd, keep_bytes)
        os.lseek(self.fd, keep_bytes, os.SEEK_SET)

    def write(self, line: str) -> None:
        os.write(self.fd, (line + "\n").encode("utf-8"))
        os.fsync(self.fd)

    def close(self) -> None:
        os.close(self.fd)


_WORKER: dict[str, Any] = {}


def _worker_init(settings: Any, options: ScorerOptions) -> None:
    from offline_scorer.judging.open import open_judge

    judge, _spec = open_judge(settings)
    _WORKER["scorer"] = SummarizationScorer(judge, options)


def _worker_eval(item: DataItem | RowError, context: list[Any]) -> ItemResult:
    scorer = _WORKER["scorer"]
    return evaluate_item(item, [scorer], ["summarization"], context)


def _results(
    items: Sequence[DataItem | RowError],
    scorer: SummarizationScorer,
    context: list[Any],
    workers: int,
    settings: Any,
) -> Iterator[ItemResult]:
    if workers <= 1:
        for item in items:
            yield evaluate_item(item, [scorer], ["summarization"], context)
        return
    with ProcessPoolExecutor(
        max_workers=workers,
        mp_context=get_context("spawn"),
        initializer=_worker_init,
        initargs=(settings, scorer.options),
    ) as pool:
        yield from pool.map(_worker_eval, items, [context] * len(items))


def run_eval_command(
    data: Path,
    out: Path,
    *,
    options: ScorerOptions,
    settings: Any,
    resume: bool,
    overwrite: bool,
    fail_fast: bool,
    quiet: bool,
    workers: int,
) -> tuple[int, int, Path]:
    """Run, write the results file; returns (items written, failed, results path)."""
    from offline_scorer.judging.open import open_judge

    items = load_dataset(data)
    if not items:
        raise InputError(f"{data}: the dataset has no rows")
    if out.exists() and not (resume or overwrite):
        raise InputError(f"{out} exists; pass --resume to continue it or --overwrite to replace it")
    if workers > 1 and settings.threads is None:
        settings.threads = max(1, (os.cpu_count() or 1) // workers)
    judge, _spec = open_judge(settings)
    scorer = SummarizationScorer(judge, options)
    context = item_context([scorer])
    expected = [
        (item.id, item_digest(item, context), item.metadata if isinstance(item, DataItem) else {})
        for item in items
    ]
    done, keep = 0, 0
    if resume and out.exists():
        kept, changed = _existing_prefix(out, expected)
        done = len(kept)
        keep = _rewrite(out, kept) if changed else sum(len(line) + 1 for line in kept)
    todo = items[done:]
    writer = _Writer(out, keep)
    bar = None
    if not quiet and sys.stderr.isatty():
        from tqdm import tqdm

        bar = tqdm(total=len(items), initial=done, desc="scoring", unit="item", file=sys.stderr)
    failed = 0
    try:
        for result in _results(todo, scorer, context, workers, settings):
            writer.write(result.to_line())
            failed += 0 if result.ok else 1
            if bar is not None:
                bar.update(1)
            if fail_fast and not result.ok:
                break
    finally:
        writer.close()
        if bar is not None:
            bar.close()
        from offline_scorer.cli.main import _report_cassette

        _report_cassette(judge)
    return len(items), failed, out


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
    default=1,
    show_default=True,
    help="Model processes (each loads the model; threads are split between them).",
)
@click.option("--max-questions", type=int, default=10, show_default=True)
@click.option("--scale", type=float, default=1.0, show_default=True)
@judge_options
def eval_command(
    data: Path,
    out: Path | None,
    resume: bool,
    overwrite: bool,
    fail_fast: bool,
    quiet: bool,
    as_json: bool,
    workers: int,
    max_questions: int,
    scale: float,
    **judge: Any,
) -> None:
    """Score every row of DATA (.jsonl or .csv: {id, source, summary} or {id, input, output})."""
    from offline_scorer.cli.main import judge_settings
    from offline_scorer.report.summary import aggregate, format_table, read_results

    if resume and overwrite:
        raise InputError("--resume and --overwrite exclude each other")
    options = ScorerOptions(max_questions=max_questions, scale=scale)
    out = out or data.with_suffix(".results.jsonl")
    try:
        run_eval_command(
            data,
            out,
            options=options,
            settings=judge_settings(**judge),
            resume=resume,
            overwrite=overwrite,
            fail_fast=fail_fast,
            quiet=quiet,
            workers=workers,
        )
    except KeyboardInterrupt:
        click.echo(
            f"interrupted; {out} holds every finished item: continue with --resume", err=True
        )
        sys.exit(130)
    agg = aggregate(read_results(out))
    click.echo(json.dumps(agg, ensure_ascii=False, indent=2) if as_json else format_table(agg))
    click.echo(f"results: {out}", err=True)
    if agg["failed"]:
        sys.exit(1)
