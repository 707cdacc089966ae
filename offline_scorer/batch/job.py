"""One `eval` job: a dataset in, a results file out, in input order, resumable."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from offline_scorer.batch.datasets import DataItem, load_dataset
from offline_scorer.batch.executors import Executor, Item
from offline_scorer.batch.resume import LineWriter, existing_prefix, rewrite
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

    def load(self) -> list[Item]:
        """The dataset's items, after refusing what would lose data (before any model loads)."""
        if self.resume and self.overwrite:
            raise InputError("--resume and --overwrite exclude each other")
        items = load_dataset(self.data)
        if not items:
            raise InputError(f"{self.data}: the dataset has no rows")
        if self.out.exists() and not (self.resume or self.overwrite):
            raise InputError(
                f"{self.out} exists; pass --resume to continue it or --overwrite to replace it"
            )
        return items


def run_job(
    job: EvalJob, items: Sequence[Item], scorer: Scorer, executor: Executor
) -> tuple[int, int]:
    """Score what is not done yet and append it; returns (items in the data, failed now)."""
    context = item_context([scorer])
    expected = [
        (item.id, item_digest(item, context), item.metadata if isinstance(item, DataItem) else {})
        for item in items
    ]
    done, keep = 0, 0
    if job.resume and job.out.exists():
        kept, changed = existing_prefix(job.out, expected)
        done = len(kept)
        keep = rewrite(job.out, kept) if changed else sum(len(line) + 1 for line in kept)
    writer = LineWriter(job.out, keep)
    bar = None
    if job.progress:
        from tqdm import tqdm

        bar = tqdm(total=len(items), initial=done, desc="scoring", unit="item", file=sys.stderr)
    failed = 0
    try:
        for result in executor.results(items[done:], context):
            writer.write(result.to_line())
            failed += 0 if result.ok else 1
            if bar is not None:
                bar.update(1)
            if job.fail_fast and not result.ok:
                break
    finally:
        writer.close()
        if bar is not None:
            bar.close()
    return len(items), failed
