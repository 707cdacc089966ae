"""`CassetteJudge`: a judge that replays recorded exchanges and records live ones.

The scorer cannot tell it from a live model. The record modes (vcrpy's) are in `modes`; they
are re-exported here because callers import them from this module.

A judge that answers on another machine (a cluster actor) records into a `sink` instead of a
file: the exchanges travel back with their item, and the driver's `CassetteJudge` writes them
with `record`, in input order, exactly as `complete` would have.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from offline_scorer.cassette.key import KeyParts, key_parts
from offline_scorer.cassette.miss import describe_miss
from offline_scorer.cassette.modes import MODE_ENV, RecordMode, forced_mode, parse_mode
from offline_scorer.cassette.records import (
    REPLAYED_FIELDS,
    recorded_former_backend,
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
    as_completion,
    as_judge,
)

__all__ = [
    "MODE_ENV",
    "CassetteJudge",
    "LiveFactory",
    "RecordMode",
    "Recorded",
    "forced_mode",
    "parse_mode",
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
        former_backends: tuple[str, ...] = (),
    ) -> None:
        """`sink`, when given, receives what is recorded instead of the file (which may then be
        None in record mode: only replay and auto read a cassette). A replay whose cassette was
        recorded under one of `former_backends` (ids of the identity's backend in its former
        versions) answers under that id, as it was recorded (`recorded_former_backend`)."""
        self.mode = RecordMode(mode)
        self._identity = identity
        self._live = live
        self._sink = sink
        self.hits = 0
        self.recorded = 0
        # What a hit reads: the response, and with `replay_usage` set the record's token counts
        # too (a server reports them; a scorer never reads them, and they cost replay time).
        self.replay_usage = False
        self._keys: dict[int, tuple[JudgeRequest, KeyParts, bytes]] = {}
        self.cassette: CassetteFile | None = None
        reads = self.mode in (RecordMode.REPLAY, RecordMode.AUTO)
        opens_file = self.mode is not RecordMode.OFF and (reads or sink is None)
        if path is None:
            if opens_file:
                raise ValueError(f"record mode {self.mode.value} needs a cassette path")
            self.path = Path()
            return
        self.path = Path(path)
        if opens_file:
            if self.mode is RecordMode.REPLAY:
                require_cassette(self.path)
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self.cassette = CassetteFile(self.path, create=self.mode is not RecordMode.REPLAY)
            if self.mode is RecordMode.REPLAY and former_backends:
                recorded = recorded_former_backend(self.cassette, identity.backend, former_backends)
                if recorded is not None:
                    self._identity = dataclasses.replace(identity, backend=recorded)

    @property
    def identity(self) -> JudgeIdentity:
        """The identity keys are computed with (the live judge's, or the registry's pins)."""
        return self._identity

    def live_judge(self) -> Judge:
        if self._live is None:
            raise CassetteMissError("no live model is available to record with")
        if not isinstance(self._live, JudgeBase | Judge):
            # a judge of the user's (only `complete`), or a factory that loads one when needed
            found = self._live
            self._live = as_judge(found if hasattr(found, "complete") else found())
        return self._live

    def complete(self, request: JudgeRequest) -> Completion:
        if self.mode is RecordMode.OFF:
            return as_completion(self.live_judge().complete(request))
        if self.cassette is not None and self.mode in (RecordMode.REPLAY, RecordMode.AUTO):
            parts, key = self._key(request)
            fields = self.cassette.get_exchange_fields(
                key, REPLAYED_FIELDS if self.replay_usage else REPLAYED_FIELDS[:1]
            )
            if fields is not None:
                self.hits += 1
                return replayed_completion(
                    self.cassette, key, fields, self.identity.verdict_threshold
                )
            if self.mode is RecordMode.REPLAY:
                raise CassetteMissError(describe_miss(self.cassette, request.step, parts))
        live = self.live_judge()
        completion = as_completion(live.complete(request))
        exchange = Recorded(request, completion, _meta(live, completion))
        if self._sink is not None:
            self._sink(exchange)
        else:
            self.record(exchange)
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

        In auto mode an exchange already in the cassette is not written again: a serial run
        would have replayed it, so skipping it keeps the file's bytes the same.
        """
        if self.cassette is None:
            raise CassetteMissError(f"record mode {self.mode.value} writes no cassette")
        parts = key_parts(exchange.request, self.identity)
        key = parts.digest()
        if self.mode is RecordMode.AUTO and self.cassette.has_exchange(key):
            return
        payload = to_payload(
            self.cassette, exchange.request.step, parts, exchange.completion, exchange.meta
        )
        self.cassette.append_exchange(key, payload)
        self.recorded += 1

    def close(self) -> None:
        if self.cassette is not None:
            self.cassette.close()


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
