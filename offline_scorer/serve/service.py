"""The judge behind the server: one model, requests queued fairly, replay answered at once.

* A request the cassette already answers (replay, or auto on a hit) is answered in the event
  loop: a lookup takes microseconds and needs no model.
* Any other request waits its turn on one FIFO lock and runs in a worker thread, so the model
  decodes one request at a time (batching gave no throughput on this CPU) and the event loop
  keeps streaming keep-alive comments to everyone waiting.
* A client that goes away does not stop its request: the thread finishes and the cassette gets
  the whole exchange (records are appended whole, after the answer), never half of one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import anyio

from offline_scorer.backends import Backend
from offline_scorer.cassette.judge import CassetteJudge
from offline_scorer.cassette.modes import RecordMode
from offline_scorer.errors import (
    CassetteFileError,
    CassetteMissError,
    ContextOverflowError,
    GenerationError,
    ModelError,
    OfflineScorerError,
    SchemaError,
)
from offline_scorer.judging.protocol import Completion, JudgeIdentity, JudgeRequest
from offline_scorer.models.registry import ModelSpec
from offline_scorer.serve.errors import ApiError

__all__ = ["Answer", "JudgeService"]


@dataclass(frozen=True)
class Answer:
    completion: Completion
    key: bytes


class JudgeService:
    """Answers judge requests for the server; owns the judge and closes it.

    The judge is a `CassetteJudge` in every mode (in mode off it only passes requests to the
    model): the keys replies are named by, and whether the cassette answers a request without
    the model, are its to say."""

    def __init__(self, judge: CassetteJudge, spec: ModelSpec, backend: Backend) -> None:
        self.judge = judge
        self.spec = spec
        self.backend = backend
        self._turn = anyio.Lock()

    @property
    def identity(self) -> JudgeIdentity:
        return self.judge.identity

    @property
    def mode(self) -> RecordMode:
        return self.judge.mode

    @property
    def names(self) -> tuple[str, ...]:
        """The model names a request may ask for: the registry name and "default"."""
        return (self.spec.name, "default") if self.spec.name != "default" else ("default",)

    @property
    def cassette_path(self) -> str | None:
        path = self.judge.stats().path
        return None if path is None else str(path)

    def key(self, request: JudgeRequest) -> bytes:
        return self.judge.key(request)

    def answers_at_once(self, request: JudgeRequest) -> bool:
        """Whether the cassette answers `request` without the model (so before any header)."""
        return self.judge.answers_at_once(request)

    def check_schema(self, schema: Mapping[str, Any] | None) -> None:
        """Refuse, before queueing, a schema the backend cannot decode under (live modes)."""
        if schema is None or not self.mode.runs_model:
            return
        try:
            problem = self.backend.schema_problem(schema)
        except ImportError:  # no runtime here: the model call itself will say so
            return
        if problem is not None:
            raise ApiError(400, problem, code="invalid_schema", param="response_format")

    async def answer(self, request: JudgeRequest) -> Answer:
        key = self.key(request)
        if self.answers_at_once(request):
            return Answer(self._complete(request), key)
        async with self._turn:
            completion = await anyio.to_thread.run_sync(self._complete, request)
        return Answer(completion, key)

    def _complete(self, request: JudgeRequest) -> Completion:
        try:
            return self.judge.complete(request)
        except OfflineScorerError as error:
            raise as_api_error(error) from None

    async def aclose(self) -> None:
        """Close the judge once no request holds the model: a request abandoned at shutdown
        still finishes its exchange, and the cassette is closed after it is written whole."""
        async with self._turn:
            self.judge.close()


def as_api_error(error: OfflineScorerError) -> ApiError:
    """The status and code each failure of the judge is reported with."""
    message = str(error)
    if isinstance(error, CassetteMissError):
        return ApiError(404, f"no recorded answer: {message}", code="cassette_miss")
    if isinstance(error, ContextOverflowError):
        return ApiError(400, message, code="context_length_exceeded", param="messages")
    if isinstance(error, SchemaError):
        return ApiError(400, message, code="invalid_schema", param="response_format")
    if isinstance(error, GenerationError):
        return ApiError(422, message, code="generation_failed")
    if isinstance(error, ModelError | CassetteFileError):
        return ApiError(503, message, code="judge_unavailable")
    return ApiError(400, message)
