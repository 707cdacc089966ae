"""DeepEval's SummarizationMetric and FaithfulnessMetric judged by an OpenAI-compatible endpoint.

Runs in DeepEval's own venv (bench/deepeval/.venv, made by bench/deepeval/setup.sh, which
scripts/setup-clients runs), never in the project's env:

    bench/deepeval/.venv/bin/python measure.py --base-url http://127.0.0.1:8080/v1 < pairs.json

Pairs: a JSON array of {id, source, summary} on stdin. The judge is DeepEval's own `LocalModel`
(what `deepeval set-local-model --model-name default --base-url URL` configures) with
`generation_kwargs={"response_format": {"type": "json_object"}}`: DeepEval's local model sends
no response format of its own, and an unconstrained small judge seldom writes the JSON DeepEval
parses. Per pair: `SummarizationMetric(input=<summarize this source>, actual_output=summary)` and
`FaithfulnessMetric(..., retrieval_context=[source])`, both synchronous, with their reasons.

Output: one JSON line per pair (keys sorted): {"id", "summarization": {"score", "reason"} or
{"error"}, "faithfulness": ...}; then {"deepeval": VERSION, "network_attempts": [...]}. Exit 1
when an evaluation failed or anything tried to leave the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from tests.clients import network_guard  # noqa: E402

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


def judge(base_url: str, model: str) -> Any:
    return LocalModel(
        model=model,
        base_url=base_url,
        api_key=os.environ.get("OFFLINE_SCORER_CLIENT_KEY", "unused"),
        temperature=0,
        generation_kwargs={"response_format": {"type": "json_object"}},
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
    model = judge(args.base_url, args.model)
    failed = False
    for pair in pairs:
        case = LLMTestCase(
            input=QUESTION.format(source=pair["source"]),
            actual_output=pair["summary"],
            retrieval_context=[pair["source"]],
        )
        line: dict[str, Any] = {"id": pair["id"]}
        line["summarization"] = measure(
            SummarizationMetric(model=model, threshold=0.5, include_reason=True, async_mode=False),
            case,
        )
        line["faithfulness"] = measure(
            FaithfulnessMetric(model=model, threshold=0.5, include_reason=True, async_mode=False),
            case,
        )
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
