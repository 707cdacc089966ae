"""`CassetteJudge`: a judge that replays recorded exchanges and records live ones.

The scorer cannot tell it from a live model. Modes follow vcrpy's record modes:

- replay: answer only from the cassette, never touch the model; a miss is an error.
- auto:   replay what is recorded, run the model for the rest and record it.
- record: always run the model, and record every exchange.
- off:    run the model, record nothing.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any

from offline_scorer.cassette.key import key_parts
from offline_scorer.cassette.miss import describe_miss
from offline_scorer.cassette.records import response_completion, to_payload
from offline_scorer.cassette.store.container import CassetteFile
from offline_scorer.errors import CassetteMissError, ConfigError
from offline_scorer.judging.protocol import (
    Completion,
    Judge,
    JudgeIdentity,
    JudgeRequest,
    as_completion,
)

MODE_ENV = "OFFLINE_SCORER_RECORD_MODE"


class RecordMode(StrEnum):
    REPLAY = "replay"
    AUTO = "auto"
    RECORD = "record"
    OFF = "off"


def parse_mode(value: str, origin: str) -> RecordMode:
    try:
        return RecordMode(value.strip().lower())
    except ValueError:
        choices = ", ".join(m.value for m in RecordMode)
        raise ConfigError(
            f"{origin}: unknown record mode {value!r}; use one of {choices}"
        ) from None


def forced_mode() -> RecordMode | None:
    """The mode `$OFFLINE_SCORER_RECORD_MODE` forces on every command (for CI), if set."""
    value = os.environ.get(MODE_ENV)
    return parse_mode(value, MODE_ENV) if value else None


LiveFactory = Callable[[], Judge]


class CassetteJudge:
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
        self.identity = identity
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

    def live_judge(self) -> Judge:
        if self._live is None:
            raise CassetteMissError("no live model is available to record with")
        if not isinstance(self._live, Judge):
            self._live = self._live()
        return self._live

    def complete(self, request: JudgeRequest) -> str | Completion:
        if self.cassette is None:
            return self.live_judge().complete(request)
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
    versions = getattr(live, "runtime_versions", None)
    if isinstance(versions, Mapping):
        meta["runtime"] = dict(versions)
    if completion.usage is not None:
        meta["prompt_tokens"] = completion.usage.prompt_tokens
        meta["completion_tokens"] = completion.usage.completion_tokens
        meta["forced_tokens"] = completion.usage.forced_tokens
    return meta
