"""offline-scorer beside DeepEval and beside the decode limit: one run, one machine, one GGUF.

For each repeat, on the same documents (fixtures/pairs.jsonl) and the same model file:

1. ours: the live `SummarizationScorer` over `LlamaJudge` (grammar-constrained, greedy, KV-cache
   prefix reuse): wall time per evaluation, model calls, prompt tokens (rendered, and evaluated
   after prefix reuse), tokens generated, schema-valid outputs (no `GenerationError`);
2. DeepEval: `SummarizationMetric` over the same GGUF through llama-cpp-python's chat completion,
   in DeepEval's own virtual environment (bench/deepeval/.venv, `bash bench/deepeval/setup.sh`),
   run as a subprocess with the same threads; prompt-and-parse JSON, as a typical user writes it
   (no grammar); a cap of --deepeval-max-tokens per call and --deepeval-timeout per evaluation;
3. the decode limit: raw llama.cpp, unconstrained and greedy, generating exactly as many tokens
   as ours generated, from ours' very prompts (same tokens, same prefix reuse), call by call;

then, once, the replay figures of `benchmarks.replay` and `benchmarks.cassette_open`.
Medians over repeats of each system's mean per evaluation; a Markdown table on stdout, the raw
numbers in --out (JSON) if given. Model load time is outside every timed region.

    python -m benchmarks.side_by_side [--pairs N] [--repeat R] [--threads T] \
        [--out docs/benchmarks-side-by-side.json]

Run it alone on the machine: other load skews every number here.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks._common import (
    FIXTURE_PAIRS,
    ROOT,
    clean,
    cpu_model,
    cpus_available,
    load_average,
    median,
    module_command,
    package_version,
    read_jsonl,
    warn_if_busy,
)
from benchmarks._side_by_side_report import (
    GOAL_INVALID,
    GOAL_OVERHEAD,
    GOAL_REPLAY,
    GOAL_SPEEDUP,
    print_report,
    schema_counts,
    summarise,
)
from benchmarks._side_by_side_systems import (
    DEEPEVAL_PYTHON,
    Instrument,
    run_deepeval,
    run_limit,
    run_ours,
)
from offline_scorer.backends.llama_cpp import load_judge
from offline_scorer.backends.llama_cpp.gbnf import request_grammar
from offline_scorer.settings import default_threads

PAIRS_FILE = FIXTURE_PAIRS


# ---------------------------------------------------------------- replay figures


def last_json_line(text: str) -> dict | None:
    for line in reversed(text.splitlines()):
        if line.strip().startswith("{"):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                return None
    return None


def run_script(module: str, *args: str, timeout: float) -> dict:
    """Run another benchmark in a fresh process; its figures are its last JSON line."""
    command = module_command(module, *args)
    try:
        child = subprocess.run(
            command, capture_output=True, text=True, cwd=str(ROOT), timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return {"command": shlex.join(command), "error": f"timed out after {timeout:.0f} s"}
    figures = last_json_line(child.stdout)
    result: dict[str, Any] = {
        "command": shlex.join(["python", "-m", module, *args]),
        "returncode": child.returncode,
        "figures": figures,
        "text": child.stdout.strip(),
    }
    if child.returncode != 0 or figures is None:
        result["error"] = (child.stderr.strip().splitlines() or ["no JSON line"])[-1][:300]
    return result


# ---------------------------------------------------------------- main


def main() -> None:
    doc = __doc__ or ""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=0, help="first N pairs (0: all 12)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="llama.cpp threads for every system (default: CPUs available)",
    )
    parser.add_argument("--out", type=Path, default=None, help="write the raw numbers (JSON)")
    parser.add_argument("--pairs-file", type=Path, default=PAIRS_FILE)
    parser.add_argument(
        "--deepeval-max-tokens",
        type=int,
        default=1024,
        help="max_tokens of each DeepEval model call",
    )
    parser.add_argument(
        "--deepeval-timeout",
        type=float,
        default=900.0,
        help="seconds per DeepEval evaluation (checked before each call)",
    )
    parser.add_argument(
        "--deepeval-json-mode",
        choices=("parse", "grammar"),
        default="parse",
        help="parse: DeepEval parses JSON out of free text; grammar: "
        "llama-cpp-python enforces each DeepEval schema (JSON confinement)",
    )
    parser.add_argument("--replay-seconds", type=float, default=10.0)
    args = parser.parse_args()
    args.threads = args.threads or default_threads()
    command = shlex.join(["python", *sys.argv])

    load_start = load_average()
    warn_if_busy()
    if not DEEPEVAL_PYTHON.exists():
        sys.exit(
            f"error: {DEEPEVAL_PYTHON} is missing; run `bash bench/deepeval/setup.sh` "
            "first (DeepEval lives in its own virtual environment)"
        )

    pairs = read_jsonl(args.pairs_file, args.pairs)

    started = time.perf_counter()
    judge = load_judge("default", threads=args.threads)
    ours_load_s = time.perf_counter() - started
    model_path = judge.spec.locate()
    started = time.perf_counter()
    # Builds the llguidance tokenizer (once per process, ~0.3 s) outside the timed region, with
    # a grammar no scorer request uses, so no cache the evaluations rely on is warmed.
    warm_grammar = request_grammar({"type": "boolean"})
    if warm_grammar is None:
        raise SystemExit("the warm-up schema compiled to no grammar")
    judge.engine.constraint(warm_grammar, "warm-up")
    ours_warmup_s = time.perf_counter() - started
    inst = Instrument(judge)

    repeats: list[dict[str, list[dict]]] = []
    deepeval_runs: list[dict] = []
    for repeat in range(args.repeat):
        print(f"--- repeat {repeat + 1}/{args.repeat}", file=sys.stderr)
        ours = run_ours(judge, inst, pairs, repeat)
        deepeval_rows, info = run_deepeval(args, model_path, pairs, repeat)
        deepeval_runs.append(info | {"repeat": repeat + 1})
        limit = run_limit(inst, ours, repeat)
        repeats.append({"ours": ours, "deepeval": deepeval_rows, "limit": limit})

    print("--- replay benchmarks", file=sys.stderr)
    replay = run_script(
        "benchmarks.replay",
        "--seconds",
        str(args.replay_seconds),
        timeout=args.replay_seconds * 10 + 120,
    )
    cassette = run_script("benchmarks.cassette_open", timeout=900)

    summary = summarise(repeats)
    de_rows = [row for r in repeats for row in r["deepeval"] if "deepeval_version" in row]
    meta = {
        "pairs": len(pairs),
        "repeat": args.repeat,
        "threads": args.threads,
        "model": judge.spec.name,
        "model_path": str(model_path),
        "model_sha256": judge.identity.model_sha256,
        "ours_load_s": ours_load_s,
        "ours_warmup_s": ours_warmup_s,
        "deepeval_max_tokens": args.deepeval_max_tokens,
        "deepeval_timeout": args.deepeval_timeout,
        "deepeval_json_mode": args.deepeval_json_mode,
        "deepeval_chat_format": de_rows[0]["chat_format"] if de_rows else None,
        "deepeval_load_s": median([row["model_load_s"] for row in de_rows]),
        "deepeval_schemas": schema_counts(de_rows),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpus_available": cpus_available(),
        "load_average_1m_at_start": load_start,
        "load_average_1m_at_end": load_average(),
        "versions": {
            "offline-scorer": package_version("offline-scorer"),
            "llama-cpp-python": package_version("llama-cpp-python"),
            "llguidance": package_version("llguidance"),
            "deepeval": de_rows[0]["deepeval_version"] if de_rows else "unknown (no run)",
        },
        "command": command,
        "goals": {
            "speedup_vs_deepeval": GOAL_SPEEDUP,
            "invalid_outputs": GOAL_INVALID,
            "overhead_over_limit": GOAL_OVERHEAD,
            "replay_evals_per_s": GOAL_REPLAY,
        },
    }
    print_report(summary, meta, replay, cassette, deepeval_runs)
    if args.out is not None:
        payload = {
            "meta": meta,
            "summary": summary,
            "replay": replay,
            "cassette_open": cassette,
            "deepeval_runs": deepeval_runs,
            "repeats": repeats,
        }
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(clean(payload), indent=2) + "\n")
        print(f"\nRaw numbers: {args.out}")


if __name__ == "__main__":
    main()
