"""Grammar-constrained vs unconstrained greedy decode speed, same model, same prompts.

Backs the claim "grammar constraints cost little: constrained tok/s >= 0.90 x unconstrained
tok/s". For each fixture pair it builds the preprocess request (max_questions 10), then times:

1. ours: `LlamaJudge.decode` under the llguidance constraint (budget 2048); n tokens, of which
   `forced` came from the grammar and were evaluated as a batch without sampling;
2. plain: `LlamaJudge.decode` with no grammar for exactly n tokens (stop_at_eog=False);
3. gbnf: llama-cpp-python's `Llama.generate` with llama.cpp's own GBNF sampler (greedy), cut
   at n tokens or at end of generation, for reference.

Every run evaluates the whole prompt (no KV-cache prefix reuse), and the prompt evaluation is
also timed on its own, so speeds are reported both end to end (n / total) and for decoding only
(n / (total - prompt eval)). Grammar compilation is outside the timed region. Each measurement
is repeated and the medians are reported. The default model is small (135M), so per-token mask
cost weighs more here than it would beside a larger model's forward pass.

    python -m benchmarks.decode [--pairs N] [--repeat R] [--threads T] [--json PATH]

Run it alone on the machine: other load skews the numbers.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
from pathlib import Path

from benchmarks._common import (
    FIXTURE_PAIRS,
    clean,
    cpu_model,
    cpus_available,
    fmt,
    load_average,
    median,
    package_version,
    read_jsonl,
    warn_if_busy,
)
from benchmarks._decode_runs import BUDGET, MAX_QUESTIONS, bench_pair, grammar_of, pooled
from offline_scorer.backends.llama_cpp import load_judge
from offline_scorer.backends.llama_cpp.judge import LlamaJudge
from offline_scorer.scorers.summarization.asking import Asking
from offline_scorer.scorers.summarization.options import ScorerOptions
from offline_scorer.scorers.summarization.prompts import preprocess_request

CLAIM_RATIO = 0.90


# ---------------------------------------------------------------- machine facts


def machine_facts(judge: LlamaJudge) -> dict:
    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpus_available": cpus_available(),
        "threads": judge.threads,
        "load_average_1m_at_start": load_average(),
        "llama-cpp-python": package_version("llama-cpp-python"),
        "llguidance": package_version("llguidance"),
        "model": judge.spec.name,
        "model_sha256": judge.identity.model_sha256,
        "context_size": judge.context_size,
    }


# ---------------------------------------------------------------- output

COLUMNS = [
    ("pair", "id", 22, "s"),
    ("n", "n", 5, "d"),
    ("forced", "forced", 6, "d"),
    ("pe ms", "median_prompt_eval_s", 7, "ms"),
    ("ours t/s", "constrained_tps", 9, ".1f"),
    ("smpl t/s", "constrained_sampled_tps", 9, ".1f"),
    ("plain t/s", "plain_tps", 9, ".1f"),
    ("ours/plain", "ratio", 10, ".3f"),
    ("smpl/plain", "sampled_ratio", 10, ".3f"),
    ("e2e o/p", "ratio_e2e", 8, ".3f"),
    ("gbnf t/s", "gbnf_tps", 9, ".1f"),
    ("gbnf/plain", "gbnf_ratio", 10, ".3f"),
]


def cell(row: dict, key: str, width: int, kind: str) -> str:
    value = row.get(key)
    if kind == "s":
        return f"{str(value)[:width]:<{width}}"
    if value is None or (isinstance(value, float) and math.isnan(value)):
        text = "err" if key.startswith("gbnf") and row.get("gbnf_error") else "-"
        return f"{text:>{width}}"
    if kind == "ms":
        return f"{value * 1000:>{width}.1f}"
    return f"{value:>{width}{kind}}"


def print_table(rows: list[dict], overall: dict) -> None:
    header = " ".join(
        f"{title:<{w}}" if kind == "s" else f"{title:>{w}}" for title, _, w, kind in COLUMNS
    )
    print(header)
    print("-" * len(header))
    for row in [*rows, overall]:
        if row is overall:
            print("-" * len(header))
        print(" ".join(cell(row, key, w, kind) for _, key, w, kind in COLUMNS))
    print(
        "t/s = tokens per second of decoding only (median total - median prompt eval); "
        "e2e o/p = ours/plain ratio\nincluding prompt eval; smpl = sampled tokens only "
        "(n - forced) over the same time; pe = prompt eval of\nthe whole prompt (no prefix "
        "reuse). Overall row: all pairs pooled (sum of tokens / sum of median seconds)."
    )


# ---------------------------------------------------------------- main


def main() -> None:
    doc = __doc__ or ""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=None, help="first N fixture pairs (all)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (3)")
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads")
    parser.add_argument("--json", type=Path, default=None, help="write the raw numbers here")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be >= 1")
    if args.pairs is not None and args.pairs < 1:
        parser.error("--pairs must be >= 1")

    warn_if_busy()
    pairs = read_jsonl(FIXTURE_PAIRS, args.pairs)

    started = time.perf_counter()
    judge = load_judge(threads=args.threads)
    judge.engine.reuse_prefix = False  # every run pays the same, full prompt evaluation
    load_s = time.perf_counter() - started
    facts = machine_facts(judge)

    # Warm-up (untimed): first-touch of the weights and the llguidance tokenizer (~0.2 s).
    first = preprocess_request(
        pairs[0]["source"], pairs[0]["summary"], MAX_QUESTIONS, Asking.of(ScorerOptions())
    )
    warm_prompt = judge.engine.prompt(first.messages)
    judge.engine.constraint(grammar_of(first.output_schema), "preprocess")
    judge.engine.decode(warm_prompt, None, budget=16, stop_at_eog=False)

    rows = []
    for index, pair in enumerate(pairs, 1):
        pair_started = time.perf_counter()
        row = bench_pair(judge, pair, args.repeat)
        rows.append(row)
        print(
            f"[{index}/{len(pairs)}] {pair['id']}: n={row['n']} forced={row['forced']} "
            f"ratio={fmt(row['ratio'], '.3f')} gbnf_ratio={fmt(row['gbnf_ratio'], '.3f')} "
            f"({time.perf_counter() - pair_started:.1f} s)",
            file=sys.stderr,
        )
    overall = pooled(rows)

    print(
        f"decode speed: {len(rows)} pair(s), {args.repeat} repeat(s), medians; "
        f"model {facts['model']}, {facts['threads']} thread(s), greedy, preprocess step"
    )
    print_table(rows, overall)
    for row in rows:
        for note in row["notes"]:
            print(f"note: {row['id']}: {note}")
        if row["gbnf_error"]:
            print(f"gbnf error: {row['id']}: {row['gbnf_error']}")
        elif row["gbnf_same_tokens_as_ours"] is False:
            print(
                f"note: {row['id']}: llama.cpp GBNF chose different tokens than ours "
                f"({row['median_gbnf_n']:.0f} tokens, stopped at EOG: "
                f"{row['gbnf_stopped_at_eog']})"
            )

    summary = {
        "median_ratio": median([r["ratio"] for r in rows]),
        "median_ratio_e2e": median([r["ratio_e2e"] for r in rows]),
        "median_sampled_ratio": median([r["sampled_ratio"] for r in rows]),
        "median_gbnf_ratio": median([r["gbnf_ratio"] for r in rows]),
        "median_gbnf_ratio_e2e": median([r["gbnf_ratio_e2e"] for r in rows]),
        "median_constraint_build_ms": 1000 * median([r["median_constraint_build_s"] for r in rows]),
    }
    claim = summary["median_ratio"] >= CLAIM_RATIO
    facts["load_average_1m_at_end"] = load_average()
    print(
        f"machine: {facts['platform']}; CPU {facts['cpu_model']} "
        f"({facts['cpus_available']} available of {facts['cpu_count']}); "
        f"{facts['threads']} thread(s); llama-cpp-python {facts['llama-cpp-python']}, "
        f"llguidance {facts['llguidance']}; model load {load_s:.2f} s; 1-min load average "
        f"{fmt(facts['load_average_1m_at_start'])} at start, "
        f"{fmt(facts['load_average_1m_at_end'])} at end"
    )
    print(
        "SUMMARY (median over pairs): ours/plain "
        f"{fmt(summary['median_ratio'], '.3f')} decode-only, "
        f"{fmt(summary['median_ratio_e2e'], '.3f')} end-to-end; sampled-only/plain "
        f"{fmt(summary['median_sampled_ratio'], '.3f')}; llama.cpp GBNF/plain "
        f"{fmt(summary['median_gbnf_ratio'], '.3f')} decode-only, "
        f"{fmt(summary['median_gbnf_ratio_e2e'], '.3f')} end-to-end; grammar compile "
        f"{summary['median_constraint_build_ms']:.1f} ms (untimed); claim ours/plain >= "
        f"{CLAIM_RATIO:.2f}: {'holds' if claim else 'DOES NOT HOLD'}"
    )
    if args.json is not None:
        payload = {
            "machine": facts,
            "settings": {
                "pairs": len(rows),
                "repeat": args.repeat,
                "budget": BUDGET,
                "max_questions": MAX_QUESTIONS,
                "reuse_prefix": False,
                "model_load_s": load_s,
            },
            "pairs": rows,
            "overall_pooled": overall,
            "summary": {**summary, "claim_ratio": CLAIM_RATIO, "claim_holds": claim},
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(clean(payload), indent=2) + "\n")
        print(f"raw numbers: {args.json}")


if __name__ == "__main__":
    main()
