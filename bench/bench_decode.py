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

    python bench/bench_decode.py [--pairs N] [--repeat R] [--threads T] [--json PATH]

Run it alone on the machine: other load skews the numbers.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.machine import cpu_model, package_version  # noqa: E402
from offline_scorer.backends.llama_cpp import load_judge  # noqa: E402
from offline_scorer.backends.llama_cpp.gbnf import request_grammar  # noqa: E402
from offline_scorer.scorers.summarization.asking import Asking  # noqa: E402
from offline_scorer.scorers.summarization.options import ScorerOptions  # noqa: E402
from offline_scorer.scorers.summarization.prompts import PREPROCESS_MAX_TOKENS, preprocess_request  # noqa: E402

PAIRS_FILE = ROOT / "fixtures" / "pairs.jsonl"
MAX_QUESTIONS = 10
BUDGET = PREPROCESS_MAX_TOKENS  # 2048
CLAIM_RATIO = 0.90
LOAD_LIMIT = 0.5
NAN = float("nan")


# ---------------------------------------------------------------- machine facts


def warn_if_busy() -> None:
    try:
        load1 = os.getloadavg()[0]
    except OSError:
        return
    if load1 > LOAD_LIMIT:
        print(
            f"warning: 1-minute load average is {load1:.2f} (> {LOAD_LIMIT}); "
            "benchmarks must run alone, so these numbers may be skewed",
            file=sys.stderr,
        )


def machine_facts(judge) -> dict:
    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:
        affinity = os.cpu_count() or 0
    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpus_available": affinity,
        "threads": judge.threads,
        "load_average_1m_at_start": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "llama-cpp-python": package_version("llama-cpp-python"),
        "llguidance": package_version("llguidance"),
        "model": judge.spec.name,
        "model_sha256": judge.identity.model_sha256,
        "context_size": judge.context_size,
    }


# ---------------------------------------------------------------- one measurement each


def time_prompt_eval(judge, prompt: list[int]) -> float:
    started = time.perf_counter()
    judge.engine.eval_prompt(prompt)
    return time.perf_counter() - started


def run_constrained(judge, prompt: list[int], grammar: str) -> dict:
    started = time.perf_counter()
    constraint = judge.engine.constraint(grammar, "preprocess")
    build_s = time.perf_counter() - started
    started = time.perf_counter()
    tokens, forced, finished = judge.engine.decode(prompt, constraint, BUDGET)
    seconds = time.perf_counter() - started
    return {
        "tokens": tokens,
        "n": len(tokens),
        "forced": forced,
        "finished": finished,
        "seconds": seconds,
        "build_s": build_s,
    }


def run_plain(judge, prompt: list[int], n: int) -> dict:
    started = time.perf_counter()
    tokens, _, _ = judge.engine.decode(prompt, None, budget=n, stop_at_eog=False)
    seconds = time.perf_counter() - started
    return {"n": len(tokens), "seconds": seconds}


def run_gbnf(judge, prompt: list[int], grammar: str, n: int, reference: list[int]) -> dict:
    """llama.cpp's own grammar sampler; any failure becomes {"error": ...}, never a crash."""
    try:
        import llama_cpp
        from llama_cpp import LlamaGrammar

        rt = judge.engine.rt
        llama = rt.llama
        # A grammar llama.cpp cannot parse gives a NULL sampler, which llama-cpp-python would
        # add to its chain unchecked (a crash later): try it on its own first.
        started = time.perf_counter()
        probe = llama_cpp.llama_sampler_init_grammar(rt.vocab, grammar.encode("utf-8"), b"root")
        build_s = time.perf_counter() - started
        if not probe:
            return {"error": "llama.cpp could not parse the grammar (NULL grammar sampler)"}
        llama_cpp.llama_sampler_free(probe)
        gbnf = LlamaGrammar.from_string(grammar, verbose=False)
        llama.n_tokens = 0  # generate(reset=True) would otherwise reuse the cached prefix
        tokens: list[int] = []
        stopped_at_eog = False
        started = time.perf_counter()
        generator = llama.generate(prompt, temp=0.0, top_k=1, grammar=gbnf, reset=True)
        for token in generator:
            if llama_cpp.llama_vocab_is_eog(rt.vocab, token):
                stopped_at_eog = True
                break
            tokens.append(int(token))
            if len(tokens) >= n:
                break
        seconds = time.perf_counter() - started
        generator.close()
        llama._sampler = None  # drop the grammar sampler chain generate() left behind
    except Exception as error:
        return {"error": f"{type(error).__name__}: {error}"}
    return {
        "n": len(tokens),
        "seconds": seconds,
        "build_s": build_s,
        "stopped_at_eog": stopped_at_eog,
        "same_tokens": tokens == reference[: len(tokens)],
    }


