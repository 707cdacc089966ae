"""The scoring actors of one run: started, checked to agree, replaced when lost, stopped.

A *lane* is one item an actor may hold: an idle actor appears in the idle queue once per free
lane (`depth` lanes per actor), so dispatch is a pop and a finished item an append.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from types import ModuleType
from typing import Any, NoReturn

from offline_scorer.batch.cluster.actor import Started, package_versions
from offline_scorer.errors import ClusterError, OfflineScorerError
from offline_scorer.judging.protocol import JudgeIdentity


@dataclass
class Slot:
    actor: Any  # a Ray actor handle
    started: Started | None = None
    dead: bool = False

    @property
    def node(self) -> str:
        return self.started.node if self.started else "an unknown node"


class ActorPool:
    def __init__(
        self,
        ray: ModuleType,
        actor_class: Any,
        args: tuple[Any, ...],
        *,
        depth: int,
        replacements: int,
        start_timeout: float,
    ) -> None:
        """`actor_class` is the Ray actor class made with `args`; `replacements` bounds how
        many lost actors are replaced in all."""
        self.ray = ray
        self.actor_class = actor_class
        self.args = args
        self.depth = depth
        self.replacements_left = replacements
        self.start_timeout = start_timeout
        self.slots: list[Slot] = []
        self.starting: dict[Any, Slot] = {}  # replacements not yet ready, by start reference

    def _new(self) -> Slot:
        slot = Slot(self.actor_class.remote(*self.args))
        self.slots.append(slot)
        return slot

    def start(self, count: int) -> JudgeIdentity | None:
        """Start `count` actors, wait until each verified and loaded its model; their identity."""
        fresh = [self._new() for _ in range(count)]
        refs = [slot.actor.start.remote() for slot in fresh]
        _ready, pending = self.ray.wait(refs, num_returns=len(refs), timeout=self.start_timeout)
        if pending:
            raise ClusterError(
                f"{len(pending)} of {len(refs)} actor(s) did not start within "
                f"{self.start_timeout:.0f} s (no node with enough free CPUs?)"
            )
        for slot, ref in zip(fresh, refs, strict=True):
            slot.started = started_report(self.ray, ref)
        return agreed_identity([slot.started for slot in fresh if slot.started])

    def idle_lanes(self) -> deque[Slot]:
        return deque(
            slot for slot in self.slots if slot.started and not slot.dead for _ in range(self.depth)
        )

    def lost(self, slot: Slot, idle: deque[Slot]) -> None:
        """Drop a dead actor (once) and start a replacement while the budget lasts."""
        if slot.dead:
            return
        slot.dead = True
        while slot in idle:
            idle.remove(slot)
        if self.replacements_left > 0:
            self.replacements_left -= 1
            fresh = self._new()
            self.starting[fresh.actor.start.remote()] = fresh

    def replacement_ready(self, ref: Any, idle: deque[Slot]) -> None:
        slot = self.starting.pop(ref)
        try:
            slot.started = started_report(self.ray, ref)
        except ClusterError:
            slot.dead = True
            return
        agreed_identity([s.started for s in self.slots if s.started is not None])
        idle.extend([slot] * self.depth)

    def close(self) -> None:
        for slot in self.slots:
            if not slot.dead:
                slot.dead = True
                self.ray.kill(slot.actor, no_restart=True)
        self.slots = []
        self.starting = {}


def raise_cause(error: Exception) -> NoReturn:
    """Raise a user-facing error an actor raised as the driver would have raised it serially;
    anything else (a bug) keeps Ray's error, which carries the actor's traceback."""
    cause = getattr(error, "cause", None)
    if isinstance(cause, OfflineScorerError):
        raise cause from None
    raise error


def started_report(ray: ModuleType, ref: Any) -> Started:
    """An actor's start report; its ModelError (naming the node) is raised as is."""
    try:
        started: Started = ray.get(ref)
    except ray.exceptions.RayTaskError as error:
        raise_cause(error)
    except ray.exceptions.RayActorError as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else "no reason given"
        raise ClusterError(f"a Ray actor died while starting: {first}") from None
    return started


def agreed_identity(started: list[Started]) -> JudgeIdentity | None:
    """The judge identity every actor reports; a node with another model, or other versions
    of the packages that decide an answer's bytes, stops the run."""
    first = started[0]
    mine = package_versions()["offline-scorer"]
    if first.versions["offline-scorer"] != mine:
        raise ClusterError(
            f"node {first.node} runs offline-scorer {first.versions['offline-scorer']} and "
            f"this driver {mine}; install the same version everywhere"
        )
    for other in started[1:]:
        if other.identity != first.identity:
            raise ClusterError(
                f"node {other.node} judges with {other.identity} but node {first.node} with "
                f"{first.identity}; every node needs the same model file and backend"
            )
        for name, version in first.versions.items():
            if other.versions.get(name) != version:
                raise ClusterError(
                    f"node {other.node} has {name} {other.versions.get(name)} but node "
                    f"{first.node} has {version}; install the same versions on every node"
                )
    return first.identity
