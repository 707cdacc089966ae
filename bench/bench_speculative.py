"""Speculative decoding by prompt lookup, tried against plain greedy decoding on the same rows.

    python bench/bench_speculative.py --model NAME [--data fixtures/pairs.jsonl] [--rows N]
        [--drafts 3,5] [--threads 2] [--out bench/results/speculative-NAME.json]

Each row is scored live as `eval` scores it, first with the plain engine, then once per draft
length with `bench/speculative_engine.py`'s prompt-lookup drafting. Per variant: median wall
seconds per evaluation, tokens sampled, guesses drafted and kept, batches evaluated; and against
the plain run: completions whose text is byte-identical, verdicts that agree, the largest
difference of a verdict's P(true), and results (score and texts) that are identical.

First it checks the premise byte identity rests on: the logits of tokens evaluated in one
batch against the same tokens evaluated one at a time. Run it alone: other load skews timing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.speculative_engine import DraftCounts, LookupEngine  # noqa: E402
from offline_scorer.assembly.open import JudgeSettings  # noqa: E402
from offline_scorer.assembly.run_spec import RunSpec  # noqa: E402
from offline_scorer.backends.llama_cpp import load_judge  # noqa: E402
from offline_scorer.backends.llama_cpp.engine import Engine  # noqa: E402
from offline_scorer.backends.llama_cpp.judge import LlamaJudge  # noqa: E402
from offline_scorer.judging.protocol import Completion, JudgeBase, JudgeRequest  # noqa: E402
from offline_scorer.scorers.summarization.scorer import SummarizationScorer  # noqa: E402


class Logging(JudgeBase):
    """Passes requests to the live judge and keeps each answer's text and verdicts."""

    def __init__(self, inner: LlamaJudge) -> None:
        self.inner = inner
        self.answers: list[tuple[str, tuple[float, ...]]] = []
        self.threshold = 0.5
        self.sampled = 0

    @property
    def identity(self) -> Any:
        return self.inner.identity

    def complete(self, request: JudgeRequest) -> Completion:
        completion = self.inner.complete(request)
        self.answers.append((completion.text, completion.verdict_probabilities or ()))
        self.threshold = completion.verdict_threshold or self.threshold
        if completion.usage is not None:
            usage = completion.usage
            self.sampled += usage.completion_tokens - usage.forced_tokens
        return completion


def batch_identity(engine: Engine, text: str, steps: int = 16) -> dict[str, Any]:
    """Largest logit difference between tokens decoded one at a time and the same tokens
    evaluated in batches of 4, after the same prompt."""
    import llama_cpp

    llama, n_vocab = engine.llama, engine.rt.n_vocab
    prompt = engine.tokenize_plain(text)[:400]

    def last() -> np.ndarray:
        pointer = llama_cpp.llama_get_logits_ith(llama.ctx, -1)
        return np.ctypeslib.as_array(pointer, shape=(n_vocab,)).copy()

    llama.n_tokens = 0
    llama.eval(prompt)
    tokens, single = [], []
    for _ in range(steps):
        tokens.append(int(np.argmax(last())))
        llama.eval(tokens[-1:])
        single.append(last())
    lookup = LookupEngine.__new__(LookupEngine)
    lookup.rt, lookup.counts = engine.rt, DraftCounts()
    llama.n_tokens = len(prompt)
    batched: list[np.ndarray] = []
    for start in range(0, steps, 4):
        rows = lookup._eval_rows(tokens[start : start + 4], 0)
        batched += [row.copy() for row in rows]
    diffs = [float(np.abs(a - b).max()) for a, b in zip(single, batched, strict=True)]
    same_argmax = sum(
        int(np.argmax(a) == np.argmax(b)) for a, b in zip(single, batched, strict=True)
    )
    llama.n_tokens = 0
    return {
        "positions": steps,
        "bit_identical_positions": sum(d == 0 for d in diffs),
        "max_abs_logit_difference": round(max(diffs), 4),
        "same_argmax_positions": same_argmax,
    }


