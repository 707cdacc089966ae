"""Batch evaluation in Mastra's shape: `run_evals(target=..., scorers=[...], data=[...])`.

An item that cannot be read or scored becomes a failed item with its error, and the run goes on
(unless `fail_fast`). Model problems (missing file, wrong digest) are not item failures: they
would fail every item, so they stop the run.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from offline_scorer.batch.datasets import (
    DataItem,
    Item,
    RowError,
    content_digest,
    item_from_mapping,
)
from offline_scorer.batch.results import ItemError, ResultsLine
from offline_scorer.errors import InputError, ModelError, OfflineScorerError
from offline_scorer.judging.protocol import JudgeIdentity
from offline_scorer.scorers.protocol import Scorer, ScoreResult

Target = Callable[[Any], Any]


@dataclass(frozen=True)
class ItemResult:
    id: str
    line: int | None
    digest: str
    kind: str  # the scorer kind its results line names
    results: Mapping[str, ScoreResult] = field(default_factory=dict)
    error: ItemError | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    axes: tuple[str, ...] = ()  # the scorer's axis names, null in a failed item's line

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_results_line(self, scorer: str | None = None) -> ResultsLine:
        """The results line for one scorer (the first by default)."""
        result = self.results.get(scorer or next(iter(self.results), "")) if self.ok else None
        if result is None:
            return ResultsLine(
                scorer=self.kind,
                id=self.id,
                line=self.line,
                digest=self.digest,
                status="error",
                axes=dict.fromkeys(self.axes),
                error=self.error,
                metadata=dict(self.metadata),
            )
        return ResultsLine(
            scorer=self.kind,
            id=self.id,
            line=self.line,
            digest=self.digest,
            status="ok",
            score=result.score,
            axes=dict(result.axes),
            limiting_axis=result.limiting_axis,
            result=result.to_dict(),
            metadata=dict(self.metadata),
        )

    def to_line(self, scorer: str | None = None) -> str:
        """The results-file line for one scorer (the first by default)."""
        return self.to_results_line(scorer).to_line()


@dataclass
class EvalRun:
    items: list[ItemResult]

    @property
    def scores(self) -> dict[str, float | None]:
        """Mean score per scorer over the items that were scored (Mastra's `scores`)."""
        names = {name for item in self.items for name in item.results}
        out: dict[str, float | None] = {}
        for name in sorted(names):
            values = [float(i.results[name].score) for i in self.items if name in i.results]
            out[name] = statistics.fmean(values) if values else None
        return out

    @property
    def summary(self) -> dict[str, int]:
        failed = sum(1 for item in self.items if not item.ok)
        return {"totalItems": len(self.items), "failed": failed}


def scorer_names(scorers: Sequence[Scorer]) -> list[str]:
    names: list[str] = []
    for scorer in scorers:
        base = scorer.name
        name, n = base, 2
        while name in names:
            name, n = f"{base}-{n}", n + 1
        names.append(name)
    return names


def scorer_context(scorer: Scorer, identity: JudgeIdentity | None) -> list[Any]:
    """What besides an item's content decides a scorer's result: its kind, its options and
    sampling, and the whole identity of its judge (model, chat template, backend and its
    version, verdict threshold). The resume digest covers it, so changing any of them
    makes `--resume` score the item again."""
    return [scorer.name, scorer.identity(), None if identity is None else asdict(identity)]


def item_context(scorers: Sequence[Scorer]) -> list[Any]:
    """The digest context of a run with these scorers, each over its own judge."""
    return [scorer_context(scorer, scorer.judge.identity) for scorer in scorers]


def as_item(row: Any, index: int) -> DataItem | RowError:
    if isinstance(row, DataItem | RowError):
        return row
    if not isinstance(row, Mapping):
        return RowError(
            f"item-{index + 1}",
            None,
            f"item {index + 1}: expected an object, got {type(row).__name__}",
        )
    try:
        return item_from_mapping(row, None, f"item-{index + 1}")
    except InputError as error:
        return RowError(
            str(row.get("id") or f"item-{index + 1}"), None, f"item {index + 1}: {error}"
        )


def item_digest(item: DataItem | RowError, context: Sequence[Any]) -> str:
    """The content digest a results line carries, matched by --resume."""
    if isinstance(item, RowError):
        return content_digest(item.raw.hex(), context)
    return content_digest(item.content(), context)


def evaluate_item(
    item: DataItem | RowError,
    scorers: Sequence[Scorer],
    names: Sequence[str],
    context: Sequence[Any],
    target: Target | None = None,
) -> ItemResult:
    key = item_digest(item, context)
    kind, axes = scorers[0].name, scorers[0].axes
    if isinstance(item, RowError):
        error = ItemError(type="InputError", message=item.message)
        return ItemResult(item.id, item.line, key, kind, error=error, axes=axes)
    meta = item.metadata
    try:
        if target is not None:
            output = target(item.input)
        elif item.has_output:
            output = item.output
        else:
            raise InputError(f"item {item.id!r} has no 'output' and no target was given")
        results = {
            name: scorer.run({"input": item.input, "output": output})
            for name, scorer in zip(names, scorers, strict=True)
        }
    except ModelError:
        raise
    except OfflineScorerError as error:
        return ItemResult(
            item.id,
            item.line,
            key,
            kind,
            error=ItemError(type=type(error).__name__, message=str(error)),
            metadata=meta,
            axes=axes,
        )
    except Exception as error:  # a user's target failing is that item's failure
        if target is None:
            raise
        return ItemResult(
            item.id,
            item.line,
            key,
            kind,
            metadata=meta,
            error=ItemError(type=type(error).__name__, message=f"target raised: {error}"),
            axes=axes,
        )
    return ItemResult(item.id, item.line, key, kind, results=results, metadata=meta, axes=axes)


class Executor(Protocol):
    """Scores a stream of items; yields one result per item, in input order.

    `items` may be a generator over a file of millions of rows: an executor takes from it only
    as fast as it scores, so the caller's memory stays bounded.
    """

    def results(
        self, items: Iterable[Item], context: list[Any], target: Target | None = None
    ) -> Iterator[ItemResult]: ...


def run_evals(
    *,
    data: Iterable[Any],
    scorers: Sequence[Scorer],
    target: Target | None = None,
    on_item_complete: Callable[[ItemResult], None] | None = None,
    fail_fast: bool = False,
    executor: Executor | None = None,
) -> EvalRun:
    """Score every item with every scorer; failures are recorded per item.

    With an `executor` (a `RayExecutor`, say) items are scored where it says, by the one scorer
    it runs: pass `scorers=[executor.scorer]`.
    """
    if not scorers:
        raise InputError("run_evals needs at least one scorer")
    if executor is not None and len(scorers) != 1:
        raise InputError("run_evals with an executor takes its one scorer: [executor.scorer]")
    names = scorer_names(scorers)
    context = item_context(scorers)
    rows = (as_item(row, index) for index, row in enumerate(data))
    results = (
        (evaluate_item(item, scorers, names, context, target) for item in rows)
        if executor is None
        else executor.results(rows, context, target)
    )
    items = []
    for result in results:
        items.append(result)
        if on_item_complete is not None:
            on_item_complete(result)
        if fail_fast and not result.ok:
            break
    return EvalRun(items)
