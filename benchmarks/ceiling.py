"""What signal does a judge have before any of our machinery? One plain prompt per pair.

    python -m benchmarks.ceiling MODEL DATA.jsonl [--limit N] [--threads 2]
        [--out benchmarks/results/ceiling-MODEL-DATA.jsonl] [--cassette PATH] [--record-mode auto]

MODEL is a registry name or a path to a .gguf file; DATA is a labelled file (`source`,
`summary`, `faithful`, `id`), such as `../shared/data/judge-dev-news.jsonl`. Each pair is one
request, as a new user would write it: the document, the summary, and "Is every fact in the
summary supported by the document? Answer in JSON.", decoded under a grammar that admits only
`{"supported": true}` or `{"supported": false}`; P(true) is read at the verdict, renormalised
over the two words the grammar allows. Printed: the ROC AUC of P(true) against the label with its
95% bootstrap interval (2,000 resamples, seed 0, as `report` does), the balanced accuracy at
0.5 and at the best threshold, and the median seconds per pair (live rows only).

This is the yardstick the scoring pipeline is measured against: the weakest claim's P(true)
through the three judging steps should not fall below it (`benchmarks/auc_change.py` takes the
`--out` file as either side, for the paired difference). Exchanges go through a cassette, so a
second run replays (no model needed) and the figures can be re-derived; run it alone (a model
on 2 cores is slowed badly by any other busy process).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks._common import RESULTS, read_jsonl
from offline_scorer.judging.protocol import JudgeRequest, Message, SamplingSettings
from offline_scorer.report import stats

QUESTION = "Is every fact in the summary supported by the document? Answer in JSON."
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"supported": {"type": "boolean"}},
    "required": ["supported"],
    "additionalProperties": False,
}


def plain_request(source: str, summary: str) -> JudgeRequest:
    """The one prompt a new user would write: document, summary, question."""
    text = f"Document:\n{source}\n\nSummary:\n{summary}\n\n{QUESTION}"
    return JudgeRequest(
        step="plain-read",
        messages=(Message("user", text),),
        output_schema=SCHEMA,
        sampling=SamplingSettings(max_tokens=16),
    )


def figures(scores: list[float], labels: list[bool]) -> dict[str, Any]:
    """ROC AUC with its bootstrap interval, and balanced accuracy at 0.5 and at the best cut."""
    auc = stats.roc_auc(scores, labels)
    interval = stats.bootstrap_ci(stats.roc_auc, [scores, labels])
    best = stats.best_threshold(scores, labels)
    at_half = stats.balanced_accuracy([s >= 0.5 for s in scores], labels)
    return {
        "pairs": len(scores),
        "roc_auc": None if auc is None else round(auc, 3),
        "roc_auc_interval": None
        if interval is None
        else [round(interval.low, 3), round(interval.high, 3)],
        "balanced_accuracy_at_0.5": None if at_half is None else round(at_half, 3),
        "best_threshold": None if best is None else round(best[0], 4),
        "balanced_accuracy_at_best": None if best is None else round(best[1], 3),
    }


def _slug(text: str) -> str:
    return Path(text).stem.replace(".", "_")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("model")
    parser.add_argument("data", type=Path)
    parser.add_argument("--limit", type=int, default=0, help="first N rows only (0: all)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--cassette", type=Path)
    parser.add_argument("--record-mode", default="auto")
    args = parser.parse_args()

    from offline_scorer.assembly.open import JudgeSettings, open_judge
    from offline_scorer.cassette.judge import RecordMode

    name = f"{_slug(args.model)}-{_slug(str(args.data))}"
    out = args.out or RESULTS / f"ceiling-{name}.jsonl"
    cassette = args.cassette or RESULTS / f"ceiling-{name}.oscas"
    rows = read_jsonl(args.data)
    if args.limit:
        rows = rows[: args.limit]
    settings = JudgeSettings(
        model=args.model,
        threads=args.threads,
        cassette=cassette,
        mode=RecordMode(args.record_mode),
    )
    judge, _ = open_judge(settings)
    lines: list[dict[str, Any]] = []
    seconds: list[float] = []
    with judge:
        for row in rows:
            started = time.perf_counter()
            completion = judge.complete(plain_request(row["source"], row["summary"]))
            took = time.perf_counter() - started
            probabilities = completion.verdict_probabilities
            if not probabilities:
                raise SystemExit(f"{row['id']}: the answer carried no verdict probability")
            if took > 0.05:  # a replayed answer takes microseconds; only live rows are timed
                seconds.append(took)
            lines.append(
                {"id": row["id"], "faithful": bool(row["faithful"]), "p_true": probabilities[0]}
            )
            if len(lines) % 10 == 0:
                print(f"{len(lines)}/{len(rows)} pairs", file=sys.stderr, flush=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    table = {
        "model": args.model,
        "data": args.data.name,
        **figures([line["p_true"] for line in lines], [line["faithful"] for line in lines]),
        "median_seconds_per_pair": round(statistics.median(seconds), 2) if seconds else None,
        "out": str(out),
    }
    print(json.dumps(table, indent=2))


if __name__ == "__main__":
    main()
