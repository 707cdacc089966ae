"""Does coverage see a thin summary? Faithful summaries scored whole and as their first sentence.

    python -m benchmarks.first_sentence [--data ../shared/data/judge-dev-news.jsonl]
        [--pairs 12] [--model NAME] [--cassette benchmarks/results/qwen15/first-sentence.oscas]
        [--record-mode auto|replay] [--out benchmarks/results/first-sentence-MODEL.json]

The pairs: the faithful summaries of DATA with two sentences or more, taken round-robin over
their sources in file order (one summary of each source, then a second, ...), `--pairs` of
them; each is scored with the judge's registry options twice, as it is and cut to its first
sentence. A first sentence is a faithful summary too, but a thinner one: its coverage should be
lower. Reported per pair and in all: both coverages, the gap, and in how many pairs the first
sentence's coverage is lower. Exchanges go through the cassette (re-runs replay).
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

from benchmarks._common import RESULTS, SHARED_DATA
from offline_scorer.assembly.open import JudgeSettings, open_judge
from offline_scorer.assembly.run_spec import RunSpec
from offline_scorer.cassette.judge import RecordMode
from offline_scorer.scorers.summarization.grounding import claims_of
from offline_scorer.scorers.summarization.scorer import SummarizationScorer


def pairs(rows: list[dict[str, Any]], count: int) -> list[dict[str, Any]]:
    """Faithful summaries of two sentences or more, round-robin over their sources."""
    by_source: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        if (
            row.get("faithful") is True
            and len(claims_of(row["summary"], clock_always_ends=False)) >= 2
        ):
            by_source.setdefault(row["source"], []).append(row)
    picked: list[dict[str, Any]] = []
    depth = 0
    while len(picked) < count and any(len(found) > depth for found in by_source.values()):
        picked += [found[depth] for found in by_source.values() if len(found) > depth]
        depth += 1
    return picked[:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=SHARED_DATA / "judge-dev-news.jsonl")
    parser.add_argument("--pairs", type=int, default=12)
    parser.add_argument("--model", default=None)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--cassette", type=Path, default=None)
    parser.add_argument("--record-mode", default="auto")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

    rows = [json.loads(line) for line in args.data.read_text(encoding="utf-8").splitlines()]
    chosen = pairs(rows, args.pairs)
    settings = JudgeSettings(
        model=args.model,
        threads=args.threads,
        cassette=args.cassette,
        mode=RecordMode(args.record_mode),
    )
    options = RunSpec.of("summarization", {}, settings).options
    judge, spec = open_judge(settings)
    scorer = SummarizationScorer(judge, options)
    found = []
    with judge:
        for row in chosen:
            first = claims_of(row["summary"], clock_always_ends=options.clock_always_ends)[0]
            whole = scorer.score_texts(row["source"], row["summary"]).outcome
            thin = scorer.score_texts(row["source"], first).outcome
            if whole is None or thin is None:
                raise SystemExit(f"{row['id']}: the judge gave no score; see its verdicts")
            found.append(
                {
                    "id": row["id"],
                    "coverage_whole": whole.coverage,
                    "coverage_first_sentence": thin.coverage,
                    "gap": round(whole.coverage - thin.coverage, 4),
                    "questions": whole.asked_questions,
                }
            )
            print(json.dumps(found[-1]), flush=True)
    gaps = [f["gap"] for f in found]
    figures = {
        "model": spec.name,
        "data": args.data.name,
        "pairs": len(found),
        "first_sentence_lower": sum(g > 0 for g in gaps),
        "mean_gap": round(statistics.mean(gaps), 3) if gaps else None,
        "mean_coverage_whole": round(statistics.mean(f["coverage_whole"] for f in found), 3),
        "mean_coverage_first_sentence": round(
            statistics.mean(f["coverage_first_sentence"] for f in found), 3
        ),
        "per_pair": found,
    }
    out = args.out or RESULTS / f"first-sentence-{spec.name}.json"
    out.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in figures.items() if k != "per_pair"}, indent=2))


if __name__ == "__main__":
    main()
