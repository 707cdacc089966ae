"""One `eval` job: a dataset in, a results file out, in input order, resumable.

The data is streamed twice, never held: once to count its rows (the progress bar's total),
then item by item into the executor. The driver's memory is one item plus what the executor
keeps in flight.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from offline_scorer.batch.datasets import DataItem, Item, count_rows, iter_dataset
from offline_scorer.batch.executors import Executor
from offline_scorer.batch.resume import Kept, LineWriter, keep_prefix
from offline_scorer.batch.run import item_context, item_digest
from offline_scorer.errors import InputError
from offline_scorer.scorers.protocol import Scorer


@dataclass(frozen=True)
class EvalJob:
    data: Path
    out: Path
    resume: bool = False
    overwrite: bool = False
    fail_fast: bool = False
    progress: bool = False  # a progress bar on stderr

    def check(self) -> int:
        """The dataset's row count, after refusing what would lose data (before a model loads)."""
        if self.resume and self.overwrite:
            raise InputError("--resume and --overwrite exclude each other")
        rows = count_rows(self.data)
        if not rows:
            raise InputError(f"{self.data}: the dataset has no rows")
        if self.out.exists() and not (self.resume or self.overwrite):
            raise InputError(
                f"{self.out} exists; pass --resume to continue it or --overwrite to replace it"
            )
        return rows

    def items(self) -> Iterator[Item]:
        return iter_dataset(self.data)


def _expected(context: list[Any]) -> Callable[[Item], tuple[str, str, Mapping[str, Any]]]:
    def expected(item: Item) -> tuple[str, str, Mapping[str, Any]]:
        meta = item.metadata if isinstance(item, DataItem) else {}
        return item.id, item_digest(item, context), meta

    return expected


@dataclass(frozen=True)
class JobOutcome:
    written: int  # lines written by this run
    failed: int  # of them, failed items
    kept: int  # lines kept from an earlier run (--resume)
    rescored: int  # lines of an earlier run that no longer held and were scored again


def run_job(
    job: EvalJob, scorer: Scorer, executor: Executor, total: int, header: str
) -> JobOutcome:
    """Score what is not done yet and append it; a file started anew opens with `header`
    (the results header line of the run's recipe)."""
    context = item_context([scorer])
    items: Iterator[Item] = job.items()
    kept = Kept(0, 0)
    if job.resume and job.out.exists():
        kept = keep_prefix(job.out, items, _expected(context), header)
        if kept.redo is not None:
            items = itertools.chain([kept.redo], items)
    done = kept.lines
    writer = LineWriter(job.out, kept.size)
    if kept.size == 0:
        writer.write(header)
    bar = None
    if job.progress:
        from tqdm import tqdm

        bar = tqdm(total=total, initial=done, desc="scoring", unit="item", file=sys.stderr)
    written = failed = 0
    try:
        for result in executor.results(items, context):
            writer.write(result.to_line())
            written += 1
            failed += 0 if result.ok else 1
            if bar is not None:
                bar.update(1)
            if job.fail_fast and not result.ok:
                break
    finally:
        writer.close()
        if bar is not None:
            bar.close()
    return JobOutcome(written, failed, kept.lines, kept.dropped)
