"""Which signals of the default model separate faithful from unfaithful summaries? ROC AUCs.

    python -m benchmarks.probe_judge_signals ../shared/data/judge-dev.jsonl \
        --results benchmarks/results/judge-dev.jsonl [--limit N] \
        [--signals verdict,content-free,lift]

Each signal is a number per item (higher = more faithful), its ROC AUC against the `faithful`
label with a bootstrap 95% interval, over all rows and over each half (a signal that only wins
on one half does not generalise):

- verdict: the weakest claim's P(supported) as the judge recorded it (read from an `eval`
  results file; no model needed);
- content-free: contextual calibration (Zhao et al. 2021): logit P(supported | source) (from
  the results file) minus logit P(supported | source "N/A"), per claim, weakest claim; runs the
  preprocess step again with the content-free source;
- lift: how much the source raises the likelihood of the summary's tokens,
  log P(token | source) - log P(token | no source), mean of each claim's 3 lowest tokens,
  weakest claim; a plain language-model pass, no instruction following.
Run it alone: the model-backed signals take a few seconds per row on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks._common import fmt
from offline_scorer.report import stats as quality
from offline_scorer.scorers.summarization import prompts
from offline_scorer.scorers.summarization.asking import Asking
from offline_scorer.scorers.summarization.grounding import claims_of
from offline_scorer.scorers.summarization.options import ScorerOptions

CONTENT_FREE = "N/A"


def _logit(p: float) -> float:
    p = min(max(p, 1e-9), 1 - 1e-9)
    return math.log(p / (1 - p))


def recorded_probabilities(results: Path) -> dict[str, list[float]]:
    """Each item's P(supported) per claim, as its results line recorded them."""
    out = {}
    for line in results.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        found = (item.get("result") or {}).get("verdictProbabilities") or {}
        known = [p for p in found.get("alignment", []) if p is not None]
        if known:
            out[item["id"]] = known
    return out


def content_free_signal(
    rows: list[dict[str, Any]], recorded: dict[str, list[float]], threads: int
) -> dict[str, float]:
    from offline_scorer.backends.llama_cpp import load_judge
    from offline_scorer.judging.protocol import as_completion

    judge = load_judge("default", threads=threads)
    out = {}
    for row in rows:
        if row["id"] not in recorded:
            continue
        request = prompts.preprocess_request(
            CONTENT_FREE, row["summary"], 10, Asking.of(ScorerOptions())
        )
        free = as_completion(judge.complete(request)).verdict_probabilities or ()
        pairs = zip(recorded[row["id"]], free, strict=True)
        out[row["id"]] = min(_logit(a) - _logit(b) for a, b in pairs)
    return out


def lift_signal(rows: list[dict[str, Any]], threads: int) -> dict[str, float]:
    import llama_cpp
    import numpy as np

    from offline_scorer.models.registry import load_registry

    path, _ = load_registry().resolve("default").verify()
    llama = llama_cpp.Llama(
        model_path=str(path),
        n_ctx=4096,
        n_threads=threads,
        n_threads_batch=threads,
        logits_all=True,
        verbose=False,
        seed=0,
    )

    def logprobs(prefix: str, text: str) -> Any:
        head = llama.tokenize(prefix.encode(), add_bos=False, special=False)
        tail = llama.tokenize(text.encode(), add_bos=False, special=False)
        llama.reset()
        llama.eval(head + tail)
        scores = np.array(llama.scores[len(head) - 1 : len(head) + len(tail) - 1], np.float64)
        top = scores.max(axis=1, keepdims=True)
        norm = np.log(np.exp(scores - top).sum(axis=1)) + top[:, 0]
        return scores[np.arange(len(tail)), tail] - norm

    out = {}
    for row in rows:
        values = []
        for claim in claims_of(row["summary"], clock_always_ends=False):
            lift = logprobs(f"Document:\n{row['source']}\n\nSummary:", " " + claim) - logprobs(
                "Summary:", " " + claim
            )
            lowest = np.sort(lift)[:3]
            values.append(float(lowest.mean()))
        if values:
            out[row["id"]] = min(values)
    return out


def _auc_line(name: str, signal: dict[str, float], rows: list[dict[str, Any]]) -> str:
    kept = [r for r in rows if r["id"] in signal]
    scores = [signal[r["id"]] for r in kept]
    labels = [bool(r["faithful"]) for r in kept]
    auc = quality.roc_auc(scores, labels)
    ci = quality.bootstrap_ci(quality.roc_auc, [scores, labels])
    half = len(kept) // 2
    halves = [quality.roc_auc(scores[s], labels[s]) for s in (slice(0, half), slice(half, None))]

    interval = "" if ci is None else f" [{ci.low:.3f}, {ci.high:.3f}]"
    return (
        f"{name:<14} {len(kept):>4} items  ROC AUC {fmt(auc, '.3f')}{interval}  halves "
        f"{fmt(halves[0], '.3f')} / {fmt(halves[1], '.3f')}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path)
    parser.add_argument(
        "--results",
        type=Path,
        default=None,
        help="an `eval` results file of DATA (for the verdict signal)",
    )
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--signals", default="verdict,content-free,lift")
    args = parser.parse_args()
    rows = [
        json.loads(line)
        for line in args.data.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ][: args.limit]
    wanted = args.signals.split(",")
    if {"verdict", "content-free"} & set(wanted) and args.results is None:
        parser.error("the verdict and content-free signals need --results")
    recorded = recorded_probabilities(args.results) if args.results else {}
    makers: dict[str, Callable[[], dict[str, float]]] = {
        "content-free": lambda: content_free_signal(rows, recorded, args.threads),
        "lift": lambda: lift_signal(rows, args.threads),
    }
    if "verdict" in wanted:
        verdict = {item: min(values) for item, values in recorded.items()}
        print(_auc_line("verdict", verdict, rows), flush=True)
    for name in ("content-free", "lift"):
        if name in wanted:
            print(_auc_line(name, makers[name](), rows), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
