"""What `benchmarks.side_by_side` makes of its rows: each system's figures over repeats, their
ratios against the goals, and the Markdown report printed on stdout.
"""

from __future__ import annotations

import math
from typing import Any

from benchmarks._common import LOAD_LIMIT, NAN, fmt, mean, median, ratio
from offline_scorer.scorers.summarization.prompts import (
    ANALYZE_MAX_TOKENS,
    PREPROCESS_MAX_TOKENS,
    REASON_MAX_TOKENS,
)

GOAL_SPEEDUP = 2.5  # DeepEval s/eval over ours
GOAL_INVALID = 0
GOAL_OVERHEAD = 0.15  # ours / limit - 1
GOAL_REPLAY = 5000.0  # evaluations/s

METRICS = (
    "seconds",
    "calls",
    "prompt_tokens",
    "prompt_tokens_evaluated",
    "completion_tokens",
    "forced_tokens",
)


def per_repeat(rows: list[dict], ids: set[str] | None = None) -> dict[str, float]:
    """One system, one repeat: mean per evaluation (over `ids` if given), invalid count."""
    chosen = [r for r in rows if ids is None or r["id"] in ids]
    summary = {key: mean([float(r.get(key, NAN)) for r in chosen]) for key in METRICS}
    summary["evaluations"] = len(chosen)
    summary["invalid"] = sum(not r["ok"] for r in chosen)
    summary["json_failures"] = sum(r.get("json_failures", 0) for r in chosen)
    return summary


def over_repeats(per: list[dict[str, Any]]) -> dict[str, Any]:
    keys = [*METRICS, "evaluations", "invalid", "json_failures"]
    return {key: median([p[key] for p in per]) for key in keys} | {
        "invalid_total": sum(p["invalid"] for p in per),
        "evaluations_total": sum(p["evaluations"] for p in per),
        "seconds_per_repeat": [p["seconds"] for p in per],
    }


def summarise(repeats: list[dict[str, list[dict]]]) -> dict:
    systems = ("ours", "deepeval", "limit")
    out: dict[str, Any] = {s: over_repeats([per_repeat(r[s]) for r in repeats]) for s in systems}
    # Pairs every system finished in that repeat: DeepEval stops at its first unparsable answer,
    # so its all-pairs mean covers less work than ours.
    matched_per: list[dict[str, Any]] = []
    for r in repeats:
        ids = {row["id"] for row in r["ours"] if row["ok"]} & {
            row["id"] for row in r["deepeval"] if row["ok"]
        }
        matched_per.append({s: per_repeat(r[s], ids) for s in systems} | {"ids": sorted(ids)})
    out["matched"] = {s: over_repeats([m[s] for m in matched_per]) for s in systems} | {
        "ids_per_repeat": [m["ids"] for m in matched_per]
    }
    ours_s, de_s, lim_s = (out[s]["seconds"] for s in systems)
    out["speedup_vs_deepeval"] = ratio(de_s, ours_s)
    out["ours_over_deepeval"] = ratio(ours_s, de_s)
    out["ours_over_limit"] = ratio(ours_s, lim_s)
    out["overhead_over_limit"] = out["ours_over_limit"] - 1
    out["matched_speedup_vs_deepeval"] = ratio(
        out["matched"]["deepeval"]["seconds"], out["matched"]["ours"]["seconds"]
    )
    # Per-repeat ratios too, so a reader can see their spread.
    out["speedup_per_repeat"] = [
        ratio(per_repeat(r["deepeval"])["seconds"], per_repeat(r["ours"])["seconds"])
        for r in repeats
    ]
    out["overhead_per_repeat"] = [
        ratio(per_repeat(r["ours"])["seconds"], per_repeat(r["limit"])["seconds"]) - 1
        for r in repeats
    ]
    return out


def schema_counts(rows: list[dict]) -> dict[str, int]:
    """Which pydantic schema DeepEval passed to generate(), over every call of every repeat."""
    counts: dict[str, int] = {}
    for row in rows:
        for call in row.get("call_detail", []):
            name = call.get("schema") or "none"
            counts[name] = counts.get(name, 0) + 1
    return counts


# ---------------------------------------------------------------- output


def verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else ("met" if ok else "NOT met")


