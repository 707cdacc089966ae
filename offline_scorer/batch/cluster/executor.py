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

import dataclasses
import time
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from types import ModuleType, TracebackType
from typing import Any

from offline_scorer.batch.cluster.actor import ItemScorer, Scored, Started
from offline_scorer.batch.cluster.connect import connect, import_ray
from offline_scorer.batch.cluster.snapshot import Snapshot, take
from offline_scorer.batch.datasets import DataItem, Item
from offline_scorer.batch.interrupts import deferred_interrupts
from offline_scorer.batch.results import ItemError
from offline_scorer.batch.run import ItemResult, Target, item_digest
from offline_scorer.cassette.judge import CassetteJudge, RecordMode
from offline_scorer.cassette.store.file import CassetteFile
from offline_scorer.errors import CassetteMissError, ClusterError, OfflineScorerError
from offline_scorer.judging.open import JudgeSettings
from offline_scorer.models.registry import load_registry
from offline_scorer.scorers import build_scorer
from offline_scorer.scorers.protocol import Scorer
from offline_scorer.settings import default_cassette


@dataclass
class _Slot:
    actor: Any  # a Ray actor handle
    started: Started | None = None
    dead: bool = False


@dataclass
class _Task:
    index: int
    item: Item
    attempts: int = 0


