"""Does the judge's P(answered) carry signal? Coverage verdicts on summaries whose content is known.

    python -m benchmarks.coverage [--sources 40] [--data ../shared/data/judge-dev.jsonl]
        [--model NAME] [--cassette benchmarks/results/coverage.oscas] [--record-mode auto|replay]
        [--out benchmarks/results/coverage.json]

A coverage-labelled set built from sources we have, with no model and no guessing: for each
source, the questions are the product's own (`question_candidates`, the first 10 as the
default `max_questions` keeps), each made from one source sentence; two extractive summaries
are made of known halves of those sentences (the even-numbered ones, the odd-numbered ones),
so "the summary contains this fact" is true exactly when the question's sentence is in it.
Each (summary, questions) pair is one real coverage request of the summarization scorer,
answered by the default GGUF through a cassette (re-runs replay). Reported: the ROC AUC of
P(answered) against the label with its 95% bootstrap interval (resampling whole cases), how
often the verdict is "answered" on each side, and balanced accuracy at the best threshold.
Paraphrased summaries are not built: there is no honest way to make them here without a model
we trust.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import time
from pathlib import Path
from typing import Any

from benchmarks._common import RESULTS, SHARED_DATA, read_jsonl
from offline_scorer.report import stats
from offline_scorer.scorers.summarization.grounding import (
    as_question,
    sentences,
    states_a_fact,
)

MAX_QUESTIONS = 10


def cases(rows: list[dict[str, Any]], count: int) -> list[dict[str, Any]]:
    """Two labelled coverage cases per source with at least four fact-stating sentences."""
    built = []
    for row in rows:
        stating = [
            s for s in sentences(row["source"], clock_always_ends=False) if states_a_fact(s)
        ][:MAX_QUESTIONS]
        if len(stating) < 4:
            continue
        questions = list(dict.fromkeys(as_question(s, clock_always_ends=False) for s in stating))
        if len(questions) != len(stating):
            continue
        for parity in (0, 1):
            kept = [i % 2 == parity for i in range(len(stating))]
            summary = " ".join(s for s, keep in zip(stating, kept, strict=True) if keep)
            built.append(
                {
                    "id": f"{row['id']}/{parity}",
                    "summary": summary,
                    "questions": questions,
                    "labels": kept,
                }
            )
        if len(built) >= 2 * count:
            break
    return built


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sources", type=int, default=40)
    parser.add_argument("--data", type=Path, default=SHARED_DATA / "judge-dev.jsonl")
    parser.add_argument("--cassette", type=Path, default=RESULTS / "coverage.oscas")
    parser.add_argument("--record-mode", default="auto")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--model", help="registry name or .gguf path (default: the default)")
    parser.add_argument("--out", type=Path, default=RESULTS / "coverage.json")
    parser.add_argument(
        "--no-quotes",
        action="store_true",
        help="ask as before quoted evidence (P(answered) is the same either way), to replay "
        "a recording made then",
    )
    args = parser.parse_args()

    from offline_scorer.assembly.open import JudgeSettings, open_judge
    from offline_scorer.assembly.run_spec import RunSpec
    from offline_scorer.cassette.judge import RecordMode
    from offline_scorer.scorers.summarization.scorer import SummarizationScorer

    rows = read_jsonl(args.data)
    built = cases(rows, args.sources)
    settings = JudgeSettings(
        model=args.model,
        threads=args.threads,
        cassette=args.cassette,
        mode=RecordMode(args.record_mode),
    )
    options = RunSpec.of("summarization", {}, settings).options  # the judge's own, as eval has
    if args.no_quotes:
        options = dataclasses.replace(options, quote_evidence=False)
    judge, spec = open_judge(settings)
    scorer = SummarizationScorer(judge, options)
    per_case: list[list[float]] = []
    per_case_labels: list[list[bool]] = []
    answered: list[bool] = []
    started = time.perf_counter()
    with judge:
        for case in built:
            judged = scorer.judge_coverage(case["summary"], case["questions"])
            verdicts, probabilities = judged.verdicts, judged.probabilities
            assert probabilities is not None and len(probabilities) == len(verdicts)
            per_case.append(list(probabilities))
            per_case_labels.append(case["labels"])
            answered += [v.answered for v in verdicts]
    seconds = time.perf_counter() - started
    scores = [p for case in per_case for p in case]
    labels = [y for case in per_case_labels for y in case]
    auc = stats.roc_auc(scores, labels)

    def pooled_auc(cases_scores: list[list[float]], cases_labels: list[list[bool]]) -> float | None:
        flat = [p for case in cases_scores for p in case]
        return stats.roc_auc(flat, [y for case in cases_labels for y in case])

    # Resample whole cases, not questions: one summary's verdicts are not independent.
    interval = stats.bootstrap_ci(pooled_auc, [per_case, per_case_labels])
    best = stats.best_threshold(scores, labels)
    in_summary = [a for a, y in zip(answered, labels, strict=True) if y]
    left_out = [a for a, y in zip(answered, labels, strict=True) if not y]
    figures = {
        "model": spec.name,
        "data": args.data.name,
        "sources": len(built) // 2,
        "cases": len(built),
        "questions": len(labels),
        "roc_auc_p_answered": None if auc is None else round(auc, 3),
        "roc_auc_interval": None
        if interval is None
        else [round(interval.low, 3), round(interval.high, 3)],
        "answered_when_in_summary": round(sum(in_summary) / len(in_summary), 3),
        "answered_when_left_out": round(sum(left_out) / len(left_out), 3),
        "p_answered_median_in_summary": round(
            statistics.median(s for s, y in zip(scores, labels, strict=True) if y), 3
        ),
        "p_answered_median_left_out": round(
            statistics.median(s for s, y in zip(scores, labels, strict=True) if not y), 3
        ),
        "best_threshold": None if best is None else round(best[0], 4),
        "balanced_accuracy_at_best": None if best is None else round(best[1], 3),
        "seconds": round(seconds, 1),
    }
    args.out.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
