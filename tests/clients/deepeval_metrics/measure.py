"""DeepEval's SummarizationMetric and FaithfulnessMetric judged by an OpenAI-compatible endpoint.

Runs in DeepEval's own venv (bench/deepeval/.venv, made by bench/deepeval/setup.sh, which
scripts/setup-clients runs), never in the project's env:

    bench/deepeval/.venv/bin/python measure.py --base-url http://127.0.0.1:8080/v1 < pairs.json

Pairs: a JSON array of {id, source, summary} on stdin. The judge is DeepEval's own `LocalModel`
(what `deepeval set-local-model --model-name default --base-url URL` configures), subclassed as
DeepEval's custom-LLM guide does for JSON confinement: `generate(prompt, schema)` sends the
pydantic schema DeepEval asks each step for as `response_format` json_schema, bounded (`bounded`),
with `max_tokens`, and returns the validated object. LocalModel itself sends one fixed
`generation_kwargs` for every step and drops the schema, so under `{"type": "json_object"}` the
judge picks the keys (`truths` as objects, nested without end until the budget cuts it). Per
pair: `SummarizationMetric(input=<summarize this source>, actual_output=summary, n=5)` and
`FaithfulnessMetric(..., retrieval_context=[source])`, both synchronous, with their reasons and
`truths_extraction_limit=8`.

Output: one JSON line per pair (keys sorted): {"id", "summarization": {"score", "reason"} or
{"error"}, "faithfulness": ...}; then {"deepeval": VERSION, "network_attempts": [...]}. Exit 1
when an evaluation failed or anything tried to leave the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

# The repository root is on $PYTHONPATH (tests/python_clients.py sets it): the guard is
# imported from this checkout, and installed before any framework is imported.
from tests.clients import network_guard

network_guard.install()

# DeepEval reads these at import: no telemetry, no update check, no .env files.
os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "YES")
os.environ.setdefault("DEEPEVAL_UPDATE_WARNING_OPT_IN", "0")
os.environ.setdefault("DEEPEVAL_DISABLE_DOTENV", "1")
os.environ.setdefault("DEEPEVAL_GRPC_LOGGING", "0")

import deepeval  # noqa: E402
from deepeval.metrics import FaithfulnessMetric, SummarizationMetric  # noqa: E402
from deepeval.models import LocalModel  # noqa: E402
from deepeval.test_case import LLMTestCase  # noqa: E402

QUESTION = "Summarize the following text.\n\n{source}"

# Bounds of every answer's schema, so that an answer ends within its budget: a greedy small
# judge that loops runs into a bound of the schema and closes its JSON, where an unbounded
# list or string runs to MAX_TOKENS and comes back cut (DeepEval: "Invalid JSON: EOF while
# parsing"). Each list holds at most ITEMS strings (DeepEval's `truths_extraction_limit` asks
# for as many truths) of at most TEXT_CHARS characters: at one token a character, 8 x 200
# characters and the JSON around them stay under MAX_TOKENS.
ITEMS = 8
TEXT_CHARS = 200
MAX_TOKENS = 2048
QUESTIONS = 5  # SummarizationMetric's `n`: the questions it asks, and the answers to each
# DeepEval's answer prompt says "Answers should STRICTLY be either 'yes' or 'no'" and "The
# length of 'answers' SHOULD BE STRICTLY EQUAL to that of questions" (unequal lengths raise);
# its schema says only List[str]. The schema says what the prompt says.
EXACT_ITEMS = {"questions": QUESTIONS, "answers": QUESTIONS}
ANSWER = {"type": "string", "enum": ["yes", "no"]}
# A closed schema this simple is decoded as compact JSON, where the small judge closes a list
# at once ({"truths":[]}: no truth, no claim, and DeepEval scores nothing checked as faithful):
# a text and a summary state at least one fact.
NOT_EMPTY = ("truths", "claims")


def bounded(schema: Any) -> dict[str, Any]:
    """The JSON schema of DeepEval's pydantic `schema`, bounded (see ITEMS) and closed: no keys
    but its own (pydantic ignores other keys, so closing refuses no answer it accepts; an open
    object lets the judge add keys without end)."""
    document: dict[str, Any] = schema.model_json_schema()
    _bound(document, None)
    return document


def _bound(node: Any, key: str | None) -> None:
    """Bound `node` in place; `key` is the property the node is the value (or an item) of."""
    if isinstance(node, list):
        for item in node:
            _bound(item, key)
        return
    if not isinstance(node, dict):
        return
    kind = node.get("type")
    if kind == "string" and "enum" not in node:
        node["maxLength"] = TEXT_CHARS
    elif kind == "object" and "properties" in node:
        node["additionalProperties"] = False
    elif kind == "array" and key in EXACT_ITEMS:
        node.update(minItems=EXACT_ITEMS[key], maxItems=EXACT_ITEMS[key])
        if key == "answers":
            node["items"] = dict(ANSWER)
    elif kind == "array":
        node.update({"minItems": 1} if key in NOT_EMPTY else {}, maxItems=ITEMS)
    for name, child in node.items():
        if name == "properties" and isinstance(child, dict):
            for field, sub in child.items():
                _bound(sub, field)
        elif isinstance(child, dict | list):
            _bound(child, key if name in ("items", "anyOf") else None)


class SchemaLocalModel(LocalModel):
    """DeepEval's LocalModel, sending each step's schema as `response_format` json_schema.

    LocalModel sends the same `generation_kwargs` for every step and drops the pydantic schema
    DeepEval passes to `generate`; this passes it on (bounded), as DeepEval's custom-LLM guide
    does for JSON confinement, and returns the validated schema object."""

    def _fields(self, schema: Any) -> dict[str, Any]:
        return {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": schema.__name__, "schema": bounded(schema), "strict": True},
            },
            "max_tokens": MAX_TOKENS,
        }

    def _ask(self, prompt: str, schema: Any) -> dict[str, Any]:
        fields = self._fields(schema) if schema is not None else {"max_tokens": MAX_TOKENS}
        return {
            "model": self.name,
            "messages": [{"role": "user", "content": prompt}],
            "temperature": self.temperature,
            **fields,
        }

    def generate(self, prompt: str, schema: Any = None, audio: Any = None) -> tuple[Any, float]:
        reply = self.load_model(async_mode=False).chat.completions.create(
            **self._ask(prompt, schema)
        )
        text = reply.choices[0].message.content
        return (schema.model_validate_json(text) if schema is not None else text), 0.0

    async def a_generate(
        self, prompt: str, schema: Any = None, audio: Any = None
    ) -> tuple[Any, float]:
        reply = await self.load_model(async_mode=True).chat.completions.create(
            **self._ask(prompt, schema)
        )
        text = reply.choices[0].message.content
        return (schema.model_validate_json(text) if schema is not None else text), 0.0


METRIC: dict[str, Any] = {
    "threshold": 0.5,
    "include_reason": True,
    "async_mode": False,
    "truths_extraction_limit": ITEMS,
}


def judge(base_url: str, model: str) -> Any:
    return SchemaLocalModel(
        model=model,
        base_url=base_url,
        api_key=os.environ.get("OFFLINE_SCORER_CLIENT_KEY", "unused"),
        temperature=0,
    )


def measure(metric: Any, case: Any) -> dict[str, Any]:
    try:
        metric.measure(case)
    except Exception as error:  # a parse or validation failure ends the evaluation
        return {"error": f"{type(error).__name__}: {error}"[:2000]}
    return {"score": metric.score, "reason": metric.reason}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--model", default="default")
    args = parser.parse_args()
    pairs = json.load(sys.stdin)
    settings = {**METRIC, "model": judge(args.base_url, args.model)}
    failed = False
    for pair in pairs:
        case = LLMTestCase(
            input=QUESTION.format(source=pair["source"]),
            actual_output=pair["summary"],
            retrieval_context=[pair["source"]],
        )
        line: dict[str, Any] = {"id": pair["id"]}
        line["summarization"] = measure(SummarizationMetric(n=QUESTIONS, **settings), case)
        line["faithfulness"] = measure(FaithfulnessMetric(**settings), case)
        failed = failed or any("error" in line[k] for k in ("summarization", "faithfulness"))
        print(json.dumps(line, sort_keys=True, ensure_ascii=False), flush=True)
    print(
        json.dumps(
            {"deepeval": deepeval.__version__, "network_attempts": network_guard.ATTEMPTS},
            sort_keys=True,
        )
    )
    return 1 if failed or network_guard.ATTEMPTS else 0


if __name__ == "__main__":
    sys.exit(main())
