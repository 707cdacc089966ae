"""The HTTP face: routes, bearer auth, request limits, SSE, and every refusal in OpenAI's shape.

`POST /v1/chat/completions` (streamed or not), `GET /v1/models[/{id}]`, `GET /health`. Every
error body is `{"error": {message, type, param, code}}` with a 4xx for anything the client can
fix; nothing a client sends gets a 500 or stops the server.

Streams send their headers at once and keep-alive comments while a request waits for the
model (Node's HTTP client gives up on a response without headers after 300 s). A request the
cassette answers is answered before the headers, so a replay miss is a 404 even when streaming;
an error met later in a stream (a prompt over the context) arrives as one `data: {"error": ...}`
event, as OpenAI's own streams report one, and the stream ends.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from sse_starlette.sse import EventSourceResponse, ServerSentEvent
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from offline_scorer.models.registry import load_registry
from offline_scorer.serve.errors import ApiError
from offline_scorer.serve.mastra import served_options
from offline_scorer.serve.responses import chunks, completion_body, dumps, reply_of
from offline_scorer.serve.service import JudgeService
from offline_scorer.serve.translate import Prepared, prepare
from offline_scorer.serve.wire import parse_request

__all__ = ["Limits", "create_app"]


@dataclass(frozen=True)
class Limits:
    max_body_bytes: int = 8 * 2**20
    max_messages: int = 256
    ping_seconds: float = 5.0


def _json(body: object, status: int = 200) -> Response:
    return Response(dumps(body), status_code=status, media_type="application/json")


def create_app(
    service: JudgeService, *, api_key: str | None, limits: Limits = Limits()
) -> Starlette:
    """The ASGI app serving `service`; `api_key` None means no authentication (loopback)."""

    options = served_options(service.spec)  # how Mastra's recognised steps are judged

    async def chat(request: Request) -> Response:
        _authorize(request, api_key)
        prepared = prepare(parse_request(await _json_body(request, limits)), options)
        _check_servable(prepared, service, limits)
        if not prepared.stream:
            return _json(completion_body(await _reply(service, prepared)))
        if service.answers_at_once(prepared.request):
            return _sse(_events(service, prepared, await _reply(service, prepared)), limits)
        return _sse(_events(service, prepared, None), limits)

    async def models(request: Request) -> Response:
        _authorize(request, api_key)
        return _json({"object": "list", "data": [_model(n) for n in _registry_names(service)]})

    async def model(request: Request) -> Response:
        _authorize(request, api_key)
        name = request.path_params["model"]
        if name not in _registry_names(service) and name not in service.names:
            raise ApiError(404, f"no model {name!r} in the registry", code="model_not_found")
        return _json(_model(name))

    async def health(request: Request) -> Response:
        return _json({"status": "ok", "model": service.spec.name, "mode": service.mode.value})

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await service.aclose()

    return Starlette(
        routes=[
            Route("/v1/chat/completions", chat, methods=["POST"]),
            Route("/v1/models", models, methods=["GET"]),
            Route("/v1/models/{model:path}", model, methods=["GET"]),
            Route("/health", health, methods=["GET"]),
        ],
        exception_handlers={ApiError: _api_error, HTTPException: _http_error, Exception: _crash},
        lifespan=lifespan,
    )


async def _reply(service: JudgeService, prepared: Prepared) -> Any:
    answer = await service.answer(prepared.request)
    return reply_of(prepared, answer.completion, answer.key, service.identity)


async def _events(
    service: JudgeService, prepared: Prepared, ready: Any
) -> AsyncIterator[dict[str, str]]:
    """The stream of one answer: `ready` when it was answered before the stream began (an error
    then is a 4xx, not an event), else answered here (an error becomes the stream's event)."""
    try:
        reply = ready if ready is not None else await _reply(service, prepared)
    except ApiError as error:
        yield {"data": dumps(error.body())}
        return
    for chunk in chunks(reply, prepared.include_usage):
        yield {"data": dumps(chunk)}
    yield {"data": "[DONE]"}


def _authorize(request: Request, api_key: str | None) -> None:
    """A 401 unless the request carries the server's key (None: no key asked, loopback)."""
    if api_key is None:
        return
    given = request.headers.get("authorization", "")
    scheme, _, token = given.partition(" ")
    ok = scheme.lower() == "bearer" and hmac.compare_digest(
        token.strip().encode(), api_key.encode()
    )
    if not ok:
        raise ApiError(
            401,
            "missing or wrong API key: send the key given to `serve --api-key` as "
            "'Authorization: Bearer KEY'",
            code="invalid_api_key",
        )


def _check_servable(prepared: Prepared, service: JudgeService, limits: Limits) -> None:
    """A 4xx naming the problem unless this server can answer the request as asked."""
    if len(prepared.request.messages) > limits.max_messages:
        raise ApiError(
            400,
            f"{len(prepared.request.messages)} messages is over this server's limit of "
            f"{limits.max_messages}",
            param="messages",
        )
    if prepared.model not in service.names:
        raise ApiError(
            404,
            f"model {prepared.model!r} is not served here: this server runs "
            f"{' or '.join(repr(n) for n in service.names)} (GET /v1/models lists the "
            "registry; start `serve --model NAME` for another)",
            code="model_not_found",
            param="model",
        )
    service.check_schema(prepared.request.output_schema)


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return _json(exc.body(), exc.status)


async def _http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own 404 and 405, in OpenAI's error shape, naming the endpoints there are."""
    assert isinstance(exc, HTTPException)
    what = {404: "no such endpoint", 405: "method not allowed"}.get(exc.status_code, exc.detail)
    error = ApiError(
        exc.status_code,
        f"{what}: {request.method} {request.url.path} (this server has POST "
        "/v1/chat/completions, GET /v1/models and GET /health)",
    )
    return _json(error.body(), exc.status_code)


async def _crash(request: Request, exc: Exception) -> Response:
    error = ApiError(500, f"internal error ({type(exc).__name__}); see the server's log")
    return _json(error.body(), 500)


def _sse(events: AsyncIterator[dict[str, str]], limits: Limits) -> EventSourceResponse:
    return EventSourceResponse(
        events,
        ping=limits.ping_seconds,
        ping_message_factory=lambda: ServerSentEvent(comment="keep-alive"),
        sep="\n",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


async def _json_body(request: Request, limits: Limits) -> object:
    kind = request.headers.get("content-type", "application/json").split(";")[0].strip().lower()
    if kind not in ("application/json", ""):
        raise ApiError(415, f"content type {kind!r} is not JSON: send application/json")
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limits.max_body_bytes:
        raise _too_large(limits)
    body = bytearray()
    async for part in request.stream():
        body += part
        if len(body) > limits.max_body_bytes:
            raise _too_large(limits)
    try:
        return json.loads(body, parse_constant=_no_constant)
    except (ValueError, RecursionError) as error:
        detail = " ".join(str(error).split())[:120]
        raise ApiError(400, f"the request body is not valid JSON ({detail})") from None


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _too_large(limits: Limits) -> ApiError:
    return ApiError(
        413, f"the request body is over this server's limit of {limits.max_body_bytes} bytes"
    )


def _registry_names(service: JudgeService) -> list[str]:
    names = list(load_registry().models)
    return names if service.spec.name in names else [service.spec.name, *names]


def _model(name: str) -> dict[str, Any]:
    return {"id": name, "object": "model", "created": 0, "owned_by": "offline-scorer"}