# ---------------------------------------------------------------- per pair


def median(values: list[float]) -> float:
    return statistics.median(values) if values else NAN


def rate(tokens: float, seconds: float) -> float:
    return tokens / seconds if seconds > 0 and not math.isnan(seconds) else NAN


def ratio(a: float, b: float) -> float:
    return a / b if b > 0 and not (math.isnan(a) or math.isnan(b)) else NAN


def grammar_of(schema: Mapping[str, Any] | None) -> str:
    """The GBNF a schema compiles to (every request here has a schema)."""
    grammar = request_grammar(schema)
    if grammar is None:
        raise SystemExit("a request without an output schema has no grammar to benchmark")
    return grammar


def bench_pair(judge, pair: dict, repeat: int) -> dict:
    request = preprocess_request(
        pair["source"], pair["summary"], MAX_QUESTIONS, Asking.of(ScorerOptions())
    )
    grammar = grammar_of(request.output_schema)
    prompt = judge.engine.prompt(request.messages)
    raw: dict[str, list] = {
        key: []
        for key in (
            "prompt_eval_s",
            "constrained_s",
            "constraint_build_s",
            "plain_s",
            "gbnf_s",
            "gbnf_n",
            "gbnf_build_s",
        )
    }
    n = forced = None
    finished = True
    reference: list[int] = []
    gbnf_error = None
    gbnf_eog = gbnf_same = None
    notes: list[str] = []
    for _ in range(repeat):
        raw["prompt_eval_s"].append(time_prompt_eval(judge, prompt))
        ours = run_constrained(judge, prompt, grammar)
        if n is None:
            n, forced, finished = ours["n"], ours["forced"], ours["finished"]
            reference = ours["tokens"]
        elif (ours["n"], ours["forced"]) != (n, forced):
            notes.append(
                f"constrained run gave n={ours['n']} forced={ours['forced']}, "
                f"first run n={n} forced={forced} (greedy should be deterministic)"
            )
        raw["constrained_s"].append(ours["seconds"])
        raw["constraint_build_s"].append(ours["build_s"])
        plain = run_plain(judge, prompt, n)
        raw["plain_s"].append(plain["seconds"])
        if gbnf_error is None:
            gbnf = run_gbnf(judge, prompt, grammar, n, reference)
            if "error" in gbnf:
                gbnf_error = gbnf["error"]
            else:
                raw["gbnf_s"].append(gbnf["seconds"])
                raw["gbnf_n"].append(gbnf["n"])
                raw["gbnf_build_s"].append(gbnf["build_s"])
                gbnf_eog, gbnf_same = gbnf["stopped_at_eog"], gbnf["same_tokens"]
    if n is None or forced is None:
        raise SystemExit("--repeat must be at least 1")
    if not finished:
        notes.append(f"constrained answer hit the {BUDGET}-token budget before completing")
    pe = median(raw["prompt_eval_s"])
    cons = median(raw["constrained_s"])
    plain_s = median(raw["plain_s"])
    gbnf_s = median(raw["gbnf_s"])
    gbnf_n = median(raw["gbnf_n"])
    sampled = n - forced
    for name, total in (("constrained", cons), ("plain", plain_s), ("gbnf", gbnf_s)):
        if total <= pe:
            notes.append(
                f"{name} run took {total:.2f} s in all, not more than the prompt evaluation "
                f"timed alone ({pe:.2f} s): no decode-only speed; the timings are too noisy "
                "(is the machine quiet?)"
            )
    row = {
        "id": pair["id"],
        "prompt_tokens": len(prompt),
        "n": n,
        "forced": forced,
        "sampled": sampled,
        "finished": finished,
        "median_prompt_eval_s": pe,
        "median_constrained_s": cons,
        "median_plain_s": plain_s,
        "median_gbnf_s": gbnf_s,
        "median_gbnf_n": gbnf_n,
        "median_constraint_build_s": median(raw["constraint_build_s"]),
        "median_gbnf_build_s": median(raw["gbnf_build_s"]),
        "constrained_tps_e2e": rate(n, cons),
        "constrained_tps": rate(n, cons - pe),
        "constrained_sampled_tps": rate(sampled, cons - pe),
        "plain_tps_e2e": rate(n, plain_s),
        "plain_tps": rate(n, plain_s - pe),
        "gbnf_tps_e2e": rate(gbnf_n, gbnf_s),
        "gbnf_tps": rate(gbnf_n, gbnf_s - pe),
        "gbnf_stopped_at_eog": gbnf_eog,
        "gbnf_same_tokens_as_ours": gbnf_same,
        "gbnf_error": gbnf_error,
        "notes": notes,
        "raw": raw,
    }
    add_ratios(row)
    return row


