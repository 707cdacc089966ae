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
from dataclasses import dataclass, field
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
from offline_scorer.errors import ClusterError
from offline_scorer.scorers.protocol import Scorer


@dataclass
class _Task:
    index: int
    item: Item
    attempts: int = 0


@dataclass
class _Run:
    """The driver's bookkeeping for one `results` call, in one object so the helpers the loop
    is split into share it; made afresh per call, as the locals it replaces were, so runs on
    one executor stay independent."""

    source: Iterator[tuple[int, Item]]
    window: int  # items admitted ahead of the next one to write: bounds `finished`
    idle: deque[Slot]  # one entry per free lane
    retry: deque[_Task] = field(default_factory=deque)  # items whose actor died
    inflight: dict[Any, tuple[Slot, _Task]] = field(default_factory=dict)  # by result reference
    finished: dict[int, Scored] = field(default_factory=dict)  # scored, not yet written
    next_out: int = 0  # index of the next item to write
    taken: int = 0  # items read from `source`
    exhausted: bool = False
    stranded_since: float | None = None  # when the last actor was lost with work left

    def next_task(self) -> _Task | None:
        """The next task to dispatch: a retry first (it is the oldest work), else a fresh item
        if the window has room; None when there is nothing to dispatch now."""
        if self.retry:
            return self.retry.popleft()
        if self.exhausted or self.taken - self.next_out >= self.window:
            return None
        nxt = next(self.source, None)
        if nxt is None:
            self.exhausted = True
            return None
        self.taken += 1
        return _Task(*nxt)


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
                recipe.prepare_cassette()  # the actors' snapshot needs the file
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
        """Score `items` on the actors and yield their results in input order (the executor
        protocol `run_evals` and `eval` call). Each pass of the loop dispatches to free lanes,
        writes what is next in order, then waits for one reply; Ctrl-C is taken only between
        passes, so the cassette never holds an item without its results line."""
        ray = self._ray
        if ray is None or self._judge is None:
            raise ClusterError("the Ray executor is not started; use it in a with-block")
        target_ref = None if target is None else ray.put(target)
        source = enumerate(items)
        pool = self._pool
        assert pool is not None
        run = _Run(source, window=max(16, 4 * len(pool.slots)), idle=pool.idle_lanes())
        with deferred_interrupts() as interrupt:
            while True:
                interrupt.check()  # Ctrl-C lands here, between whole items
                self._dispatch(run, context, target_ref)
                while run.next_out in run.finished:
                    yield self._deliver(run.finished.pop(run.next_out))
                    run.next_out += 1
                if not run.inflight and run.exhausted and not run.retry:
                    return
                if not run.inflight and run.idle:  # the lines just written made room: dispatch more
                    continue
                self._check_stranded(run, pool)
                self._collect(ray, run, pool, context)

    def _dispatch(self, run: _Run, context: list[Any], target_ref: Any) -> None:
        """Give every free lane a task (retries first), so no actor idles while work is
        admitted; the window in `_Run.next_task` keeps the reorder buffer bounded."""
        while run.idle:
            task = run.next_task()
            if task is None:
                return
            slot = run.idle.popleft()
            ref = slot.actor.score.remote(task.item, context, target_ref)
            run.inflight[ref] = (slot, task)

    def _check_stranded(self, run: _Run, pool: ActorPool) -> None:
        """With work left and nothing in flight (every actor lost), wait for a replacement,
        but stop the run if none is starting or none is ready within `start_timeout`, rather
        than wait forever; the items already written stay on disk for --resume."""
        if run.inflight:
            run.stranded_since = None
            return
        run.stranded_since = run.stranded_since or time.monotonic()
        if not pool.starting or time.monotonic() - run.stranded_since > self.start_timeout:
            raise ClusterError(
                "every Ray actor was lost and none could be started again; "
                "finished items are on disk: continue with --resume"
            )

    def _collect(self, ray: ModuleType, run: _Run, pool: ActorPool, context: list[Any]) -> None:
        """Wait (at most a second, so Ctrl-C is seen) for one reply: a replacement actor ready
        joins the idle lanes, a scored item joins the reorder buffer, and a lost actor's item
        is retried elsewhere until `max_attempts`, then becomes an error line so the run
        finishes. An error the scorer raised is re-raised as a serial run would."""
        ready, _ = ray.wait([*run.inflight, *pool.starting], num_returns=1, timeout=1.0)
        for ref in ready:
            if ref in pool.starting:
                pool.replacement_ready(ref, run.idle)
                continue
            slot, task = run.inflight.pop(ref)
            try:
                run.finished[task.index] = ray.get(ref)
                run.idle.append(slot)
            except ray.exceptions.RayTaskError as error:
                raise_cause(error)
            except (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError):
                pool.lost(slot, run.idle)
                task.attempts += 1
                if task.attempts < self.max_attempts:
                    run.retry.append(task)
                else:
                    run.finished[task.index] = Scored(self._lost_item(task, slot, context), (), 0)

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
