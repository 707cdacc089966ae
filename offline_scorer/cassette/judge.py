"""`CassetteJudge`: a judge that replays recorded exchanges and records live ones.

The scorer cannot tell it from a live model. A caller that needs more than the `Judge` protocol
(a server answering hits before it queues for the model, a command reporting what it replayed)
asks it through its public methods, `key`, `lookup`, `answers_at_once` and `stats`: keys and
hit decisions are made here, never by the caller. What each record mode does is the mode's own
(`modes`).

A judge that answers on another machine (a cluster actor) records into a `sink` instead of a
file: the exchanges travel back with their item, and the driver's `CassetteJudge` writes them
with `record`, in input order, exactly as `complete` would have.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from offline_scorer.cassette.key import KeyParts, key_parts
from offline_scorer.cassette.miss import describe_miss
from offline_scorer.cassette.modes import RecordMode
from offline_scorer.cassette.records import (
    REPLAYED_FIELDS,
    replayed_completion,
    to_payload,
)
from offline_scorer.cassette.store.file import CassetteFile
from offline_scorer.errors import CassetteMissError
from offline_scorer.judging.protocol import (
    Completion,
    Judge,
    JudgeBase,
    JudgeIdentity,
    JudgeRequest,
    Usage,
    as_completion,
    as_judge,
)

__all__ = [
    "CassetteJudge",
    "CassetteStats",
    "LiveFactory",
    "Recorded",
    "cassette_stats",
    "require_cassette",
]

LiveFactory = Callable[[], Judge]


@dataclass(frozen=True)
class Recorded:
    """One exchange a live judge answered, before it is written (it may cross a process)."""

    request: JudgeRequest
    completion: Completion
    meta: Mapping[str, Any]


Sink = Callable[[Recorded], None]


def require_cassette(path: Path) -> None:
    """Replay's precondition, checked wherever a replay starts (here, or a cluster's driver)."""
    if not path.exists():
        raise CassetteMissError(
            f"replay: cassette {path} does not exist; record it first with --record-mode auto"
        )


_KEYS_KEPT = 384  # three requests per document, for as many as a request builder keeps


@dataclass(frozen=True)
class CassetteStats:
    """What a recording judge did so far: what a command reports, and a server or a cluster
    driver adds up. `usage` sums the token counts of the answers that carried them (live ones,
    and replayed ones when the judge replays usage)."""

    path: Path | None  # the cassette, None when there is none (mode off)
    hits: int
    misses: int  # requests a reading mode did not find (auto ran the model for them)
    recorded: int
    usage: Usage


class CassetteJudge(JudgeBase):
    """Answers from a cassette, and records what a live judge answers, as its mode says."""

    def __init__(
        self,
        path: str | os.PathLike[str] | None,
        *,
        mode: RecordMode,
        identity: JudgeIdentity,
        live: Judge | LiveFactory | None = None,
        sink: Sink | None = None,
        replay_usage: bool = False,
    ) -> None:
        """`sink`, when given, receives what is recorded instead of the file (which may then be
        None when the mode does not read). A replay answers under `identity` as given (its
        backend id is the one the recording names: `assembly.open`). `replay_usage`: a hit reads the
        record's token counts too (a server reports them; a scorer never reads them, and they
        cost replay time)."""
        self.mode = RecordMode(mode)
        self._identity = identity
        self._live = live
        self._sink = sink
        self._hits = 0
        self._misses = 0
        self._recorded = 0
        self._usage = Usage(0, 0, 0)
        self._replayed = REPLAYED_FIELDS if replay_usage else REPLAYED_FIELDS[:1]
        self._keys: dict[int, tuple[JudgeRequest, KeyParts, bytes]] = {}
        self.cassette: CassetteFile | None = None
        opens_file = self.mode.reads or (self.mode.writes and sink is None)
        self._has_path = path is not None and self.mode.uses_cassette
        if path is None:
            if opens_file:
                raise ValueError(f"record mode {self.mode.value} needs a cassette path")
            self.path = Path()
            return
        self.path = Path(path)
        if opens_file:
            self._open()

    def _open(self) -> None:
        """Open the cassette (a replay's must exist; any other mode creates it)."""
        if self.mode.needs_recording:
            require_cassette(self.path)
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self.cassette = CassetteFile(self.path, create=not self.mode.needs_recording)

    @property
    def identity(self) -> JudgeIdentity:
        """The identity keys are computed with (the live judge's, or the registry's pins)."""
        return self._identity

    @property
    def hits(self) -> int:
        return self._hits

    @property
    def recorded(self) -> int:
        return self._recorded

    def stats(self) -> CassetteStats:
        return CassetteStats(
            self.path if self._has_path else None,
            self._hits,
            self._misses,
            self._recorded,
            self._usage,
        )

    def add_hits(self, count: int) -> None:
        """Count hits a remote judge (a cluster actor) answered from its copy of this cassette,
        so the driver reports them as a serial run would have."""
        self._hits += count

    def live_judge(self) -> Judge:
        if self._live is None:
            raise CassetteMissError("no live model is available to record with")
        if not isinstance(self._live, JudgeBase | Judge):
            # a judge of the user's (only `complete`), or a factory that loads one when needed
            found = self._live
            self._live = as_judge(found if hasattr(found, "complete") else found())
        return self._live

    def key(self, request: JudgeRequest) -> bytes:
        """The cassette key `request` is recorded and looked up under (a server's reply ids)."""
        return self._key(request)[1]

    def answers_at_once(self, request: JudgeRequest) -> bool:
        """Whether `complete` answers without the model: in replay always (from the cassette,
        or with its miss error), else when the mode reads and the cassette holds the request."""
        if self.mode.needs_recording:
            return True
        return (
            self.mode.reads
            and self.cassette is not None
            and self.cassette.has_exchange(self.key(request))
        )

    def lookup(self, request: JudgeRequest) -> Completion | None:
        """The recorded answer to `request` (a hit), or None: the mode does not read, or the
        cassette does not hold it (a miss)."""
        if self.cassette is None or not self.mode.reads:
            return None
        key = self.key(request)
        fields = self.cassette.get_exchange_fields(key, self._replayed)
        if fields is None:
            self._misses += 1
            return None
        self._hits += 1
        completion = replayed_completion(
            self.cassette, key, fields, self.identity.verdict_threshold
        )
        self._count(completion)
        return completion

    def complete(self, request: JudgeRequest) -> Completion:
        if not self.mode.uses_cassette:
            return self._count(as_completion(self.live_judge().complete(request)))
        found = self.lookup(request)
        if found is not None:
            return found
        if self.mode.needs_recording and self.cassette is not None:
            parts, _key = self._key(request)
            raise CassetteMissError(describe_miss(self.cassette, request.step, parts))
        live = self.live_judge()
        completion = self._count(as_completion(live.complete(request)))
        exchange = Recorded(request, completion, _meta(live, completion))
        if self._sink is not None:
            self._sink(exchange)
        else:
            self.record(exchange)
        return completion

    def _count(self, completion: Completion) -> Completion:
        used = completion.usage
        if used is not None:
            total = self._usage
            self._usage = Usage(
                total.prompt_tokens + used.prompt_tokens,
                total.completion_tokens + used.completion_tokens,
                total.forced_tokens + used.forced_tokens,
            )
        return completion

    def _key(self, request: JudgeRequest) -> tuple[KeyParts, bytes]:
        """The request's key parts and digest, kept for the request objects met last: request
        builders cache their (immutable) requests, so a process re-scoring a suite asks with the
        same objects again. An entry holds its request, so no other object can take its id."""
        known = self._keys.get(id(request))
        if known is not None and known[0] is request:
            return known[1], known[2]
        parts = key_parts(request, self.identity)
        key = parts.digest()
        if len(self._keys) >= _KEYS_KEPT:
            self._keys.clear()  # another batch of documents: the old requests will not return
        self._keys[id(request)] = (request, parts, key)
        return parts, key

    def record(self, exchange: Recorded) -> None:
        """Write an exchange answered live (here or on another machine) as `complete` would.

        When the mode also reads (auto), an exchange already in the cassette is not written
        again: a serial run would have replayed it, so skipping it keeps the file's bytes.
        """
        if self.cassette is None:
            raise CassetteMissError(f"record mode {self.mode.value} writes no cassette")
        parts = key_parts(exchange.request, self.identity)
        key = parts.digest()
        if self.mode.reads and self.cassette.has_exchange(key):
            return
        payload = to_payload(
            self.cassette, exchange.request.step, parts, exchange.completion, exchange.meta
        )
        self.cassette.append_exchange(key, payload)
        self._recorded += 1

    def close(self) -> None:
        if self.cassette is not None:
            self.cassette.close()


def cassette_stats(judge: Judge) -> CassetteStats | None:
    """What `judge` replayed and recorded, when it is a recording judge (None otherwise): for
    a caller that holds any judge (a command, a cluster actor) and reports or adds these up."""
    return judge.stats() if isinstance(judge, CassetteJudge) else None


def _meta(live: Judge, completion: Completion) -> Mapping[str, Any]:
    """What a live judge can say about an exchange that does not change its answer.

    Only values that are the same on every run go here (no timings, no host), so recording the
    same exchanges in the same order writes the same bytes.
    """
    meta: dict[str, Any] = {}
    versions = live.runtime_versions()
    if versions:  # a judge without a runtime (scripted, adapted) records none
        meta["runtime"] = dict(versions)
    if completion.usage is not None:
        meta["prompt_tokens"] = completion.usage.prompt_tokens
        meta["completion_tokens"] = completion.usage.completion_tokens
        meta["forced_tokens"] = completion.usage.forced_tokens
    return meta
