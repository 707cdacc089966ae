"""Replay throughput: evaluations per second from a cassette, on one core, no model.

    python -m benchmarks.replay [--seconds 10] [--distinct 3000]

Each evaluation is the full scorer pipeline (three requests built, keyed, looked up, parsed,
scored, reason composed, result serialised to JSON) answered from a cassette, with the process
pinned to one CPU where the OS allows it. Two workloads:

- cycled: the 12 fixture pairs over and over from `fixtures/cassettes/fixtures.oscas`, as a
  long-lived process re-scoring a small suite does (per-schema caches are warm);
- distinct: a synthetic cassette of N different documents, each replayed once in a fresh process,
  as replaying a recorded benchmark does (every preprocess and coverage schema is new, so no
  per-schema cache helps; replay compiles no grammar, keys hold the schema). The cassette is
  recorded first with a scripted judge under the default model's pinned identity, reusing the
  fixtures' real answers with per-document questions. Those answers say every question is
  answered, so documents made from one fixture pair share their reason request; a second
  cassette, with each document's last question unanswered, makes every request new (the
  harder, more realistic figure, reported beside the goal's).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks._common import (
    FIXTURE_CASSETTE,
    FIXTURE_GOLDEN,
    FIXTURE_PAIRS,
    module_command,
    read_jsonl,
    repo_env,
)

GOAL = 5000  # distinct evaluations/s: the replay goal for documents never seen before
CYCLED_GOAL = 6500


def _pin_one_cpu() -> str:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
        return str(len(os.sched_getaffinity(0)))
    return "?"


def _scorer(cassette: Path, mode: str = "replay", live: Any = None) -> Any:
    from offline_scorer.assembly.open import pinned_identity
    from offline_scorer.cassette.judge import CassetteJudge, RecordMode
    from offline_scorer.models.registry import load_registry
    from offline_scorer.scorers.summarization.options import ScorerOptions
    from offline_scorer.scorers.summarization.scorer import SummarizationScorer

    identity = pinned_identity(load_registry().resolve("default"))
    if identity is None:
        raise SystemExit("the default model entry is not pinned; replay needs its pins")
    judge = CassetteJudge(cassette, mode=RecordMode(mode), identity=identity, live=live)
    return SummarizationScorer(judge, ScorerOptions())


def _fixture_pairs() -> list[dict[str, str]]:
    return read_jsonl(FIXTURE_PAIRS)


def cycled(seconds: float, rounds: int) -> list[float]:
    pairs = _fixture_pairs()
    scorer = _scorer(FIXTURE_CASSETTE)
    for pair in pairs:  # warm-up, and proof that every pair replays
        scorer.score_texts(pair["source"], pair["summary"]).to_json()
    rates = []
    for _ in range(rounds):
        done = 0
        start = time.perf_counter()
        deadline = start + seconds / rounds
        while time.perf_counter() < deadline:
            for pair in pairs:
                scorer.score_texts(pair["source"], pair["summary"]).to_json()
            done += len(pairs)
        rates.append(done / (time.perf_counter() - start))
    return rates


class _CurrentDocument:
    """Records each synthetic document with the scripted judge set for it."""

    def __init__(self) -> None:
        self.judge: Any = None

    def complete(self, request: Any) -> str:
        return self.judge.complete(request)


def _documents(count: int) -> list[tuple[str, str, dict[str, Any]]]:
    """(source, summary, golden result) per document, each made distinct by its number."""
    pairs = _fixture_pairs()
    golden = [json.loads((FIXTURE_GOLDEN / f"{p['id']}.json").read_text("utf-8")) for p in pairs]
    docs = []
    for i in range(count):
        pair, result = pairs[i % len(pairs)], golden[i % len(pairs)]
        docs.append((f"{pair['source']}\n(Document {i}.)", pair["summary"], result))
    return docs


def record_distinct(path: Path, count: int, reason_new: bool = False) -> None:
    """Record `count` documents. With `reason_new`, each document's last question is answered
    "no", so the reason step's facts (which list unanswered questions) differ per document too;
    without it they repeat, because the fixtures' recorded judge answered every question "yes"."""
    from offline_scorer.testing import ScriptedJudge

    current = _CurrentDocument()
    scorer = _scorer(path, mode="record", live=current)
    for i, (source, summary, result) in enumerate(_documents(count)):
        questions = [f"{q} (document {i})" for q in result["preprocessStepResult"]["questions"]]
        coverage = [
            {**v, "question": q}
            for v, q in zip(result["analyzeStepResult"]["coverage"], questions, strict=False)
        ]
        if reason_new and coverage:
            coverage[-1] = {**coverage[-1], "answered": False}
        current.judge = ScriptedJudge(
            alignment=result["preprocessStepResult"]["alignment"],
            questions=questions,
            coverage=coverage,
            reason="The summary misstates facts the source gives.",
        )
        scorer.score_texts(source, summary)
    scorer.judge.close()


