"""The floor of live judging here: the time an evaluation's tokens need at this machine's rates.

    python -m benchmarks.floor --model NAME [--data fixtures/pairs.jsonl] [--rows N]
        [--threads 2] [--cassette PATH] [--plain] [--out benchmarks/results/floor-NAME-DATA.json]

1. Rates, at the thread count given: prefill tokens/s (one batch of 512 prompt tokens into an
   empty cache, median of 3) and decode tokens/s (64 single-token steps after a prompt).
2. Every row of DATA (the first N with --rows) scored live once, as `eval` scores it (the
   judge's registry options). Per evaluation: wall time; tokens prefilled (prompt tokens
   evaluated after the KV cache's reused prefix); tokens the grammar forced; tokens sampled.
3. The floor of an evaluation: (prefilled + forced and evaluated) / prefill rate + sampled /
   decode rate; beside it the floor without the reused prefix (every prompt token prefilled),
   the cost the prompt cache saves.
   Forced tokens go through in one batch after the token that made them certain, so they cost
   what prompt tokens cost; those that end an answer are not evaluated at all (no logits would
   be read after them), nor is the prompt of an answer the grammar writes whole. Every sampled
   token costs one decode step. Grammar masks, the
   scorer's Python and the cassette are not in the floor: they are what the ratio shows.
4. With --plain: one plain read of each pair (`benchmarks.ceiling`'s prompt, cache emptied first),
   timed, so an evaluation can be set against reading the pair once.

Prints medians of each figure and of measured / floor; per-row figures go to --out. With
--cassette the exchanges are recorded there (for `eval --record-mode replay` and
`benchmarks/texts.py`). Run it alone: other load skews every rate.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks._common import FIXTURE_PAIRS, RESULTS
from benchmarks.ceiling import plain_request
from benchmarks.live_eval import Counting
from offline_scorer.assembly.open import JudgeSettings
from offline_scorer.assembly.run_spec import RunSpec
from offline_scorer.backends.llama_cpp import load_judge
from offline_scorer.backends.llama_cpp.engine import Engine
from offline_scorer.cassette.judge import CassetteJudge, RecordMode
from offline_scorer.judging.protocol import Judge
from offline_scorer.scorers.summarization.scorer import SummarizationScorer

PREFILL_TOKENS = 512
DECODE_STEPS = 64


def rates(engine: Engine, text: str) -> tuple[float, float]:
    """(prefill tokens/s, decode tokens/s) on this machine, from an empty cache each time."""
    llama = engine.llama
    tokens = engine.tokenize_plain(text)
    while len(tokens) < PREFILL_TOKENS:
        tokens += tokens
    tokens = tokens[:PREFILL_TOKENS]
    prefill = []
    for _ in range(3):
        llama.n_tokens = 0
        started = time.perf_counter()
        llama.eval(tokens)
        prefill.append(PREFILL_TOKENS / (time.perf_counter() - started))
    steps = []
    for token in tokens[:DECODE_STEPS]:
        started = time.perf_counter()
        llama.eval([token])
        steps.append(time.perf_counter() - started)
    llama.n_tokens = 0
    return statistics.median(prefill), 1 / statistics.median(steps)


def evaluate(
    rows: list[dict[str, Any]], judge: Judge, counting: Counting, engine: Engine, model: str
) -> list[dict[str, Any]]:
    """Each row scored once: wall time and the tokens it prefilled, forced and sampled."""
    options = RunSpec.of("summarization", {}, JudgeSettings(model=model)).options
    scorer = SummarizationScorer(judge, options)
    measured = []
    for row in rows:
        before = (
            engine.prefilled,
            counting.completion_tokens,
            counting.forced_tokens,
            counting.prompt_tokens,
            engine.forced_evaluated,
        )
        started = time.perf_counter()
        scorer.score_texts(row["source"], row["summary"])
        took = time.perf_counter() - started
        prefilled = engine.prefilled - before[0]
        forced = counting.forced_tokens - before[2]
        sampled = counting.completion_tokens - before[1] - forced
        measured.append(
            {
                "id": row["id"],
                "seconds": took,
                "prompt_tokens": counting.prompt_tokens - before[3],
                "prefilled": prefilled,
                "forced": forced,
                "forced_evaluated": engine.forced_evaluated - before[4],
                "sampled": sampled,
            }
        )
    return measured


def plain_reads(rows: list[dict[str, Any]], counting: Counting, engine: Engine) -> list[float]:
    """Seconds of one plain read per pair, from an empty cache (nothing of the pair is known)."""
    took = []
    for row in rows:
        engine.llama.n_tokens = 0
        started = time.perf_counter()
        counting.complete(plain_request(row["source"], row["summary"]))
        took.append(time.perf_counter() - started)
    return took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("--data", type=Path, default=FIXTURE_PAIRS)
    parser.add_argument("--rows", type=int, default=0, help="first N rows (0: all)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--cassette", type=Path, help="record the evaluations' exchanges here")
    parser.add_argument("--plain", action="store_true", help="also time one plain read per pair")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    lines = args.data.read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines if line.strip()][: args.rows or None]
    live = load_judge(args.model, threads=args.threads)
    engine = live.engine
    prefill_rate, decode_rate = rates(engine, rows[0]["source"])
    counting = Counting(live)
    judge: Judge = counting
    recorder = None
    if args.cassette is not None:
        recorder = CassetteJudge(
            args.cassette, mode=RecordMode.RECORD, identity=live.identity, live=counting
        )
        judge = recorder
    measured = evaluate(rows, judge, counting, engine, args.model)
    if recorder is not None:
        recorder.close()
    for row in measured:
        row["floor"] = (row["prefilled"] + row["forced_evaluated"]) / prefill_rate + row[
            "sampled"
        ] / decode_rate
        row["ratio"] = row["seconds"] / row["floor"]
        # without the reused prefix every prompt token is prefilled: the floor before reuse
        row["floor_without_reuse"] = (row["prompt_tokens"] + row["forced"]) / prefill_rate + row[
            "sampled"
        ] / decode_rate
    plain = plain_reads(rows, counting, engine) if args.plain else []
    summary = report(args, measured, plain, prefill_rate, decode_rate)
    out = args.out or RESULTS / f"floor-{live.spec.name}-{args.data.stem}.json"
    out.write_text(json.dumps({**summary, "rows": measured}, indent=1) + "\n", encoding="utf-8")
    print(f"per-row figures: {out}")
    return 0


def report(
    args: argparse.Namespace,
    measured: list[dict[str, Any]],
    plain: list[float],
    prefill_rate: float,
    decode_rate: float,
) -> dict[str, Any]:
    """Print and return the medians."""

    def median(key: str) -> float:
        return statistics.median(row[key] for row in measured)

    summary: dict[str, Any] = {
        "model": args.model,
        "data": args.data.name,
        "rows_scored": len(measured),
        "threads": args.threads,
        "prefill_tokens_per_s": round(prefill_rate, 1),
        "decode_tokens_per_s": round(decode_rate, 2),
        "median_seconds": round(median("seconds"), 2),
        "median_floor_seconds": round(median("floor"), 2),
        "median_ratio": round(median("ratio"), 2),
        "median_floor_without_reuse_seconds": round(median("floor_without_reuse"), 2),
        "median_prompt_tokens": median("prompt_tokens"),
        "median_prefilled": median("prefilled"),
        "median_forced": median("forced"),
        "median_forced_evaluated": median("forced_evaluated"),
        "median_sampled": median("sampled"),
    }
    if plain:
        summary["median_plain_read_seconds"] = round(statistics.median(plain), 2)
        summary["eval_over_plain_read"] = round(
            summary["median_seconds"] / statistics.median(plain), 2
        )
    for key, value in summary.items():
        print(f"{key:28} {value}")
    return summary


if __name__ == "__main__":
    sys.exit(main())
