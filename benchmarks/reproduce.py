"""`offline-scorer reproduce` on a large results file: wall time and peak memory.

    flock /tmp/offline-scorer-model.lock python -m benchmarks.reproduce [--rows 100000]
        [--workers 1 2] [--out benchmarks/results/reproduce.json]

What it builds, and what repeats: the data is the 12 fixture pairs cycled to `--rows` rows, each
row with its own id (``01-harbor-bridge-000013``), so every results line and its content digest
is distinct, but only 12 distinct documents are judged: the replay answers from the 29
exchanges of `fixtures/cassettes/fixtures.oscas`, and per-schema caches are warm after the
first 12 rows (the "cycled" workload of benchmarks.replay). The results file is written by
`offline-scorer eval --record-mode replay` itself (set-up, not timed). Each measured run is a
whole `offline-scorer reproduce` process, start-up included; its peak RSS is that process's
``ru_maxrss`` from wait4 (with --workers, the largest of the driver and its workers, not their
sum).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks._common import FIXTURE_CASSETTE, FIXTURE_PAIRS, cpu_model, read_jsonl, repo_env

CASSETTE = FIXTURE_CASSETTE

CLI = (sys.executable, "-m", "offline_scorer")
GOAL_SECONDS = 60.0
GOAL_MIB = 300.0


def write_data(path: Path, rows: int) -> None:
    pairs = read_jsonl(FIXTURE_PAIRS)
    with path.open("w", encoding="utf-8") as out:
        for n in range(rows):
            pair = pairs[n % len(pairs)]
            row = {**pair, "id": f"{pair['id']}-{n:06d}"}
            out.write(json.dumps(row, ensure_ascii=False) + "\n")


def write_results(data: Path, results: Path) -> float:
    start = time.perf_counter()
    replay = ("--record-mode", "replay", "--cassette", str(CASSETTE), "--quiet", "--overwrite")
    proc = subprocess.run(
        [*CLI, "eval", str(data), "--out", str(results), *replay],
        capture_output=True,
        text=True,
        env=repo_env(),
    )
    if proc.returncode != 0:
        raise SystemExit(f"eval failed ({proc.returncode}): {proc.stderr}")
    return time.perf_counter() - start


def reproduce(data: Path, results: Path, workers: int) -> dict[str, Any]:
    """One whole `reproduce` process; its wall time, peak RSS (wait4's rusage of that process:
    the largest of it and the worker processes it reaped) and verdict."""
    inputs = ("--cassette", str(CASSETTE), "--data", str(data))
    with tempfile.TemporaryFile("w+") as output:
        start = time.perf_counter()
        proc = subprocess.Popen(
            [*CLI, "reproduce", str(results), *inputs, "--workers", str(workers)],
            stdout=output,
            stderr=subprocess.STDOUT,
            env=repo_env(),
        )
        _pid, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        output.seek(0)
        text = output.read()
    if proc.returncode != 0:
        raise SystemExit(f"reproduce failed ({proc.returncode}): {text}")
    verdict = next(line for line in text.splitlines() if "lines identical" in line)
    return {
        "workers": workers,
        "seconds": round(seconds, 2),
        "lines_per_s": None,
        "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
        "verdict": verdict,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--workers", type=int, nargs="+", default=[1])
    parser.add_argument("--out", type=Path, default=None, help="write the figures as JSON")
    args = parser.parse_args()
    scratch = "/dev/shm" if Path("/dev/shm").is_dir() else None
    with tempfile.TemporaryDirectory(dir=scratch) as tmp:
        data, results = Path(tmp) / "data.jsonl", Path(tmp) / "results.jsonl"
        write_data(data, args.rows)
        setup = write_results(data, results)
        size = results.stat().st_size
        print(
            f"{args.rows:,} rows; results file {size / 2**20:.1f} MiB, written by eval in "
            f"{setup:.1f} s (set-up, not timed)"
        )
        runs = []
        for workers in args.workers:
            run = reproduce(data, results, workers)
            run["lines_per_s"] = round(args.rows / run["seconds"], 1)
            runs.append(run)
            print(
                f"reproduce --workers {workers}: {run['seconds']:.1f} s "
                f"({run['lines_per_s']:,.0f} lines/s), peak RSS {run['peak_rss_mib']:.0f} MiB; "
                f"{run['verdict']} (goals: < {GOAL_SECONDS:.0f} s, < {GOAL_MIB:.0f} MiB)"
            )
    figures = {
        "machine": f"{platform.platform()}, {cpu_model()}, {os.cpu_count()} cpus, "
        f"python {platform.python_version()}",
        "rows": args.rows,
        "results_mib": round(size / 2**20, 1),
        "eval_replay_setup_s": round(setup, 1),
        "runs": runs,
    }
    print(json.dumps(figures))
    if args.out is not None:
        args.out.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