def replay_distinct(path: Path, count: int) -> float:
    docs = _documents(count)
    scorer = _scorer(path)
    start = time.perf_counter()
    for source, summary, _ in docs:
        scorer.score_texts(source, summary).to_json()
    return count / (time.perf_counter() - start)


class _Capture:
    """Passes each request on to the cassette judge and keeps it."""

    def __init__(self, judge: Any) -> None:
        self.judge = judge
        self.requests: list[Any] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.judge, name)

    def complete(self, request: Any) -> Any:
        self.requests.append(request)
        return self.judge.complete(request)


def replay_judge_only(path: Path, count: int) -> float:
    """The cassette layer's share of a distinct replay: the requests of every document built
    first (untimed), then answered by a fresh cassette judge (key, lookup, parse), timed. Its
    rate is a ceiling on distinct replay that no scorer-side work can lift."""
    from offline_scorer.cassette.judge import CassetteJudge, RecordMode

    scorer = _scorer(path)
    capture = _Capture(scorer.judge)
    scorer.judge = capture
    for source, summary, _ in _documents(count):
        scorer.score_texts(source, summary)
    fresh = CassetteJudge(path, mode=RecordMode.REPLAY, identity=capture.judge.identity)
    start = time.perf_counter()
    for request in capture.requests:
        fresh.complete(request)
    return count / (time.perf_counter() - start)


def _worker(flag: str, path: Path, count: int) -> float:
    """One figure from a fresh process (nothing cached from recording)."""
    command = module_command(__spec__.name, flag, str(path), "--distinct", str(count))
    proc = subprocess.run(command, check=True, capture_output=True, text=True, env=repo_env())
    return float(proc.stdout)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=10.0, help="cycled: total run time")
    parser.add_argument("--rounds", type=int, default=5, help="cycled and distinct: repeats")
    parser.add_argument("--distinct", type=int, default=3000, help="distinct: documents (0: skip)")
    parser.add_argument("--replay-distinct", type=Path, help=argparse.SUPPRESS)  # worker mode
    parser.add_argument("--judge-only", type=Path, help=argparse.SUPPRESS)  # worker mode
    args = parser.parse_args()
    cpus = _pin_one_cpu()
    if args.replay_distinct:
        print(replay_distinct(args.replay_distinct, args.distinct))
        return
    if args.judge_only:
        print(replay_judge_only(args.judge_only, args.distinct))
        return

    rates = cycled(args.seconds, args.rounds)
    figures: dict[str, Any] = {
        "cycled_evals_per_s_median": round(statistics.median(rates), 1),
        "cycled_rounds": [round(r, 1) for r in rates],
    }
    print(
        f"machine: {platform.platform()}, python {platform.python_version()}, cpus allowed: {cpus}"
    )
    print(
        f"cycled 12 fixture pairs: median {statistics.median(rates):,.0f} evaluations/s over "
        f"{args.rounds} rounds (min {min(rates):,.0f}, max {max(rates):,.0f}); "
        f"goal >= {CYCLED_GOAL:,}"
    )
    if args.distinct:
        scratch = "/dev/shm" if Path("/dev/shm").is_dir() else None  # no disk in the figure
        with tempfile.TemporaryDirectory(dir=scratch) as tmp:
            path = Path(tmp) / "distinct.oscas"
            record_distinct(path, args.distinct)
            # A fresh process each round: nothing cached.
            distinct = [
                _worker("--replay-distinct", path, args.distinct) for _ in range(args.rounds)
            ]
            judge_only = [_worker("--judge-only", path, args.distinct) for _ in range(args.rounds)]
            size = path.stat().st_size
            path.unlink()
            record_distinct(path, args.distinct, reason_new=True)
            every = [_worker("--replay-distinct", path, args.distinct) for _ in range(args.rounds)]
        print(
            f"distinct: {args.distinct:,} documents each replayed once ({size / 2**20:.1f} MiB "
            f"cassette): median {statistics.median(distinct):,.0f} evaluations/s over "
            f"{args.rounds} fresh processes (min {min(distinct):,.0f}, "
            f"max {max(distinct):,.0f}); goal >= {GOAL:,}"
        )
        layer = statistics.median(judge_only)
        print(
            f"  of which the cassette layer alone (key, lookup, parse of the same requests, "
            f"built beforehand): {1e6 / layer:,.0f} us per evaluation, a ceiling of "
            f"{layer:,.0f} evaluations/s that no scorer-side work can lift"
        )
        print(
            f"  every request new (each document's reason step too): median "
            f"{statistics.median(every):,.0f} evaluations/s (min {min(every):,.0f}, "
            f"max {max(every):,.0f})"
        )
        figures.update(
            distinct_every_request_new_evals_per_s_median=round(statistics.median(every), 1),
            distinct_documents=args.distinct,
            distinct_evals_per_s_median=round(statistics.median(distinct), 1),
            distinct_rounds=[round(r, 1) for r in distinct],
            cassette_layer_evals_per_s_median=round(layer, 1),
        )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
