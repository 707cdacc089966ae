"""The judge's structured answers: pydantic models, and the bounded JSON schemas sent with requests.

The models fix the structure (all fields required, no extra fields) and are what the scorer
parses. The request schemas add decoding bounds on top of them (string lengths, list sizes) and
grounding (the claims a preprocess answer must echo, the questions it may choose from, the
questions a coverage answer must echo), so a constrained decoder always terminates and can only
speak of the texts it is given. Bounds are derived from the models here, never written by hand.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

# Decoding bounds: generous for summaries of a few sentences, tight enough that a looping small
# model stops within seconds. Changing any of them changes grammars and cassette keys.
MAX_REASON_CHARS = 100  # why one verdict was given
MAX_EXPLANATION_CHARS = 240  # the reason step's explanation
# The explanation cannot state numbers of its own: no digits, nor the other characters a model
# writes numbers with (superscripts, vulgar fractions, number forms, circled and wide digits).
NO_DIGITS_PATTERN = (
    "^[^0-9\u00b2\u00b3\u00b9\u00bc-\u00be\u2070-\u2079\u2080-\u2089\u2150-\u218f"
    "\u2460-\u24ff\u2776-\u2793\uff10-\uff19]*$"
)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class ClaimVerdict(_Strict):
    claim: str
    supported: bool
    reason: str


class PreprocessOutput(_Strict):
    alignment: list[ClaimVerdict]
    questions: list[str]


class QuestionVerdict(_Strict):
    question: str
    answered: bool
    reason: str


class CoverageOutput(_Strict):
    coverage: list[QuestionVerdict]


class ReasonOutput(_Strict):
    explanation: str


def _inline(schema: dict[str, Any]) -> dict[str, Any]:
    """Resolve local $refs so bounds can be attached per use site."""
    defs = schema.pop("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return walk(copy.deepcopy(defs[node["$ref"].rsplit("/", 1)[-1]]))
            return {k: walk(v) for k, v in node.items() if k != "title"}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return walk(schema)


def _text(node: dict[str, Any], max_chars: int) -> None:
    node.update(minLength=1, maxLength=max_chars)


@functools.lru_cache(maxsize=64)
def _schema_json(model: type[BaseModel]) -> str:
    """A model's schema with $refs inlined, as JSON text (pydantic's generation is slow)."""
    return json.dumps(_inline(model.model_json_schema()))


def _schema(model: type[BaseModel]) -> dict[str, Any]:
    return json.loads(_schema_json(model))  # a fresh copy: callers may modify it


@functools.lru_cache(maxsize=1)
def _preprocess_json() -> str:
    schema = _schema(PreprocessOutput)
    _text(schema["properties"]["alignment"]["items"]["properties"]["reason"], MAX_REASON_CHARS)
    return json.dumps(schema)


def preprocess_schema(
    claims: Sequence[str], candidates: Sequence[str], max_questions: int
) -> dict[str, Any]:
    """One verdict per given claim, in order, echoing it; questions chosen from `candidates`.

    Questions are a set drawn from the candidates (`uniqueItems` over an `enum`), as many as
    `max_questions` allows and the source offers, so the judge chooses which facts to ask about
    but cannot invent, cut or repeat one. Treat the result as read-only.
    """
    schema = json.loads(_preprocess_json())
    alignment = schema["properties"]["alignment"]
    item = alignment.pop("items")
    properties = item["properties"]
    prefix = [{**item, "properties": {**properties, "claim": {"const": claim}}} for claim in claims]
    alignment.update(prefixItems=prefix, items=False, minItems=len(prefix), maxItems=len(prefix))
    count = min(max_questions, len(candidates))
    schema["properties"]["questions"] = {
        "type": "array",
        "items": {"enum": list(candidates)},
        "uniqueItems": True,
        "minItems": count,
        "maxItems": count,
    }
    return schema


@functools.lru_cache(maxsize=1)
def _coverage_json() -> str:
    schema = _schema(CoverageOutput)
    _text(schema["properties"]["coverage"]["items"]["properties"]["reason"], MAX_REASON_CHARS)
    return json.dumps(schema)


def coverage_schema(questions: Sequence[str]) -> dict[str, Any]:
    """Exactly one verdict per asked question, in order, each echoing its question verbatim.

    Built per request (replay builds one per evaluation), so the verdicts of one schema share
    their unchanging parts instead of each parsing a fresh copy; treat the result as read-only.
    """
    schema = json.loads(_coverage_json())
    coverage = schema["properties"]["coverage"]
    item = coverage.pop("items")
    properties = item["properties"]
    prefix = [
        {**item, "properties": {**properties, "question": {"const": question}}}
        for question in questions
    ]
    coverage.update(prefixItems=prefix, items=False, minItems=len(prefix), maxItems=len(prefix))
    return schema


@functools.lru_cache(maxsize=1)
def _reason_json() -> str:
    schema = _schema(ReasonOutput)
    explanation = schema["properties"]["explanation"]
    _text(explanation, MAX_EXPLANATION_CHARS)
    explanation["pattern"] = NO_DIGITS_PATTERN
    return json.dumps(schema)


def reason_schema() -> dict[str, Any]:
    return json.loads(_reason_json())
