"""What batch runs and reports need of any scorer and its result, and nothing more.

A second scorer is a sibling folder of `summarization/` whose scorer and result satisfy these
protocols, registered with a `ScorerSpec`; batch, report, cassettes and backends then work with
it unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from offline_scorer.judging.protocol import Judge


class ScoreResult(Protocol):
    @property
    def score(self) -> float | int: ...

    @property
    def axes(self) -> Mapping[str, float | int]:
        """Named sub-scores, in display order (e.g. alignment, coverage)."""
        ...

    @property
    def limiting_axis(self) -> str | None: ...

    def to_dict(self) -> dict[str, Any]: ...

    def to_json(self) -> str: ...


class Scorer(Protocol):
    name: str
    steps: tuple[str, ...]  # the judge requests one evaluation makes, in order
    axes: tuple[str, ...]  # names of the sub-scores its results carry, in display order
    judge: Judge

    def run(self, run: Mapping[str, Any]) -> ScoreResult: ...

    def identity(self) -> Mapping[str, Any]:
        """Its options and each step's sampling settings, as JSON values: with the judge's
        identity, what besides an item's content decides a result (the resume digest)."""
        ...
