"""The measurements behind `benchmarks.decode`: one decode each way (ours under the grammar,
plain, llama.cpp's GBNF), timed per fixture pair, and the pairs pooled into one workload.

Apart from the command so that its module stays small; nothing here prints.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any

from benchmarks._common import NAN, median, ratio
from offline_scorer.backends.llama_cpp.gbnf import request_grammar
from offline_scorer.backends.llama_cpp.judge import LlamaJudge
from offline_scorer.scorers.summarization.asking import Asking
from offline_scorer.scorers.summarization.options import ScorerOptions
from offline_scorer.scorers.summarization.prompts import PREPROCESS_MAX_TOKENS, preprocess_request

MAX_QUESTIONS = 10
BUDGET = PREPROCESS_MAX_TOKENS  # 2048


def time_prompt_eval(judge: LlamaJudge, prompt: list[int]) -> float:
    started = time.perf_counter()
    judge.engine.eval_prompt(prompt)
    return time.perf_counter() - started


def run_constrained(judge: LlamaJudge, prompt: list[int], grammar: str) -> dict:
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


def run_plain(judge: LlamaJudge, prompt: list[int], n: int) -> dict:
    started = time.perf_counter()
    tokens, _, _ = judge.engine.decode(prompt, None, budget=n, stop_at_eog=False)
    seconds = time.perf_counter() - started
    return {"n": len(tokens), "seconds": seconds}


def run_gbnf(
    judge: LlamaJudge, prompt: list[int], grammar: str, n: int, reference: list[int]
) -> dict:
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


def rate(tokens: float, seconds: float) -> float:
    return tokens / seconds if seconds > 0 and not math.isnan(seconds) else NAN


def grammar_of(schema: Mapping[str, Any] | None) -> str:
    """The GBNF a schema compiles to (every request here has a schema)."""
    grammar = request_grammar(schema)
    if grammar is None:
        raise SystemExit("a request without an output schema has no grammar to benchmark")
    return grammar


def bench_pair(judge: LlamaJudge, pair: dict, repeat: int) -> dict:
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
