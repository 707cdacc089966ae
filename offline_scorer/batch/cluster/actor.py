"""The scoring actor: one judge slot on one node, its model loaded once and verified first.

A plain class; `executor` turns it into a Ray actor class, so this module never imports Ray at
import time (a worker node imports it by name). The actor writes no file: what its judge
records travels back with each item, and the driver writes it.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from offline_scorer.batch.cluster.snapshot import Snapshot, materialize, release
from offline_scorer.batch.datasets import Item
from offline_scorer.batch.recipe import Recipe
from offline_scorer.batch.run import ItemResult, Target, evaluate_item
from offline_scorer.cassette.judge import Recorded, cassette_stats
from offline_scorer.errors import ModelError
from offline_scorer.judging.protocol import Judge, JudgeIdentity
from offline_scorer.scorers.protocol import Scorer

# What must be the same on every node for a live run to give the same bytes as a serial one.
PACKAGES = ("offline-scorer", "llama-cpp-python", "llguidance", "outlines", "pydantic", "msgpack")


def package_versions() -> dict[str, str]:
    found = {}
    for name in PACKAGES:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = "not installed"
    return found


@dataclass(frozen=True)
class Started:
    node: str
    identity: JudgeIdentity | None
    versions: Mapping[str, str]


@dataclass(frozen=True)
class Scored:
    """One item's result, the exchanges its judge answered live, and how many it replayed."""

    result: ItemResult
    exchanges: tuple[Recorded, ...]
    hits: int


def node_label() -> str:
    """How errors name this node: its IP and the start of its Ray node id."""
    import ray

    context = ray.get_runtime_context()
    return f"{ray.util.get_node_ip_address()} (node {context.get_node_id()[:8]})"


class ItemScorer:
    """Scores items one at a time with a judge opened once, from the driver's recipe."""

    def __init__(
        self, recipe: Recipe, expected_sha256: str | None, snapshot: Snapshot | None
    ) -> None:
        self.recipe = recipe
        self.expected_sha256 = expected_sha256
        self.snapshot = snapshot
        self.captured: list[Recorded] = []
        self.judge: Judge | None = None
        self.scorer: Scorer | None = None

    def start(self) -> Started:
        """Verify and load the model (not in replay: no model on any node); a ModelError names
        this node and the digest the driver expects."""
        node = node_label()
        recipe = self.recipe
        try:
            if recipe.mode.runs_model:
                recipe.verify_model(self.expected_sha256)
            copy = None if self.snapshot is None else materialize(self.snapshot)
            try:
                if copy is not None:
                    recipe = recipe.with_cassette(copy)
                self.scorer = recipe.open_scorer(sink=self.captured.append)
                self.judge = self.scorer.judge
            finally:
                if copy is not None:
                    release(copy)
        except ModelError as error:
            digest = self.expected_sha256
            hint = f" (expected sha256 {digest})" if digest and digest not in str(error) else ""
            raise ModelError(f"node {node}: {error}{hint}") from None
        return Started(node, self.judge.identity, package_versions())

    def score(self, item: Item, context: list[Any], target: Target | None) -> Scored:
        assert self.scorer is not None and self.judge is not None, "start() first"
        self.captured.clear()
        hits_before = _hits(self.judge)
        result = evaluate_item(item, [self.scorer], [self.scorer.name], context, target)
        return Scored(result, tuple(self.captured), _hits(self.judge) - hits_before)


def _hits(judge: Judge) -> int:
    stats = cassette_stats(judge)
    return 0 if stats is None else stats.hits
