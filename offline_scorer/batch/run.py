"""Batch evaluation in Mastra's shape: `run_evals(target=..., scorers=[...], data=[...])`.

An item that cannot be read or scored becomes a failed item with its error, and the run goes on
(unless `fail_fast`). Model problems (missing file, wrong digest) are not item failures: they
would fail every item, so they stop the run.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from offline_scorer.batch.datasets import DataItem, RowError, digest, item_from_mapping
from offline_scorer.errors import InputError, ModelError, OfflineScorerError
from offline_scorer.scorers.summarization.result import ScorerResult
from offline_scorer.scorers.summarization.scorer import SummarizationScorer

Target = Callable[[Any], Any]


@dataclass(frozen=True)
class ItemError:
    type: str
    message: str


@dataclass(frozen=True)
class ItemResult:
    id: str
    line: int | None
    digest: str
    results: Mapping[str, ScorerResult] = field(default_factory=dict)
    error: ItemError | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_line(self, scorer: str | None = None) -> str:
        """The results-file line for one scorer: fixed key order, one line, stable bytes."""
        result = self.results.get(scorer or next(iter(self.results), "")) if self.ok else None
        outcome = result.outcome if result is not None else None
        record = {
            "id": self.id,
            "line": self.line,
            "digest": self.digest,
            "status": "ok" if result is not None else "error",
            "score": result.score if result is not None else None,
            "alignment": outcome.alignment if outcome is not None else None,
            "coverage": outcome.coverage if outcome is not None else None,
            "limiting_axis": outcome.limiting_axis if outcome is not None else None,
            "result": result.to_dict() if result is not None else None,
            "error": None
            if self.error is None
            else {"type": self.error.type, "message": self.error.message},
            "metadata": dict(self.metadata),
        }
        return dump_line(record)


def dump_line(record: Mapping[str, Any]) -> str:
    """The bytes of a results line (compact JSON, UTF-8 text kept as is)."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def with_metadata(record: Mapping[str, Any], metadata: Mapping[str, Any]) -> dict[str, Any]:
    """A parsed results line with its "metadata" set, in its place right after "error".

    `--resume` uses it to bring kept lines up to date: lines written before results lines had
    metadata lack the key, and a row's metadata may have been edited since (it never changes a
    score, so the line is still valid).
    """
    out: dict[str, Any] = {}
    for key, value in record.items():
        if key == "metadata":
            continue
        out[key] = value
        if key == "error":
            out["metadata"] = dict(metadata)
    out.setdefault("metadata", dict(metadata))
    return out


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


def scorer_names(scorers: Sequence[SummarizationScorer]) -> list[str]:
    names: list[str] = []
    for scorer in scorers:
        base = getattr(scorer, "name", "summarization")
        name, n = base, 2
        while name in names:
            name, n = f"{base}-{n}", n + 1
        names.append(name)
    return names


def item_context(scorers: Sequence[SummarizationScorer]) -> list[Any]:
    """What besides an item's content decides its results: options and judge identities."""
    context: list[Any] = []
    for scorer in scorers:
        identity = getattr(scorer.judge, "identity", None)
        context.append(
            [
                scorer.options.max_questions,
                scorer.options.scale,
                None
                if identity is None
                else [identity.model_sha256, identity.chat_template_sha256, identity.backend],
            ]
        )
    return context


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
        return digest(item.raw.hex(), context)
    return digest(item.content(), context)


def evaluate_item(
    item: DataItem | RowError,
    scorers: Sequence[SummarizationScorer],
    names: Sequence[str],
    context: Sequence[Any],
    target: Target | None = None,
) -> ItemResult:
    key = item_digest(item, context)
    if isinstance(item, RowError):
        return ItemResult(item.id, item.line, key, error=ItemError("InputError", item.message))
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
            error=ItemError(type(error).__name__, str(error)),
            metadata=meta,
        )
    except Exception as error:  # a user's target failing is that item's failure
        if target is None:
            raise
        return ItemResult(
            item.id,
            item.line,
            key,
            metadata=meta,
            error=ItemError(type(error).__name__, f"target raised: {error}"),
        )
    return ItemResult(item.id, item.line, key, results=results, metadata=meta)


def run_evals(
    *,
    data: Iterable[Any],
    scorers: Sequence[SummarizationScorer],
    target: Target | None = None,
    on_item_complete: Callable[[ItemResult], None] | None = None,
    fail_fast: bool = False,
) -> EvalRun:
    """Score every item with every scorer; failures are recorded per item."""
    if not scorers:
        raise InputError("run_evals needs at least one scorer")
    names = scorer_names(scorers)
    context = item_context(scorers)
    items = []
    for index, row in enumerate(data):
        result = evaluate_item(as_item(row, index), scorers, names, context, target)
        items.append(result)
        if on_item_complete is not None:
            on_item_complete(result)
        if fail_fast and not result.ok:
            break
    return EvalRun(items)