def add_ratios(row: dict) -> None:
    row["ratio"] = ratio(row["constrained_tps"], row["plain_tps"])
    row["ratio_e2e"] = ratio(row["constrained_tps_e2e"], row["plain_tps_e2e"])
    row["sampled_ratio"] = ratio(row["constrained_sampled_tps"], row["plain_tps"])
    row["gbnf_ratio"] = ratio(row["gbnf_tps"], row["plain_tps"])
    row["gbnf_ratio_e2e"] = ratio(row["gbnf_tps_e2e"], row["plain_tps_e2e"])


def pooled(rows: list[dict]) -> dict:
    """All pairs as one workload: total tokens over total (median) seconds."""
    n = sum(r["n"] for r in rows)
    sampled = sum(r["sampled"] for r in rows)
    pe = sum(r["median_prompt_eval_s"] for r in rows)
    cons = sum(r["median_constrained_s"] for r in rows)
    plain_s = sum(r["median_plain_s"] for r in rows)
    with_gbnf = [r for r in rows if r["gbnf_error"] is None]
    gbnf_n = sum(r["median_gbnf_n"] for r in with_gbnf)
    gbnf_s = sum(r["median_gbnf_s"] for r in with_gbnf)
    gbnf_pe = sum(r["median_prompt_eval_s"] for r in with_gbnf)
    row = {
        "id": "overall (pooled)",
        "n": n,
        "forced": sum(r["forced"] for r in rows),
        "sampled": sampled,
        "median_prompt_eval_s": pe / len(rows),
        "constrained_tps_e2e": rate(n, cons),
        "constrained_tps": rate(n, cons - pe),
        "constrained_sampled_tps": rate(sampled, cons - pe),
        "plain_tps_e2e": rate(n, plain_s),
        "plain_tps": rate(n, plain_s - pe),
        "gbnf_tps_e2e": rate(gbnf_n, gbnf_s) if with_gbnf else NAN,
        "gbnf_tps": rate(gbnf_n, gbnf_s - gbnf_pe) if with_gbnf else NAN,
    }
    add_ratios(row)
    return row


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


def finite(values: list[float]) -> list[float]:
    return [v for v in values if v is not None and not math.isnan(v)]


def clean(value):
    """NaN -> None, so the JSON file is strict JSON."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clean(v) for v in value]
    return value


def fmt(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.3f}"


def fmt_load(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


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
    pairs = [json.loads(line) for line in PAIRS_FILE.read_text().splitlines() if line.strip()]
    pairs = pairs[: args.pairs] if args.pairs is not None else pairs

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
            f"ratio={fmt(row['ratio'])} gbnf_ratio={fmt(row['gbnf_ratio'])} "
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
        "median_ratio": median(finite([r["ratio"] for r in rows])),
        "median_ratio_e2e": median(finite([r["ratio_e2e"] for r in rows])),
        "median_sampled_ratio": median(finite([r["sampled_ratio"] for r in rows])),
        "median_gbnf_ratio": median(finite([r["gbnf_ratio"] for r in rows])),
        "median_gbnf_ratio_e2e": median(finite([r["gbnf_ratio_e2e"] for r in rows])),
        "median_constraint_build_ms": 1000 * median([r["median_constraint_build_s"] for r in rows]),
    }
    claim = summary["median_ratio"] >= CLAIM_RATIO
    facts["load_average_1m_at_end"] = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    print(
        f"machine: {facts['platform']}; CPU {facts['cpu_model']} "
        f"({facts['cpus_available']} available of {facts['cpu_count']}); "
        f"{facts['threads']} thread(s); llama-cpp-python {facts['llama-cpp-python']}, "
        f"llguidance {facts['llguidance']}; model load {load_s:.2f} s; 1-min load average "
        f"{fmt_load(facts['load_average_1m_at_start'])} at start, "
        f"{fmt_load(facts['load_average_1m_at_end'])} at end"
    )
    print(
        f"SUMMARY (median over pairs): ours/plain {fmt(summary['median_ratio'])} decode-only, "
        f"{fmt(summary['median_ratio_e2e'])} end-to-end; sampled-only/plain "
        f"{fmt(summary['median_sampled_ratio'])}; llama.cpp GBNF/plain "
        f"{fmt(summary['median_gbnf_ratio'])} decode-only, "
        f"{fmt(summary['median_gbnf_ratio_e2e'])} end-to-end; grammar compile "
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
