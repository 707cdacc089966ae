"""Inspect AI, promptfoo and DeepEval against `serve`: requests, record and replay, identical?

    python -m benchmarks.serve_clients [--model smollm2-135m] [--clients inspect promptfoo
        deepeval] [--pairs 12] [--out benchmarks/results/serve-clients-MODEL.json]

For each client, over the first --pairs fixture pairs (all 12 by default): `offline-scorer serve
--model MODEL --record-mode record` on loopback answers the framework's own evaluation (the
configurations of docs/serve.md, run by tests/python_clients.py and tests/promptfoo_client.py),
through a proxy that keeps every request the client sends (tests/request_log.py); then a `serve
--record-mode replay` with the model runtime import-blocked answers the same run. Printed per
client: the framework's version, the requests per evaluation (and what they carried: fields,
response format, streaming, repeats), the record and replay times of the client's run (the
server already up), the evaluations that completed (a score and reason, no parse failure), and
whether the replay's output is byte-identical to the recording's. Needs scripts/setup-clients
done; loads the model once per client, so run it alone on the machine.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests import promptfoo_client, python_clients
from tests.mastra_client import load_fixture_pairs
from tests.request_log import RequestLog, summary
from tests.serve_process import serving

CLIENTS = ("inspect", "promptfoo", "deepeval")


def _inspect(base_url: str, pairs: list[dict], work: Path) -> dict[str, Any]:
    run = python_clients.run_inspect(base_url, pairs, work, check=False)
    done = [r for r in run.results if r.get("value") in ("C", "I")]
    return {
        "lines": run.lines,
        "evaluations": len(pairs),
        "completed": len(done),
        "failures": [r for r in run.results if "error" in r],
        "version": run.trailer.get("inspect_ai"),
        "network_attempts": run.trailer.get("network_attempts"),
    }


def _promptfoo(base_url: str, pairs: list[dict], work: Path) -> dict[str, Any]:
    try:
        run = promptfoo_client.run_eval(base_url, pairs, work)
    except AssertionError as error:
        return {"lines": [], "evaluations": 2 * len(pairs), "completed": 0, "error": str(error)}
    failures = promptfoo_client.grading_failures(run.results)
    return {
        "lines": run.lines,
        "evaluations": 2 * len(pairs),  # llm-rubric and factuality per pair
        "completed": 2 * len(pairs) - len(failures),
        "failures": failures,
        "version": promptfoo_client.installed_version(),
    }


def _deepeval(base_url: str, pairs: list[dict], work: Path) -> dict[str, Any]:
    run = python_clients.run_deepeval(base_url, pairs, work, check=False)
    metrics = ("summarization", "faithfulness")
    entries = [(r["id"], m, r.get(m, {})) for r in run.results for m in metrics]
    return {
        "lines": run.lines,
        "evaluations": 2 * len(pairs),
        "completed": sum(1 for _, _, e in entries if "score" in e),
        "failures": [
            f"{i} {m}: {e.get('error', 'missing')[:300]}" for i, m, e in entries if "score" not in e
        ],
        "version": run.trailer.get("deepeval"),
        "network_attempts": run.trailer.get("network_attempts"),
    }


RUNNERS: dict[str, Callable[[str, list[dict], Path], dict[str, Any]]] = {
    "inspect": _inspect,
    "promptfoo": _promptfoo,
    "deepeval": _deepeval,
}


def bench_client(name: str, model: str, pairs: list[dict], tmp: Path) -> dict[str, Any]:
    cassette = tmp / f"{name}.oscas"
    args = ("--model", model, "--cassette", str(cassette), "--threads", "2")
    runner = RUNNERS[name]
    with serving(tmp, "--record-mode", "record", *args) as live, RequestLog(live.port) as log:
        start = time.perf_counter()
        first = runner(log.base_url, pairs, tmp / f"{name}-record")
        record_s = time.perf_counter() - start
    with (
        serving(tmp, "--record-mode", "replay", *args, block_runtime=True) as replay,
        RequestLog(replay.port) as replay_log,
    ):
        start = time.perf_counter()
        second = runner(replay_log.base_url, pairs, tmp / f"{name}-replay")
        replay_s = time.perf_counter() - start
    sent = summary(log.requests)
    return {
        "client": name,
        "version": first.get("version"),
        "pairs": len(pairs),
        "evaluations": first["evaluations"],
        "requests": sent,
        "requests_per_evaluation": round(sent["chat_requests"] / first["evaluations"], 2),
        "record_s": round(record_s, 1),
        "replay_s": round(replay_s, 1),
        "completed": first["completed"],
        "completed_replay": second["completed"],
        "failures": first.get("failures", []) + ([first["error"]] if "error" in first else []),
        "replay_statuses": summary(replay_log.requests)["status"],
        "identical": bool(first["lines"]) and first["lines"] == second["lines"],
        "network_attempts": first.get("network_attempts"),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("--clients", nargs="+", choices=CLIENTS, default=list(CLIENTS))
    parser.add_argument("--pairs", type=int, default=12)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    pairs = load_fixture_pairs()[: args.pairs]
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-serve-clients-") as tmp:
        for name in args.clients:
            row = bench_client(name, args.model, pairs, Path(tmp))
            rows.append(row)
            sent = row["requests"]
            print(
                f"{name} {row['version']}: {row['requests_per_evaluation']} requests/evaluation "
                f"({sent['chat_requests']} for {row['evaluations']} evaluations), record "
                f"{row['record_s']} s, replay {row['replay_s']} s, completed "
                f"{row['completed']}/{row['evaluations']} (replay {row['completed_replay']}), "
                f"identical: {row['identical']}",
                flush=True,
            )
            print(f"  sent: {json.dumps(sent, sort_keys=True)}", flush=True)
            for failure in row["failures"]:
                print(f"  failure: {str(failure)[:300]}", flush=True)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        report = {"model": args.model, "pairs": len(pairs), "clients": rows}
        args.out.write_text(json.dumps(report, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
