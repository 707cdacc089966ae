"""`cassette verify --live --data`: how far a live re-run moves the scores, item by item.

Re-running single exchanges (`rerun`) says whether each answer comes back, but not what a
changed answer does to a score: a changed claim changes the next request too. Here each sampled
item is scored twice, from the cassette and live, and every live request that a record answers
is compared with it on the way (a request no record answers is counted: it follows an earlier
drift within the same item).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from offline_scorer.assembly.rerun import RerunReport, compare
from offline_scorer.assembly.run_spec import RunSpec
from offline_scorer.batch.datasets import DataItem, RowError
from offline_scorer.batch.run import ItemResult, evaluate_item, item_context
from offline_scorer.cassette.key import key_parts
from offline_scorer.cassette.modes import RecordMode
from offline_scorer.cassette.records import from_payload
from offline_scorer.cassette.store.file import CassetteFile
from offline_scorer.judging.protocol import (
    Completion,
    Judge,
    JudgeBase,
    JudgeIdentity,
    JudgeRequest,
)
from offline_scorer.scorers.protocol import Scorer

__all__ = ["ItemDrift", "item_drift"]


@dataclass(frozen=True)
class ItemDrift:
    id: str
    recorded: float | None  # None: the item failed (its error is the result)
    live: float | None

    @property
    def change(self) -> float | None:
        if self.recorded is None or self.live is None:
            return None
        return float(self.live) - float(self.recorded)


class _ComparingJudge(JudgeBase):
    """The live judge, comparing each answer with the record of the same key, if any."""

    def __init__(self, live: Judge, cassette: CassetteFile, report: RerunReport) -> None:
        self.live, self.cassette, self.report = live, cassette, report

    @property
    def identity(self) -> JudgeIdentity | None:
        return self.live.identity

    def runtime_versions(self) -> dict[str, str]:
        return self.live.runtime_versions()

    def complete(self, request: JudgeRequest) -> Completion:
        completion = self.live.complete(request)
        identity = self.live.identity
        key = None if identity is None else key_parts(request, identity).digest()
        payload = None if key is None else self.cassette.get_exchange(key)
        if key is None or payload is None:
            self.report.unmatched += 1
        else:
            exchange = from_payload(self.cassette, key, payload)
            self.report.add(f"{key.hex()[:12]} {request.step}", compare(exchange, completion))
        return completion

    def close(self) -> None:
        self.live.close()


def _score(scorer: Scorer, item: DataItem | RowError) -> float | None:
    result: ItemResult = evaluate_item(item, [scorer], [scorer.name], item_context([scorer]))
    if not result.ok:
        return None
    return float(next(iter(result.results.values())).score)


def item_drift(
    run: RunSpec, cassette: Path, items: Sequence[DataItem | RowError]
) -> tuple[RerunReport, list[ItemDrift]]:
    """Score `items` from `cassette` and live (the run's model, backend and threads)."""
    report = RerunReport()
    replayed = dataclasses.replace(run.judge, cassette=cassette, mode=RecordMode.REPLAY)
    live_settings = dataclasses.replace(run.judge, mode=RecordMode.OFF)
    drifts = []
    replay_judge, _ = dataclasses.replace(run, judge=replayed).open_judge()
    with replay_judge, CassetteFile(cassette, create=False) as records:
        live_judge, _ = dataclasses.replace(run, judge=live_settings).open_judge()
        with _ComparingJudge(live_judge, records, report) as comparing:
            replay_scorer, live_scorer = run.scorer_on(replay_judge), run.scorer_on(comparing)
            for item in items:
                drifts.append(
                    ItemDrift(item.id, _score(replay_scorer, item), _score(live_scorer, item))
                )
    return report, drifts
