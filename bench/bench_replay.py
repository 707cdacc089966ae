"""Replay throughput: evaluations per second from a cassette, on one core, no model.

    python bench/bench_replay.py [--cassette fixtures/cassettes/fixtures.oscas] [--seconds 10]

Each evaluation is the full scorer pipeline (three requests built, keyed, looked up, parsed,
scored, reason composed, result serialised to JSON) answered from the cassette. The process is
pinned to one CPU where the OS allows it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cassette", type=Path, default=ROOT / "fixtures/cassettes/fixtures.oscas")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})

    from offline_scorer.cassette.recorder import CassetteJudge, RecordMode
    from offline_scorer.judges import pinned_identity
    from offline_scorer.options import ScorerOptions
    from offline_scorer.registry import load_registry
    from offline_scorer.scorer import SummarizationScorer

    pairs = [json.loads(line) for line in (ROOT / "fixtures/pairs.jsonl").open()]
    identity = pinned_identity(load_registry().resolve("default"))
    judge = CassetteJudge(args.cassette, mode=RecordMode.REPLAY, identity=identity)
    scorer = SummarizationScorer(judge, ScorerOptions())
    for pair in pairs:  # warm-up, and proof that every pair replays
        scorer.score_texts(pair["source"], pair["summary"]).to_json()
    rates = []
    for _ in range(args.rounds):
        done = 0
        start = time.perf_counter()
        deadline = start + args.seconds / args.rounds
        while time.perf_counter() < deadline:
            for pair in pairs:
                scorer.score_texts(pair["source"], pair["summary"]).to_json()
            done += len(pairs)
        rates.append(done / (time.perf_counter() - start))
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else "?"
    print(f"machine: {platform.platform()}, python {platform.python_version()}, "
          f"cpus allowed: {cpus}")
    print(f"replay: median {statistics.median(rates):,.0f} evaluations/s over {args.rounds} "
          f"rounds (min {min(rates):,.0f}, max {max(rates):,.0f}); goal >= 5,000")
    print(json.dumps({"replay_evals_per_s_median": round(statistics.median(rates), 1),
                      "rounds": [round(r, 1) for r in rates]}))


if __name__ == "__main__":
    main()
