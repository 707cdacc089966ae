"""A JSON schema written into the prompt, in the wordings clients use when they do not send
`response_format`, recognised so the answer is decoded under it all the same.

Recognised wordings (exact text, the schema in between as compact JSON):

* the AI SDK's prompt injection, which Mastra uses by default for a provider it does not know:
  the last user message ends with "Return your response as JSON matching this schema:\\n\\n"
  SCHEMA "\\n\\nReturn only valid JSON. Do not include markdown or explanatory text.";
* the AI SDK's fallback after a structured-output failure: the system message ends with
  "\\n\\nJSON schema:\\n" SCHEMA "\\nYou MUST answer with a JSON object that matches the JSON
  schema above."

The text stays in the prompt; the model sees what the client sent.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from offline_scorer.judging.protocol import Message

__all__ = ["WORDINGS", "inline_schema"]

WORDINGS: tuple[tuple[str, str, str], ...] = (
    (
        "user",
        "Return your response as JSON matching this schema:\n\n",
        "\n\nReturn only valid JSON. Do not include markdown or explanatory text.",
    ),
    (
        "system",
        "\n\nJSON schema:\n",
        "\nYou MUST answer with a JSON object that matches the JSON schema above.",
    ),
)
"""(role of the message, text before the schema, text after it: the end of the message)."""


def inline_schema(messages: Sequence[Message]) -> dict[str, Any] | None:
    """The schema a recognised wording carries, from the last message of its role."""
    for role, before, after in WORDINGS:
        text = next((m.content for m in reversed(messages) if m.role == role), None)
        if text is None or not text.endswith(after):
            continue
        start = text.rfind(before)
        if start < 0:
            continue
        try:
            schema = json.loads(text[start + len(before) : len(text) - len(after)])
        except ValueError:
            continue
        if isinstance(schema, dict):
            return schema
    return None
