"""The OpenAI chat-completions request, as this server accepts it: one pydantic model.

Strict on purpose. A field this server cannot honour (tools, n > 1, top_p != 1, stop, logprobs)
is refused with its name rather than ignored, because an ignored field would make an answer
look as if it obeyed it; an unknown field is refused like OpenAI refuses one. JSON types are
not coerced ("0.5" is not a temperature).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from offline_scorer.serve.errors import ApiError

__all__ = ["ChatRequest", "Message", "TextPart", "parse_request"]


class _Wire(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class TextPart(_Wire):
    type: Literal["text"]
    text: str


class Message(_Wire):
    role: Literal["system", "developer", "user", "assistant"]
    content: str | list[TextPart]
    name: str | None = None


class JsonSchemaFormat(_Wire):
    name: str
    description: str | None = None
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")
    strict: bool | None = None


class ResponseFormat(_Wire):
    type: Literal["text", "json_object", "json_schema"]
    json_schema: JsonSchemaFormat | None = None


class StreamOptions(_Wire):
    include_usage: bool = False
    include_obfuscation: bool | None = None


class ChatRequest(_Wire):
    model: str
    messages: Annotated[list[Message], Field(min_length=1)]
    stream: bool = False
    stream_options: StreamOptions | None = None
    response_format: ResponseFormat | None = None
    temperature: Annotated[float, Field(ge=0, le=2)] | None = None
    seed: int | None = None
    max_tokens: Annotated[int, Field(ge=1)] | None = None
    max_completion_tokens: Annotated[int, Field(ge=1)] | None = None
    # Accepted only at the value that changes nothing (checked in `translate`).
    top_p: Annotated[float, Field(ge=0, le=1)] | None = None
    n: Annotated[int, Field(ge=1)] | None = None
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    stop: str | list[str] | None = None
    logprobs: bool | None = None
    tools: list[Any] | None = None
    tool_choice: str | dict[str, Any] | None = None
    parallel_tool_calls: bool | None = None
    # Bookkeeping a client may send; no effect on the answer.
    user: str | None = None
    metadata: dict[str, str] | None = None
    store: bool | None = None


def parse_request(body: object) -> ChatRequest:
    """The request in `body` (parsed JSON), or a 400 naming the first field that is wrong."""
    if not isinstance(body, dict):
        raise ApiError(400, f"the request body must be a JSON object, not {_kind(body)}")
    try:
        return ChatRequest.model_validate(body)
    except ValidationError as error:
        raise _first_problem(error) from None


def _first_problem(error: ValidationError) -> ApiError:
    problems = error.errors(include_url=False)
    # A union reports one error per branch; the most specific (longest location) says most.
    first = max(problems, key=lambda p: len(p["loc"])) if problems else None
    if first is None:
        return ApiError(400, "the request is not a valid chat completion request")
    where = ".".join(str(part) for part in first["loc"] if not _branch(part))
    param = where or None
    if first["type"] == "extra_forbidden":
        return ApiError(
            400,
            f"unrecognized request field {where!r}: this server accepts OpenAI's chat "
            "completion fields (see docs/serve.md)",
            code="unknown_parameter",
            param=param,
        )
    if first["type"] == "missing":
        return ApiError(400, f"missing required field {where!r}", param=param)
    given = first.get("input")
    shown = "" if isinstance(given, dict | list) else f" (got {given!r:.60})"
    return ApiError(400, f"invalid {where or 'request'}: {first['msg']}{shown}", param=param)


def _branch(part: object) -> bool:
    """pydantic names union branches in locations ("str", "list[TextPart]"); a path has none."""
    return isinstance(part, str) and (part in {"str", "int", "float", "bool"} or "[" in part)


def _kind(value: object) -> str:
    return {list: "an array", str: "a string", int: "a number", float: "a number"}.get(
        type(value), "null" if value is None else type(value).__name__
    )
