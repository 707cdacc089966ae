"""Inspect AI's `model_graded_qa` judging summaries, graded by an OpenAI-compatible endpoint.

Runs in tests/clients/inspect_task/.venv (scripts/setup-clients), never in the project's env:

    .venv/bin/python grade.py --base-url http://127.0.0.1:8080/v1 --log-dir DIR < pairs.json

Pairs: a JSON array of {id, source, summary} on stdin. One Inspect task: each pair is a sample
whose input asks for a summary of the source; the solver answers with the pair's summary as it
is (no model call), and the scorer is Inspect's own `model_graded_qa`, whose grader model is
`openai-api/offline-scorer/<model>` at --base-url. The grader asks for a JSON object
{"grade", "reasoning"} through Inspect's `response_schema` (sent as OpenAI's `response_format`
json_schema), and `grade_pattern` reads the grade from it, so a small judge cannot miss Inspect's
"GRADE: X" line.

Output: one JSON line per sample (keys sorted): {"answer", "explanation", "id", "value"} from
Inspect's score, or {"id", "error"} when the sample has no score; then one line
{"inspect_ai": VERSION, "network_attempts": [...], "status": ...}. Exit 1 when a sample was not
scored or anything tried to leave the machine.
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

import inspect_ai  # noqa: E402
from inspect_ai import Task, eval  # noqa: E402
from inspect_ai.dataset import MemoryDataset, Sample  # noqa: E402
from inspect_ai.model import (  # noqa: E402
    GenerateConfig,
    ModelOutput,
    ResponseSchema,
    get_model,
)
from inspect_ai.scorer import model_graded_qa  # noqa: E402
from inspect_ai.solver import Generate, TaskState, solver  # noqa: E402
from inspect_ai.util import JSONSchema  # noqa: E402

QUESTION = "Summarize the following text.\n\n{source}"
CRITERION = (
    "The submission is a faithful summary of the text in the task: every statement it makes is "
    "supported by that text."
)
INSTRUCTIONS = (
    'After assessing the submission, answer with a JSON object with two keys: "grade", "C" if '
    'the submission meets the criterion or "I" if it does not; then "reasoning", one or two '
    "sentences on whether every statement of the submission is supported by the text in the task."
)
# Inspect's OpenAI-compatible provider drops maxLength (and pattern, minimum, ...) from the schema
# it sends, so the reasoning cannot be bounded there: the grade comes first and max_tokens bounds
# the answer, so an answer cut at the budget still holds its grade.
MAX_TOKENS = 200
GRADE_PATTERN = r'"grade"\s*:\s*"([CI])"'
SCHEMA = JSONSchema(
    type="object",
    properties={
        "grade": JSONSchema(type="string", enum=["C", "I"]),
        "reasoning": JSONSchema(type="string"),
    },
    required=["grade", "reasoning"],
    additionalProperties=False,
)


@solver
def fixed_summary() -> Any:
    """The pair's summary as the model's output: only the grader calls the judge."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        summary = state.metadata["summary"]
        state.output = ModelOutput.from_content(model="fixed", content=summary)
        return state

    return solve


def grader(base_url: str, model: str) -> Any:
    return get_model(
        f"openai-api/offline-scorer/{model}",
        base_url=base_url,
        api_key=os.environ.get("OFFLINE_SCORER_CLIENT_KEY", "unused"),
        config=GenerateConfig(
            response_schema=ResponseSchema(name="grade", json_schema=SCHEMA),
            max_tokens=MAX_TOKENS,
            max_retries=1,
        ),
    )


def task(pairs: list[dict[str, str]], base_url: str, model: str) -> Task:
    samples = [
        Sample(
            id=p["id"],
            input=QUESTION.format(source=p["source"]),
            target=CRITERION,
            metadata={"summary": p["summary"]},
        )
        for p in pairs
    ]
    return Task(
        dataset=MemoryDataset(samples, name="fixture-pairs"),
        solver=fixed_summary(),
        scorer=model_graded_qa(
            instructions=INSTRUCTIONS,
            grade_pattern=GRADE_PATTERN,
            model=grader(base_url, model),
        ),
        name="summary_faithfulness",
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--model", default="default")
    parser.add_argument("--log-dir", required=True)
    args = parser.parse_args()
    pairs = json.load(sys.stdin)
    logs = eval(
        task(pairs, args.base_url, args.model),
        model="none",
        log_dir=args.log_dir,
        display="none",
        max_samples=1,
        max_connections=1,
        fail_on_error=False,
    )
    failed = False
    order = {p["id"]: i for i, p in enumerate(pairs)}
    samples = sorted(logs[0].samples or [], key=lambda s: order.get(str(s.id), len(order)))
    for sample in samples:
        scores = sample.scores or {}
        score = next(iter(scores.values()), None)
        if score is None or score.value not in ("C", "I"):
            failed = True
            error = sample.error.message if sample.error else f"unscored: {score!r:.500}"
            line: dict[str, Any] = {"id": sample.id, "error": error}
        else:
            line = {
                "id": sample.id,
                "value": score.value,
                "explanation": score.explanation,
                "answer": score.answer,
            }
        print(json.dumps(line, sort_keys=True, ensure_ascii=False))
    if len(samples) != len(pairs):
        failed = True
    print(
        json.dumps(
            {
                "inspect_ai": inspect_ai.__version__,
                "network_attempts": network_guard.ATTEMPTS,
                "status": logs[0].status,
            },
            sort_keys=True,
        )
    )
    return 1 if failed or network_guard.ATTEMPTS else 0


if __name__ == "__main__":
    sys.exit(main())
