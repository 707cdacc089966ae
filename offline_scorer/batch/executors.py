"""Executors: where a batch's items are scored. Results come back in input order.

Serial scores in this process. The process pool starts `workers` processes, each opening its
own judge from the same settings (a model is loaded once per process). A cluster executor goes
here as a sibling: it only has to yield `ItemResult`s in input order.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from typing import Any, Protocol

from offline_scorer.batch.datasets import DataItem, RowError
from offline_scorer.batch.run import ItemResult, evaluate_item
from offline_scorer.judging.open import JudgeSettings, open_judge
from offline_scorer.scorers import build_scorer
from offline_scorer.scorers.protocol import Scorer

Item = DataItem | RowError


class Executor(Protocol):
    def results(self, items: Sequence[Item], context: list[Any]) -> Iterator[ItemResult]: ...


class SerialExecutor:
    def __init__(self, scorer: Scorer) -> None:
        self.scorer = scorer

    def results(self, items: Sequence[Item], context: list[Any]) -> Iterator[ItemResult]:
        for item in items:
            yield evaluate_item(item, [self.scorer], [self.scorer.name], context)


_WORKER: dict[str, Scorer] = {}


def _worker_init(settings: JudgeSettings, scorer: str, options: Any) -> None:
    judge, _spec = open_judge(settings)
    _WORKER["scorer"] = build_scorer(scorer, judge, options)


def _worker_eval(item: Item, context: list[Any]) -> ItemResult:
    scorer = _WORKER["scorer"]
    return evaluate_item(item, [scorer], [scorer.name], context)


class ProcessPoolExecutorBackend:
    """`workers` spawned processes; the judge settings and scorer options must pickle."""

    def __init__(self, workers: int, settings: JudgeSettings, scorer: str, options: Any) -> None:
        self.workers = workers
        self.settings = settings
        self.scorer = scorer
        self.options = options

    def results(self, items: Sequence[Item], context: list[Any]) -> Iterator[ItemResult]:
        with ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=get_context("spawn"),
            initializer=_worker_init,
            initargs=(self.settings, self.scorer, self.options),
        ) as pool:
            yield from pool.map(_worker_eval, items, [context] * len(items))
