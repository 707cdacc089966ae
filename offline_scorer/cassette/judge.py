"""`CassetteJudge`: a judge that replays recorded exchanges and records live ones.

The scorer cannot tell it from a live model. The record modes (vcrpy's) are in `modes`; they
are re-exported here because callers import them from this module.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from offline_scorer.cassette.key import key_parts
from offline_scorer.cassette.miss import describe_miss
from offline_scorer.cassette.modes import MODE_ENV, RecordMode, forced_mode, parse_mode
from offline_scorer.cassette.records import response_completion, to_payload
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

__all__ = ["MODE_ENV", "CassetteJudge", "LiveFactory", "RecordMode", "forced_mode", "parse_mode"]

LiveFactory = Callable[[], Judge]


class CassetteJudge(JudgeBase):
    """Answers from a cassette, and records what a live judge answers, as its mode says."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        mode: RecordMode,
        identity: JudgeIdentity,
        live: Judge | LiveFactory | None = None,
    ) -> None:
        self.path = Path(path)
        self.mode = RecordMode(mode)
        self._identity = identity
        self._live = live
        self.hits = 0
        self.recorded = 0
        self.cassette: CassetteFile | None = None
        if self.mode is not RecordMode.OFF:
            if self.mode is RecordMode.REPLAY and not self.path.exists():
                raise CassetteMissError(
                    f"replay: cassette {self.path} does not exist; record it first with "
                    "--record-mode auto"
                )
            if self.mode is not RecordMode.REPLAY:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self.cassette = CassetteFile(self.path, create=self.mode is not RecordMode.REPLAY)

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
        if self.cassette is None:
            return as_completion(self.live_judge().complete(request))
        parts = key_parts(request, self.identity)
        key = parts.digest()
        if self.mode in (RecordMode.REPLAY, RecordMode.AUTO):
            payload = self.cassette.get_exchange(key)
            if payload is not None:
                self.hits += 1
                return response_completion(
                    self.cassette, key, payload, self.identity.verdict_threshold
                )
            if self.mode is RecordMode.REPLAY:
                raise CassetteMissError(describe_miss(self.cassette, request.step, parts))
        live = self.live_judge()
        completion = as_completion(live.complete(request))
        self.cassette.append_exchange(
            key, to_payload(self.cassette, request.step, parts, completion, _meta(live, completion))
        )
        self.recorded += 1
        return completion

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
