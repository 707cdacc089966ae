"""Executors: where a batch's items are scored. Results come back in input order.

Serial scores in this process. The process pool starts `workers` processes, each opening its
own scorer from the run's recipe (a model is loaded once per process). The Ray executor
(`batch.cluster`) spreads items over a cluster's actors.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from multiprocessing import get_context
from typing import Any

from offline_scorer.batch.datasets import Item
from offline_scorer.batch.recipe import Recipe
from offline_scorer.batch.run import Executor, ItemResult, Target, evaluate_item
from offline_scorer.scorers.protocol import Scorer

__all__ = ["Executor", "ProcessPoolExecutorBackend", "SerialExecutor"]


class SerialExecutor:
    def __init__(self, scorer: Scorer) -> None:
        self.scorer = scorer

    def results(
        self, items: Iterable[Item], context: list[Any], target: Target | None = None
    ) -> Iterator[ItemResult]:
        for item in items:
            yield evaluate_item(item, [self.scorer], [self.scorer.name], context, target)


_WORKER: dict[str, Scorer] = {}


def _worker_init(recipe: Recipe) -> None:
    _WORKER["scorer"] = recipe.open_scorer()


def _worker_eval(item: Item, context: list[Any], target: Target | None) -> ItemResult:
    scorer = _WORKER["scorer"]
    return evaluate_item(item, [scorer], [scorer.name], context, target)


class ProcessPoolExecutorBackend:
    """`workers` spawned processes; the recipe (settings and scorer options) must pickle."""

    def __init__(self, workers: int, recipe: Recipe) -> None:
        self.workers = workers
        self.recipe = recipe

    def results(
        self, items: Iterable[Item], context: list[Any], target: Target | None = None
    ) -> Iterator[ItemResult]:
        with ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=get_context("spawn"),
            initializer=_worker_init,
            initargs=(self.recipe,),
        ) as pool:
            window: deque[Future[ItemResult]] = deque()
            for item in items:  # a bounded window: pool.map would read the whole stream first
                window.append(pool.submit(_worker_eval, item, context, target))
                if len(window) >= 2 * self.workers:
                    yield window.popleft().result()
            while window:
                yield window.popleft().result()