class RayExecutor:
    """Runs `eval` on a Ray cluster; use as a context manager (it stops its actors on exit)."""

    def __init__(
        self,
        settings: JudgeSettings,
        scorer: str,
        options: Any,
        *,
        address: str | None = None,
        actors: int | None = None,
        max_attempts: int = 3,
        start_timeout: float = 600.0,
    ) -> None:
        """`actors`: judge slots (default: as many as the cluster's CPUs hold at `threads`
        each); `start_timeout`: seconds to wait for an actor to be placed and load its model."""
        self.settings = dataclasses.replace(settings, threads=settings.threads or 1)
        self.scorer_name = scorer
        self.options = options
        self.address = address
        self.actors = actors
        self.max_attempts = max_attempts
        self.start_timeout = start_timeout
        # Items queued on one actor: replayed items take a fraction of a millisecond, so a second
        # one waiting hides the round trip; a live item takes seconds, so any free actor gets it.
        self.depth = 2 if settings.mode is RecordMode.REPLAY else 1
        self._ray: ModuleType | None = None
        self._owns_ray = False
        self._slots: list[_Slot] = []
        self._actor_class: Any = None
        self._expected_sha256: str | None = None
        self._snapshot: Snapshot | None = None
        self._replacements = 0
        self._count = 0
        self._judge: CassetteJudge | None = None
        self._scorer: Scorer | None = None

    # -- life cycle

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
        settings = self.settings
        mode = settings.mode
        path = settings.cassette or default_cassette()
        if mode is RecordMode.REPLAY and not path.exists():
            raise CassetteMissError(
                f"replay: cassette {path} does not exist; record it first with --record-mode auto"
            )
        self._owns_ray = connect(ray, self.address)
        try:
            if mode is not RecordMode.REPLAY:
                self._expected_sha256 = load_registry().resolve(settings.model).sha256
            if mode in (RecordMode.AUTO, RecordMode.RECORD):
                path.parent.mkdir(parents=True, exist_ok=True)
                CassetteFile(path, create=True).close()  # the actors' snapshot needs the file
            if mode in (RecordMode.AUTO, RecordMode.REPLAY):
                self._snapshot = take(path, ray.put)
            count = self._slot_count(ray)
            self._actor_class = ray.remote(num_cpus=settings.threads, max_restarts=0)(ItemScorer)
            self._count = count
            slots = [self._new_slot() for _ in range(count)]
            started = self._await_start(slots)
            identity = _agreed_identity(started)
            self._slots = slots
            self._judge = CassetteJudge(
                None if mode is RecordMode.OFF else path, mode=mode, identity=identity, live=None
            )
            self._scorer = build_scorer(self.scorer_name, self._judge, self.options)
        except BaseException:
            self.close()
            raise

    def _slot_count(self, ray: ModuleType) -> int:
        threads = self.settings.threads or 1
        cpus = int(ray.cluster_resources().get("CPU", 0))
        count = self.actors or max(1, cpus // threads)
        if count * threads > cpus:
            raise ClusterError(
                f"{count} actor(s) x {threads} thread(s) need {count * threads} CPUs and the "
                f"Ray cluster has {cpus}; lower --workers or --threads, or add nodes"
            )
        return count

    def _new_slot(self) -> _Slot:
        actor = self._actor_class.remote(
            self.settings,
            self.scorer_name,
            self.options,
            self._expected_sha256,
            self._snapshot,
        )
        return _Slot(actor)

    def _await_start(self, slots: list[_Slot]) -> list[Started]:
        ray = self._ray
        assert ray is not None
        refs = [slot.actor.start.remote() for slot in slots]
        _ready, pending = ray.wait(refs, num_returns=len(refs), timeout=self.start_timeout)
        if pending:
            raise ClusterError(
                f"{len(pending)} of {len(refs)} actor(s) did not start within "
                f"{self.start_timeout:.0f} s (no node with {self.settings.threads} free CPU(s)?)"
            )
        started = [_result(ray, ref) for ref in refs]
        for slot, info in zip(slots, started, strict=True):
            slot.started = info
        return started

    def close(self) -> None:
        """Stop every actor (and the local Ray instance this executor started)."""
        ray, self._ray = self._ray, None
        if ray is None:
            return
        for slot in self._slots:
            if not slot.dead:
                ray.kill(slot.actor, no_restart=True)
        self._slots = []
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
        window = max(16, 4 * len(self._slots))
        retry: deque[_Task] = deque()
        idle: deque[_Slot] = deque(
            slot
            for slot in self._slots
            if slot.started and not slot.dead
            for _ in range(self.depth)
        )
        inflight: dict[Any, tuple[_Slot, _Task]] = {}
        starting: dict[Any, _Slot] = {}
        finished: dict[int, Scored | ItemResult] = {}
        next_out = taken = 0
        exhausted = False
        stranded_since: float | None = None
        with deferred_interrupts() as interrupt:
            try:
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
                    if not inflight:  # work left and no actor alive: wait for a replacement
                        stranded_since = stranded_since or time.monotonic()
                        if not starting or time.monotonic() - stranded_since > self.start_timeout:
                            raise ClusterError(
                                "every Ray actor was lost and none could be started again; "
                                "finished items are on disk: continue with --resume"
                            )
                    else:
                        stranded_since = None
                    ready, _ = ray.wait([*inflight, *starting], num_returns=1, timeout=1.0)
                    for ref in ready:
                        if ref in starting:
                            self._replacement_ready(starting.pop(ref), ref, idle)
                            continue
                        slot, task = inflight.pop(ref)
                        try:
                            finished[task.index] = ray.get(ref)
                            idle.append(slot)
                        except ray.exceptions.RayTaskError as error:
                            _raise_cause(error)
                        except (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError):
                            self._lost(slot, idle, starting)
                            task.attempts += 1
                            if task.attempts < self.max_attempts:
                                retry.append(task)
                            else:
                                finished[task.index] = self._lost_item(task, slot, context)
            finally:
                for slot, _task in inflight.values():  # an abandoned run's actors are not reused
                    self._retire(slot)

    def _deliver(self, done: Scored | ItemResult) -> ItemResult:
        """Write the item's exchanges to the cassette (in input order), then hand it over."""
        if isinstance(done, ItemResult):
            return done
        judge = self.judge
        for exchange in done.exchanges:
            judge.record(exchange)
        judge.hits += done.hits
        return done.result

    def _retire(self, slot: _Slot) -> None:
        if not slot.dead and self._ray is not None:
            slot.dead = True
            self._ray.kill(slot.actor, no_restart=True)

    def _lost(self, slot: _Slot, idle: deque[_Slot], starting: dict[Any, _Slot]) -> None:
        """Drop a dead actor (once) and start a replacement while the budget lasts."""
        if slot.dead:
            return
        slot.dead = True
        while slot in idle:
            idle.remove(slot)
        if self._replacements < self._count * self.max_attempts:
            self._replacements += 1
            fresh = self._new_slot()
            self._slots.append(fresh)
            starting[fresh.actor.start.remote()] = fresh

    def _replacement_ready(self, slot: _Slot, ref: Any, idle: deque[_Slot]) -> None:
        ray = self._ray
        assert ray is not None
        try:
            slot.started = _result(ray, ref)
        except ClusterError:
            slot.dead = True
            return
        _agreed_identity([s.started for s in self._slots if s.started is not None])
        idle.extend([slot] * self.depth)

    def _lost_item(self, task: _Task, slot: _Slot, context: list[Any]) -> ItemResult:
        node = slot.started.node if slot.started else "an unknown node"
        item = task.item
        return ItemResult(
            item.id,
            item.line,
            item_digest(item, context),
            error=ItemError(
                "WorkerLost",
                f"the actor scoring this item died {task.attempts} time(s), last on {node}; "
                "it was not scored (rerun it with --resume after fixing the node)",
            ),
            metadata=item.metadata if isinstance(item, DataItem) else {},
            axes=self.scorer.axes,
        )


def _raise_cause(error: Exception) -> None:
    """Raise a user-facing error an actor raised as the driver would have raised it serially;
    anything else (a bug) keeps Ray's error, which carries the actor's traceback."""
    cause = getattr(error, "cause", None)
    if isinstance(cause, OfflineScorerError):
        raise cause from None
    raise error


def _result(ray: ModuleType, ref: Any) -> Started:
    """An actor's start report; its ModelError (naming the node) is raised as is."""
    try:
        started: Started = ray.get(ref)
    except ray.exceptions.RayTaskError as error:
        _raise_cause(error)
        raise
    except ray.exceptions.RayActorError as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else "no reason given"
        raise ClusterError(f"a Ray actor died while starting: {first}") from None
    return started


def _agreed_identity(started: list[Started]) -> Any:
    """The judge identity every actor reports; a node with another model stops the run."""
    first = started[0]
    for other in started[1:]:
        if other.identity != first.identity:
            raise ClusterError(
                f"node {other.node} judges with {other.identity} but node {first.node} with "
                f"{first.identity}; every node needs the same model file and backend"
            )
    return first.identity
