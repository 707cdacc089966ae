"""Our request schemas in the JSON-schema subset outlines compiles faithfully.

Outlines 1.3 hands a JSON schema to a compiler that does not take all of ours: llguidance
refuses `uniqueItems`, and outlines-core ignores it and drops a string's `pattern` when it also
has a length bound. Both constructs are rewritten here into ones that compile to the same
language; answers are still validated against the original schema by the scorer's models.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

from offline_scorer.errors import GenerationError

# JSON string characters our GBNF allows, and its escapes (backends/llama_cpp/gbnf.py).
_STRING_CHAR = r'[^"\\\x00-\x1F{extra}]'
_STRING_ESCAPE = r'\\["\\/nt]'
# A set of k questions out of n becomes one alternative per ordered choice; past this many the
# regex (and outlines' index) grows too large to build, so the request is refused instead.
MAX_SET_ALTERNATIVES = 5000


def _is_plain(node: Mapping[str, Any]) -> bool:
    """A pattern with no length fields and no character JSON escapes (scorers' whole-sentence
    free text): outlines compiles it inside the string's quotes as it is."""
    pattern = node["pattern"]
    return (
        "minLength" not in node
        and "maxLength" not in node
        and '"' not in pattern
        and "[^" not in pattern
        and "\\\\" not in pattern
    )


def _forbidden_characters(pattern: str) -> str | None:
    """X of a pattern `^[^X]*$` (the only kind our schemas use), else None."""
    if pattern.startswith("^[^") and pattern.endswith("]*$"):
        inner = pattern[3:-3]
        if "]" not in inner.replace("\\]", ""):
            return inner
    return None


def _string(node: Mapping[str, Any], step: str) -> dict[str, Any]:
    pattern = node["pattern"]
    if _is_plain(node):
        return dict(node)
    forbidden = _forbidden_characters(pattern)
    if forbidden is None:
        raise GenerationError(
            f"{step}: the outlines backend cannot combine the pattern {pattern!r} with JSON "
            "string escaping; use the llama_cpp backend"
        )
    low = int(node.get("minLength", 0))
    high = node.get("maxLength")
    repeat = f"{{{low},{int(high)}}}" if high is not None else f"{{{low},}}"
    char = _STRING_CHAR.format(extra=forbidden)
    kept = {k: v for k, v in node.items() if k not in ("pattern", "minLength", "maxLength")}
    return {**kept, "pattern": f"^(?:{char}|{_STRING_ESCAPE}){repeat}$"}


def _ordered_set(node: Mapping[str, Any], step: str) -> dict[str, Any]:
    choices = node.get("items", {}).get("enum")
    if not isinstance(choices, list):
        raise GenerationError(f"{step}: the outlines backend supports uniqueItems over an enum")
    low = int(node.get("minItems", 0))
    high = min(int(node.get("maxItems", len(choices))), len(choices))
    alternatives: list[dict[str, Any]] = []
    for size in range(low, high + 1):
        for combo in itertools.combinations(choices, size):
            # exact sizes: with prefixItems alone JSON Schema also admits a shorter array
            alternatives.append(
                {
                    "type": "array",
                    "prefixItems": [{"const": c} for c in combo],
                    "items": False,
                    "minItems": size,
                    "maxItems": size,
                }
            )
            if len(alternatives) > MAX_SET_ALTERNATIVES:
                raise GenerationError(
                    f"{step}: the outlines backend cannot constrain a choice of {low} to {high} "
                    f"of {len(choices)} questions (over {MAX_SET_ALTERNATIVES} alternatives); "
                    "lower --max-questions or use the llama_cpp backend"
                )
    if len(alternatives) == 1:
        return alternatives[0]
    return {"anyOf": alternatives}


def for_outlines(schema: Mapping[str, Any], step: str) -> dict[str, Any]:
    """`schema` with sets and bounded patterns rewritten into what outlines compiles."""

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(v) for v in node]
        if not isinstance(node, Mapping):
            return node
        if node.get("type") == "array" and node.get("uniqueItems"):
            return _ordered_set(node, step)
        if node.get("type") == "string" and "pattern" in node:
            return _string(node, step)
        return {k: walk(v) for k, v in node.items()}

    result: dict[str, Any] = walk(schema)
    return result