def run(rows: list[dict[str, Any]], judge: Logging, model: str) -> list[dict[str, Any]]:
    options = RunSpec.of("summarization", {}, JudgeSettings(model=model)).options
    scorer = SummarizationScorer(judge, options)
    measured = []
    for row in rows:
        sampled = judge.sampled
        started = time.perf_counter()
        result = scorer.score_texts(row["source"], row["summary"])
        measured.append(
            {
                "id": row["id"],
                "seconds": time.perf_counter() - started,
                "sampled": judge.sampled - sampled,
                "result": repr(result),
            }
        )
    return measured


def compare(plain: Logging, other: Logging) -> dict[str, Any]:
    """How far a variant's answers are from the plain run's, answer by answer."""
    pairs = list(zip(plain.answers, other.answers, strict=False))
    same_text = sum(a[0] == b[0] for a, b in pairs)
    verdicts = [
        (x, y) for a, b in pairs if len(a[1]) == len(b[1]) for x, y in zip(a[1], b[1], strict=True)
    ]
    differences = [abs(x - y) for x, y in verdicts]
    cut = plain.threshold
    agree = sum((x >= cut) == (y >= cut) for x, y in verdicts)
    return {
        "answers": len(plain.answers),
        "answers_compared": len(pairs),
        "identical_text": same_text,
        "verdicts_compared": len(differences),
        "verdicts_on_the_same_side_of_the_threshold": agree,
        "max_p_true_difference": round(max(differences, default=0.0), 4),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("--data", type=Path, default=ROOT / "fixtures/pairs.jsonl")
    parser.add_argument("--rows", type=int, default=0, help="first N rows (0: all)")
    parser.add_argument("--drafts", default="3,5", help="draft lengths to try, comma-separated")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    lines = args.data.read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines if line.strip()][: args.rows or None]
    live = load_judge(args.model, threads=args.threads)
    plain_engine = live.engine
    summary: dict[str, Any] = {"model": live.spec.name, "data": args.data.name, "rows": len(rows)}
    summary["batch_logits"] = batch_identity(plain_engine, rows[0]["source"])
    print("batch logits:", summary["batch_logits"])
    plain = Logging(live)
    plain_rows = run(rows, plain, args.model)
    variants: list[dict[str, Any]] = [describe("plain", plain_rows, plain, None)]
    for count in [int(n) for n in args.drafts.split(",")]:
        engine = LookupEngine(
            live.spec,
            Path(plain_engine.llama.model_path),
            threads=args.threads,
            context_size=live.context_size,
            gpu_layers=live.spec.gpu_layers,
        )
        engine.draft_tokens = count
        live.engine = engine
        logged = Logging(live)
        measured = run(rows, logged, args.model)
        variant = describe(f"lookup-{count}", measured, logged, compare(plain, logged))
        variant["drafting"] = vars(engine.counts)
        variant["identical_results"] = sum(
            a["result"] == b["result"] for a, b in zip(plain_rows, measured, strict=True)
        )
        variant["speedup_on_median"] = round(
            variants[0]["median_seconds"] / variant["median_seconds"], 3
        )
        variants.append(variant)
        live.engine = plain_engine
    summary["variants"] = variants
    out = args.out or ROOT / f"bench/results/speculative-{live.spec.name}.json"
    out.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    print(f"figures: {out}")
    return 0


def describe(
    name: str, measured: list[dict[str, Any]], judge: Logging, against: dict[str, Any] | None
) -> dict[str, Any]:
    """Print and return one variant's medians (and its distance from plain decoding)."""
    variant: dict[str, Any] = {
        "variant": name,
        "median_seconds": round(statistics.median(r["seconds"] for r in measured), 2),
        "total_seconds": round(sum(r["seconds"] for r in measured), 1),
        "sampled_tokens": judge.sampled,
    }
    if against is not None:
        variant["against_plain"] = against
    print(json.dumps(variant))
    return variant


if __name__ == "__main__":
    sys.exit(main())
