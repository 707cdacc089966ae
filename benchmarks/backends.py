"""The two built-in backends side by side on the 12 fixture pairs, live.

    python -m benchmarks.backends [--threads 2] [--backends llama_cpp,outlines] [--out F.json]

Each backend is run in its own process (one model load, outside the timed region) over every
fixture pair; every answer is validated against its request's JSON schema (Draft 2020-12).
Reports per backend: seconds per evaluation, generated tokens, generated tokens per second of
wall time, peak RSS, schema-valid answers, and agreement of scores with the golden files (which
the llama_cpp backend wrote). Run it alone: other load skews the numbers.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

from benchmarks._common import FIXTURE_GOLDEN, FIXTURE_PAIRS, module_command, read_jsonl, repo_env

PAIRS = FIXTURE_PAIRS
GOLDEN = FIXTURE_GOLDEN


def run_one(backend: str, threads: int) -> dict:
    """In this process: score every fixture with `backend`; the figures as a dict."""
    import jsonschema

    from offline_scorer.assembly.open import JudgeSettings, open_judge
    from offline_scorer.judging.protocol import Completion, Judge, JudgeBase, JudgeRequest
    from offline_scorer.scorers.summarization.options import ScorerOptions
    from offline_scorer.scorers.summarization.scorer import SummarizationScorer

    class Tap(JudgeBase):
        def __init__(self, inner: Judge) -> None:
            self.inner = inner
            self.tokens = 0
            self.invalid = 0
            self.answers = 0

        def complete(self, request: JudgeRequest) -> Completion:
            completion = self.inner.complete(request)
            self.answers += 1
            if completion.usage is not None:
                self.tokens += completion.usage.completion_tokens
            if request.output_schema is not None:
                try:
                    jsonschema.Draft202012Validator(dict(request.output_schema)).validate(
                        json.loads(completion.text)
                    )
                except (ValueError, jsonschema.ValidationError):
                    self.invalid += 1
            return completion

    from offline_scorer.cassette.modes import RecordMode

    started = time.perf_counter()
    judge, _spec = open_judge(JudgeSettings(threads=threads, mode=RecordMode.OFF, backend=backend))
    load_seconds = time.perf_counter() - started
    tap = Tap(judge)
    scorer = SummarizationScorer(tap, ScorerOptions())
    pairs = read_jsonl(PAIRS)
    agree, seconds, errors = 0, [], 0
    for pair in pairs:
        t0 = time.perf_counter()
        try:
            result = scorer.score_texts(pair["source"], pair["summary"])
        except Exception as error:  # counted, never hidden
            print(f"{backend} {pair['id']}: {type(error).__name__}: {error}", file=sys.stderr)
            errors += 1
            continue
        finally:
            seconds.append(time.perf_counter() - t0)
        golden = json.loads((GOLDEN / f"{pair['id']}.json").read_text(encoding="utf-8"))
        agree += int(result.score == golden["score"])
    total = sum(seconds)
    return {
        "backend": backend,
        "backend_id": judge.identity.backend if judge.identity else None,
        "pairs": len(pairs),
        "errors": errors,
        "answers": tap.answers,
        "schema_invalid": tap.invalid,
        "scores_equal_to_golden": agree,
        "load_seconds": round(load_seconds, 2),
        "seconds_total": round(total, 1),
        "seconds_per_eval": round(total / len(pairs), 2),
        "generated_tokens": tap.tokens,
        "generated_tokens_per_second": round(tap.tokens / total, 1),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--backends", default="llama_cpp,outlines")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one, args.threads)))
        return 0
    rows = []
    for backend in args.backends.split(","):
        proc = subprocess.run(
            module_command(__spec__.name, "--one", backend, "--threads", str(args.threads)),
            capture_output=True,
            text=True,
            check=False,
            env=repo_env(),
        )
        if proc.returncode != 0:
            print(proc.stderr[-2000:], file=sys.stderr)
            return 1
        rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        print(json.dumps(rows[-1]), flush=True)
    keys = list(rows[0])
    print("| " + " | ".join(keys) + " |")
    print("|" + " --- |" * len(keys))
    for row in rows:
        print("| " + " | ".join(str(row[k]) for k in keys) + " |")
    if args.out:
        args.out.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
