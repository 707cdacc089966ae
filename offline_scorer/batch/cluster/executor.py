"""`RayExecutor`: score a stream of items on scoring actors, yield the results in input order.

* One long-lived actor per judge slot (`num_cpus` = the judge's threads), each loading and
  verifying the model once. Items go to whichever actor is free (a slow item stalls no shard),
  at most `window` of them dispatched ahead of the next result the driver writes, so the
  driver holds a bounded reorder buffer however long the input is.
* The driver owns every file: an item's recorded exchanges come back with it and are written
  to the cassette by the driver's `CassetteJudge` in input order, just before the item is
  yielded, so results and cassette bytes equal a serial run's.
* An actor that dies (its process killed, its node gone) costs only its in-flight items: they
  go to another actor, up to `max_attempts` tries each, then become an error line; a
  replacement actor is started while the budget lasts.
* Ctrl-C is taken between items only (`batch.interrupts`), so the file never holds an item's
  exchanges without its results line: a resumed run writes the bytes of an uninterrupted one.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from types import ModuleType, TracebackType
from typing import Any

from offline_scorer.batch.cluster.actor import ItemScorer, Scored
from offline_scorer.batch.cluster.connect import connect, import_ray
from offline_scorer.batch.cluster.pool import ActorPool, Slot, raise_cause
from offline_scorer.batch.cluster.snapshot import take
from offline_scorer.batch.datasets import DataItem, Item
from offline_scorer.batch.interrupts import deferred_interrupts
from offline_scorer.batch.recipe import Recipe
from offline_scorer.batch.results import ItemError
from offline_scorer.batch.run import ItemResult, Target, item_digest
from offline_scorer.cassette.judge import CassetteJudge, require_cassette
from offline_scorer.cassette.store.file import CassetteFile
from offline_scorer.errors import ClusterError
from offline_scorer.scorers.protocol import Scorer


@dataclass
class _Task:
    index: int
    item: Item
    attempts: int = 0


class RayExecutor:
    """Runs `eval` on a Ray cluster; use as a context manager (it stops its actors on exit)."""

    def __init__(
        self,
        recipe: Recipe,
        *,
        address: str | None = None,
        actors: int | None = None,
        max_attempts: int = 3,
        start_timeout: float = 600.0,
        depth: int | None = None,
    ) -> None:
        """`actors`: judge slots (default: as many as the cluster's CPUs hold at `threads`
        each); `start_timeout`: seconds to wait for an actor to be placed and load its model;
        `depth`: items queued on one actor. By default 2 in replay, where an item takes a
        fraction of a millisecond and a second one waiting hides the round trip, else 1: a
        live item takes seconds, so the next should go to whichever actor is free first."""
        self.recipe = recipe.with_threads(recipe.threads or 1)
        self.address = address
        self.actors = actors
        self.max_attempts = max_attempts
        self.start_timeout = start_timeout
        self.depth = depth or (1 if recipe.mode.runs_model else 2)
        self._ray: ModuleType | None = None
        self._owns_ray = False
        self._pool: ActorPool | None = None
        self._judge: CassetteJudge | None = None
        self._scorer: Scorer | None = None

    def __enter__(self) -> RayExecutor:
        self.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def judge(self) -> CassetteJudge:
        """The driver's judge: the identity the actors agreed on, and the cassette writer."""
        if self._judge is None:
            raise ClusterError("the Ray executor is not started; use it in a with-block")
        return self._judge

    @property
    def scorer(self) -> Scorer:
        """The scorer the actors run, on the driver's judge (for its name, axes and context)."""
        if self._scorer is None:
            raise ClusterError("the Ray executor is not started; use it in a with-block")
        return self._scorer

    def start(self) -> None:
        """Connect, ship the cassette if actors read it, start every actor and check them."""
        if self._judge is not None:
            return
        ray = self._ray = import_ray()
        recipe = self.recipe
        mode = recipe.mode
        path = recipe.cassette_path()
        if mode.needs_recording:
            require_cassette(path)
        self._owns_ray = connect(ray, self.address)
        try:
            count = self._slot_count(ray)
            expected = None
            if mode.runs_model:
                expected = recipe.pinned_sha256()
            if mode.writes:
                path.parent.mkdir(parents=True, exist_ok=True)
                CassetteFile(path, create=True).close()  # the actors' snapshot needs the file
            snapshot = take(path, ray.put) if mode.reads else None
            self._pool = ActorPool(
                ray,
                ray.remote(num_cpus=recipe.threads, max_restarts=0)(ItemScorer),
                (recipe, expected, snapshot),
                depth=self.depth,
                replacements=count * self.max_attempts,
                start_timeout=self.start_timeout,
            )
            identity = self._pool.start(count)
            assert identity is not None, "a started actor's judge has an identity"
            self._judge = CassetteJudge(
                path if mode.uses_cassette else None, mode=mode, identity=identity, live=None
            )
            self._scorer = recipe.scorer_on(self._judge)
        except BaseException:
            self.close()
            raise

    def _slot_count(self, ray: ModuleType) -> int:
        threads = self.recipe.threads or 1
        cpus = int(ray.cluster_resources().get("CPU", 0))
        count = self.actors or max(1, cpus // threads)
        if count * threads > cpus:
            raise ClusterError(
                f"{count} actor(s) x {threads} thread(s) need {count * threads} CPUs and the "
                f"Ray cluster has {cpus}; lower --workers or --threads, or add nodes"
            )
        return count

    def close(self) -> None:
        """Stop every actor (and the local Ray instance this executor started)."""
        ray, self._ray = self._ray, None
        if ray is None:
            return
        if self._pool is not None:
            self._pool.close()
        if self._judge is not None:
            self._judge.close()
        if self._owns_ray:
            ray.shutdown()
            self._owns_ray = False

    # -- dispatch

    def results(
        self, items: Iterable[Item], context: list[Any], target: Target | None = None
    ) -> Iterator[ItemResult]:
        ray = self._ray
        if ray is None or self._judge is None:
            raise ClusterError("the Ray executor is not started; use it in a with-block")
        target_ref = None if target is None else ray.put(target)
        source = enumerate(items)
        pool = self._pool
        assert pool is not None
        window = max(16, 4 * len(pool.slots))
        retry: deque[_Task] = deque()
        idle = pool.idle_lanes()
        inflight: dict[Any, tuple[Slot, _Task]] = {}
        finished: dict[int, Scored] = {}
        next_out = taken = 0
        exhausted = False
        stranded_since: float | None = None
        with deferred_interrupts() as interrupt:
            while True:
                interrupt.check()  # Ctrl-C lands here, between whole items
                while idle:
                    if retry:
                        task = retry.popleft()
                    elif not exhausted and taken - next_out < window:
                        nxt = next(source, None)
                        if nxt is None:
                            exhausted = True
                            continue
                        task, taken = _Task(*nxt), taken + 1
                    else:
                        break
                    slot = idle.popleft()
                    ref = slot.actor.score.remote(task.item, context, target_ref)
                    inflight[ref] = (slot, task)
                while next_out in finished:
                    yield self._deliver(finished.pop(next_out))
                    next_out += 1
                if not inflight and exhausted and not retry:
                    return
                if not inflight and idle:  # the lines just written made room: dispatch more
                    continue
                if not inflight:  # work left and no actor alive: wait for a replacement
                    stranded_since = stranded_since or time.monotonic()
                    if not pool.starting or time.monotonic() - stranded_since > self.start_timeout:
                        raise ClusterError(
                            "every Ray actor was lost and none could be started again; "
                            "finished items are on disk: continue with --resume"
                        )
                else:
                    stranded_since = None
                ready, _ = ray.wait([*inflight, *pool.starting], num_returns=1, timeout=1.0)
                for ref in ready:
                    if ref in pool.starting:
                        pool.replacement_ready(ref, idle)
                        continue
                    slot, task = inflight.pop(ref)
                    try:
                        finished[task.index] = ray.get(ref)
                        idle.append(slot)
                    except ray.exceptions.RayTaskError as error:
                        raise_cause(error)
                    except (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError):
                        pool.lost(slot, idle)
                        task.attempts += 1
                        if task.attempts < self.max_attempts:
                            retry.append(task)
                        else:
                            finished[task.index] = Scored(
                                self._lost_item(task, slot, context), (), 0
                            )

    def _deliver(self, done: Scored) -> ItemResult:
        """Write the item's exchanges to the cassette (in input order), then hand it over."""
        judge = self.judge
        for exchange in done.exchanges:
            judge.record(exchange)
        judge.add_hits(done.hits)
        return done.result

    def _lost_item(self, task: _Task, slot: Slot, context: list[Any]) -> ItemResult:
        node = slot.node
        item = task.item
        return ItemResult(
            item.id,
            item.line,
            item_digest(item, context),
            self.recipe.kind,
            error=ItemError(
                type="WorkerLost",
                message=f"the actor scoring this item died {task.attempts} time(s), last on "
                f"{node}; it was not scored; score it in a separate run once the node is fixed",
            ),
            metadata=item.metadata if isinstance(item, DataItem) else {},
            axes=self.scorer.axes,
        )