def print_report(
    summary: dict, meta: dict, replay: dict, cassette: dict, deepeval_runs: list[dict]
) -> None:
    how = {"parse": "prompt + parse JSON", "grammar": "JSON schema enforced by llama.cpp's GBNF"}[
        meta["deepeval_json_mode"]
    ]
    names = {
        "ours": "offline-scorer live (grammar-constrained)",
        "deepeval": f"DeepEval SummarizationMetric ({how})",
        "limit": "decode limit (raw llama.cpp, unconstrained, same prompts and n)",
    }
    print(
        f"## Side by side: {meta['pairs']} pair(s) x {meta['repeat']} repeat(s), "
        f"{meta['threads']} thread(s), model {meta['model']}\n"
    )
    load = meta["load_average_1m_at_start"]
    if load is not None and load > LOAD_LIMIT:
        print(
            f"**Warning: the 1-minute load average was {load:.2f} (> {LOAD_LIMIT}) at start: "
            "the machine was not quiet, so these timings are not reliable.**\n"
        )
    print(
        "| system | s/eval | calls/eval | prompt tok/eval | prompt tok evaluated/eval "
        "| generated tok/eval | invalid outputs |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for key in ("ours", "deepeval", "limit"):
        s = summary[key]
        invalid = "-" if key == "limit" else f"{s['invalid_total']} of {s['evaluations_total']}"
        print(
            f"| {names[key]} | {fmt(s['seconds'], '.3f')} | {fmt(s['calls'], '.1f')} "
            f"| {fmt(s['prompt_tokens'], '.0f')} | {fmt(s['prompt_tokens_evaluated'], '.0f')} "
            f"| {fmt(s['completion_tokens'], '.0f')} | {invalid} |"
        )
    print(
        "\nPer-evaluation figures are each system's mean over the pairs, median over repeats. "
        "Invalid outputs: ours = `GenerationError` (answer not schema-valid or cut at its "
        "budget); DeepEval = evaluation raised (unparsable JSON, wrong keys, timeout)."
    )
    de = summary["deepeval"]
    if de["invalid_total"]:
        print(
            f"Note: a DeepEval evaluation ends at its first failure (an unparsable answer "
            f"raises; DeepEval does not retry), so its s/eval covers less work than ours on "
            f"failed pairs (JSON failures: {fmt(de['json_failures'], '.0f')} median per "
            f"repeat). Pairs both finished: "
            f"{', '.join(summary['matched']['ids_per_repeat'][0]) or 'none'} (repeat 1); "
            f"DeepEval / ours on those: {fmt(summary['matched_speedup_vs_deepeval'])}."
        )
    forced = summary["ours"]["forced_tokens"]
    print(
        f"Ours generated {fmt(summary['ours']['completion_tokens'], '.0f')} tokens/eval, of "
        f"which {fmt(forced, '.0f')} were forced by the grammar and evaluated as a batch; the "
        "limit generates every one of its tokens one at a time, so ours can beat it (a "
        "negative overhead)."
    )
    schemas = meta.get("deepeval_schemas") or {}
    if schemas:
        passed = ", ".join(f"{name} x{count}" for name, count in schemas.items())
        enforced = (
            "the schema is not enforced (no grammar), DeepEval parses the returned text"
            if meta["deepeval_json_mode"] == "parse"
            else "each schema went to llama-cpp-python as a JSON-schema response_format "
            "(GBNF) and generate returned the validated instance"
        )
        print(
            f"DeepEval called the model as generate(prompt, schema=<pydantic class>): {passed}; "
            f"{enforced}."
        )
    print("\n| ratio | value |")
    print("| --- | ---: |")
    print(f"| ours / DeepEval (s/eval) | {fmt(summary['ours_over_deepeval'], '.3f')} |")
    print(f"| DeepEval / ours (x faster) | {fmt(summary['speedup_vs_deepeval'])} |")
    print(f"| ours / limit (s/eval) | {fmt(summary['ours_over_limit'], '.3f')} |")

    speed = summary["speedup_vs_deepeval"]
    overhead = summary["overhead_over_limit"]
    replay_figures = replay.get("figures") or {}
    replay_rates = [
        replay_figures.get(name)
        for name in ("cycled_evals_per_s_median", "distinct_evals_per_s_median")
    ]
    known_rates = [rate for rate in replay_rates if rate is not None]
    replay_rate = min(known_rates) if len(known_rates) == len(replay_rates) else None
    ours_invalid = summary["ours"]["invalid_total"]
    print("\n| goal | target | where it stands |")
    print("| --- | --- | --- |")
    print(
        f"| faster per evaluation than DeepEval | >= {GOAL_SPEEDUP}x | {fmt(speed)}x: "
        f"{verdict(None if math.isnan(speed) else speed >= GOAL_SPEEDUP)}"
        f"{' (DeepEval failed some pairs: see note)' if de['invalid_total'] else ''} |"
    )
    print(
        f"| invalid outputs (ours) | {GOAL_INVALID} | {ours_invalid} of "
        f"{summary['ours']['evaluations_total']}: {verdict(ours_invalid <= GOAL_INVALID)} |"
    )
    print(
        f"| live overhead over the decode limit | <= {GOAL_OVERHEAD:.0%} | "
        f"{fmt(overhead * 100 if not math.isnan(overhead) else NAN, '.1f')}%: "
        f"{verdict(None if math.isnan(overhead) else overhead <= GOAL_OVERHEAD)} |"
    )
    print(
        f"| replay from a cassette (cycled 12 pairs; 3,000 distinct) | "
        f">= {GOAL_REPLAY:,.0f} evaluations/s | "
        f"{' ; '.join(fmt(rate, ',.0f') for rate in replay_rates)}: "
        f"{verdict(None if replay_rate is None else replay_rate >= GOAL_REPLAY)} |"
    )
    fig = cassette.get("figures") or {}
    if fig:
        print(
            f"\nCassette open: {fig.get('exchanges', 0):,} exchanges "
            f"({fig.get('file_mib')} MiB): open {fmt(fig.get('open_s'), '.3f')} s "
            f"(budget {fig.get('open_budget_s')} s), peak RSS after open "
            f"{fmt(fig.get('rss_after_open_mib'), '.1f')} MiB, retained "
            f"{fmt(fig.get('rss_retained_after_open_mib'), '.1f')} MiB; "
            f"{fig.get('lookups')} lookups {fmt(fig.get('lookups_s'), '.3f')} s."
        )
    for name, run in (("replay", replay), ("cassette open", cassette)):
        if run.get("error"):
            print(f"\n{name} benchmark failed: {run['error']}")
    for run in deepeval_runs:
        if run.get("error"):
            print(f"\nDeepEval runner problem (repeat {run['repeat']}): {run['error']}")
    print(
        f"\nDeepEval settings: max_tokens {meta['deepeval_max_tokens']} per call, timeout "
        f"{meta['deepeval_timeout']:.0f} s per evaluation (checked before each call), "
        f"temperature 0, n_ctx 8192, chat template from the GGUF "
        f"({meta.get('deepeval_chat_format')}); model load {fmt(meta.get('deepeval_load_s'))} "
        f"s (untimed). Ours: budgets {PREPROCESS_MAX_TOKENS}/{ANALYZE_MAX_TOKENS}/"
        f"{REASON_MAX_TOKENS} tokens (preprocess/analyze/reason), llguidance tokenizer "
        f"built once before timing ({fmt(meta['ours_warmup_s'])} s), model load "
        f"{fmt(meta['ours_load_s'])} s (untimed)."
    )
    print(
        f"\nMachine: {meta['platform']}; CPU {meta['cpu_model']} ({meta['cpus_available']} "
        f"available of {meta['cpu_count']}); 1-min load average "
        f"{fmt(meta['load_average_1m_at_start'])} at start, "
        f"{fmt(meta['load_average_1m_at_end'])} at end."
    )
    v = meta["versions"]
    print(
        f"Versions: offline-scorer {v['offline-scorer']}, llama-cpp-python "
        f"{v['llama-cpp-python']}, llguidance {v['llguidance']}, deepeval {v['deepeval']} "
        f"(its own venv), python {meta['python']}."
    )
    print(f"Model: {meta['model_path']} (sha256 {meta['model_sha256'][:16]}...).")
    print(f"Command: `{meta['command']}`")
