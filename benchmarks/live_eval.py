"""Live time per evaluation: a judge (the default one unless --model), greedy, constrained.

    python -m benchmarks.live_eval [--model NAME] [--data fixtures/pairs.jsonl] [--repeat 2]
        [--threads 2] [--pairs N] [--cassette PATH]

One model load (outside the timed region), then every pair of DATA scored once per repeat with
the three judging calls, with the scorer options the judge's registry entry sets (as `eval`
runs it); prints the median and mean wall time per evaluation, per-repeat medians, and how many
generated tokens the grammar forced. With --cassette, the first repeat's exchanges are recorded
there, so `offline-scorer eval DATA --model NAME --cassette PATH --record-mode replay` then
writes the results of the timed run (for `benchmarks/texts.py`) without running the model again.
Run it alone: other load skews the numbers.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from benchmarks._common import FIXTURE_PAIRS
from offline_scorer.assembly.open import JudgeSettings
from offline_scorer.assembly.run_spec import RunSpec
from offline_scorer.backends.llama_cpp import load_judge
from offline_scorer.cassette.judge import CassetteJudge, RecordMode
from offline_scorer.judging.protocol import (
    Completion,
    Judge,
    JudgeBase,
    JudgeIdentity,
    JudgeRequest,
    as_completion,
)
from offline_scorer.scorers.summarization.scorer import SummarizationScorer

PAIRS = FIXTURE_PAIRS


class Counting(JudgeBase):
    """Passes requests to the live judge and adds up its token usage."""

    def __init__(self, inner: Judge) -> None:
        self.inner = inner
        self.prompt_tokens = 0  # every prompt token, reused from the cache or not
        self.completion_tokens = 0
        self.forced_tokens = 0

    @property
    def identity(self) -> JudgeIdentity | None:
        return self.inner.identity

    def complete(self, request: JudgeRequest) -> Completion:
        completion = as_completion(self.inner.complete(request))
        if completion.usage is not None:
            self.prompt_tokens += completion.usage.prompt_tokens
            self.completion_tokens += completion.usage.completion_tokens
            self.forced_tokens += completion.usage.forced_tokens
        return completion


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--pairs", type=int, default=0, help="first N pairs (0: all)")
    parser.add_argument("--model", default="default")
    parser.add_argument("--data", type=Path, default=PAIRS)
    parser.add_argument("--cassette", type=Path, help="record the first repeat's exchanges here")
    args = parser.parse_args()
    lines = args.data.read_text(encoding="utf-8").splitlines()
    pairs = [json.loads(line) for line in lines if line.strip()][: args.pairs or None]
    options = RunSpec.of("summarization", {}, JudgeSettings(model=args.model)).options
    judge = Counting(load_judge(args.model, threads=args.threads))
    recorder = None
    if args.cassette is not None and judge.identity is not None:
        recorder = CassetteJudge(
            args.cassette, mode=RecordMode.RECORD, identity=judge.identity, live=judge
        )
    per_repeat: list[list[float]] = []
    for repeat in range(args.repeat):
        scorer = SummarizationScorer(recorder if recorder and repeat == 0 else judge, options)
        times = []
        for pair in pairs:
            started = time.perf_counter()
            scorer.score_texts(pair["source"], pair["summary"])
            times.append(time.perf_counter() - started)
        per_repeat.append(times)
        if recorder is not None and repeat == 0:
            recorder.close()
    every = [t for times in per_repeat for t in times]
    evaluations = len(every)
    print(f"{args.model} on {args.data.name}: pairs {len(pairs)}, repeats {args.repeat}, ", end="")
    print(f"threads {args.threads}, free text {options.free_text}")
    print(f"median s/eval {statistics.median(every):.2f}  mean {statistics.fmean(every):.2f}")
    print("per-repeat medians " + ", ".join(f"{statistics.median(t):.2f}" for t in per_repeat))
    print(
        f"generated tokens/eval {judge.completion_tokens / evaluations:.0f} "
        f"(forced by the grammar {judge.forced_tokens / evaluations:.0f})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
