"""Reading Mastra-shaped runs: which text is the summary, which is the source.

Run shapes follow Mastra's agent runs (`inputMessages`, assistant messages with
`toolInvocations`); plain strings are accepted where a user would naturally pass them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from offline_scorer.errors import InputError
from offline_scorer.scorers.summarization.options import ScorerOptions


@dataclass(frozen=True)
class ToolResult:
    """One completed tool call found in a run output."""

    name: str
    result: Any
    args: Any
    tool_call_id: str | None


def _messages(value: Any, where: str) -> list[Mapping[str, Any]]:
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise InputError(
            f"{where} must be a list of messages or a string, got {type(value).__name__}"
        )
    for index, message in enumerate(value):
        if not isinstance(message, Mapping):
            raise InputError(
                f"{where}[{index}] must be a message object with 'role' and 'content', "
                f"got {type(message).__name__}"
            )
        if not isinstance(message.get("role"), str):
            raise InputError(f"{where}[{index}] has no 'role' string")
    return list(value)


def message_text(message: Mapping[str, Any], where: str) -> str:
    """The text of a message: a string, or the text parts of AI SDK content parts."""
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence) and not isinstance(content, bytes):
        texts = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, Mapping) and part.get("type") == "text":
                text = part.get("text")
                if not isinstance(text, str):
                    raise InputError(f"{where}: a text content part has no 'text' string")
                texts.append(text)
        return "".join(texts)
    raise InputError(
        f"{where}: 'content' must be a string or a list of content parts, "
        f"got {type(content).__name__}"
    )


def resolve_summary(output: Any) -> str:
    """The last assistant message with non-blank text; tool-call turns without text are skipped."""
    if isinstance(output, str):
        return output
    messages = _messages(output, "run output")
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message["role"] != "assistant":
            continue
        text = message_text(message, f"run output[{index}]")
        if text.strip():
            return text
    return ""


def _first_user_text(run_input: Any) -> str:
    if run_input is None:
        return ""
    if isinstance(run_input, str):
        return run_input
    if isinstance(run_input, Mapping):
        if "inputMessages" not in run_input:
            raise InputError(
                "run input must be a string, a list of messages, or an object with "
                "'inputMessages'; it has none of these"
            )
        messages = _messages(run_input["inputMessages"], "run input.inputMessages")
        where = "run input.inputMessages"
    else:
        messages = _messages(run_input, "run input")
        where = "run input"
    for index, message in enumerate(messages):
        if message["role"] == "user":
            return message_text(message, f"{where}[{index}]")
    return ""


def resolve_source(run_input: Any, output: Any, options: ScorerOptions) -> str:
    """Extractor, then the `source` option, then the first user message, else empty."""
    if options.source_extractor is not None:
        try:
            source = options.source_extractor(run_input, output)
        except Exception as error:
            raise InputError(f"source_extractor raised {type(error).__name__}: {error}") from error
        if not isinstance(source, str):
            raise InputError(
                f"source_extractor must return a string, it returned {type(source).__name__}"
            )
        return source
    if options.source is not None:
        return options.source
    return _first_user_text(run_input)


def extract_tool_results(output: Any) -> list[ToolResult]:
    """Completed tool calls of a run output, in order, so an extractor can use one as source."""
    if isinstance(output, str):
        return []
    results = []
    for index, message in enumerate(_messages(output, "run output")):
        invocations = message.get("toolInvocations") or []
        if not isinstance(invocations, Sequence) or isinstance(invocations, str):
            raise InputError(f"run output[{index}].toolInvocations must be a list")
        for call in invocations:
            if not isinstance(call, Mapping) or not isinstance(call.get("toolName"), str):
                raise InputError(
                    f"run output[{index}].toolInvocations has an entry without 'toolName'"
                )
            if "result" not in call or call.get("state", "result") != "result":
                continue
            results.append(
                ToolResult(
                    name=call["toolName"],
                    result=call["result"],
                    args=call.get("args"),
                    tool_call_id=call.get("toolCallId"),
                )
            )
    return results


def split_run(run: Any) -> tuple[Any, Any]:
    """(input, output) of a run, with a clear error for the shapes people get wrong."""
    if not isinstance(run, Mapping):
        raise InputError(
            f"a run must be an object with 'input' and 'output', got {type(run).__name__}"
        )
    if "output" not in run:
        raise InputError("the run has no 'output': pass the summarizer's messages as 'output'")
    return run.get("input"), run["output"]
