"""Scale-out: items/s of `eval` serial, with `--workers 2`, and on Ray with 2 actors; Ray's
per-item overhead in replay; the driver's peak memory on a 100,000-row replayed input.

    python -m benchmarks.scale_out [--live] [--rows 100000] [--replay-rows 6000]

Every figure is a whole `offline-scorer eval` command timed from outside (start-up, model
loads and Ray's start included), except the overhead, which is timed inside one process so
start-up is left out:

- live: the 12 fixture pairs, `--record-mode off` (nothing written but the results);
- replay: the 12 fixture pairs cycled to `--replay-rows` rows, answered from the fixture cassette;
- overhead: the same rows through `RayExecutor` with one actor against `SerialExecutor`, both
  replaying in one process each: (Ray's seconds - serial's seconds) / rows;
- memory: the driver's peak RSS (VmHWM) over a `--rows`-row replay on Ray, against a serial one.

Results go to stdout and benchmarks/results/scale-out.json. Run it alone: on 2 cores any other
busy process distorts every figure.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks._common import FIXTURE_CASSETTE, FIXTURE_PAIRS, RESULTS, cpu_model, package_version

PAIRS = FIXTURE_PAIRS
CASSETTE = FIXTURE_CASSETTE
OVERHEAD_GOAL_MS = 5.0
RSS_GOAL_MIB = 300.0


def cycled_rows(path: Path, rows: int) -> Path:
    """`rows` rows: the fixture pairs over and over, each with its own id."""
    pairs = [json.loads(line) for line in PAIRS.read_text(encoding="utf-8").splitlines()]
    with path.open("w", encoding="utf-8") as out:
        for i in range(rows):
            pair = pairs[i % len(pairs)]
            out.write(json.dumps({**pair, "id": f"{pair['id']}-{i}"}) + "\n")
    return path


def run_eval(data: Path, out: Path, *args: str) -> tuple[float, float]:
    """(seconds, driver peak RSS in MiB) of one `eval` command."""
    command = [sys.executable, "-m", "offline_scorer", "eval", str(data), "--out", str(out)]
    start = time.perf_counter()
    child = subprocess.Popen(
        [*command, "--overwrite", "--quiet", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    peak = 0.0
    status = Path(f"/proc/{child.pid}/status")
    while child.poll() is None:
        try:
            for line in status.read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak = max(peak, int(line.split()[1]) / 1024)
        except OSError:
            pass
        time.sleep(0.2)
    seconds = time.perf_counter() - start
    err = child.stderr.read().decode() if child.stderr else ""
    if child.returncode not in (0, 1):
        raise SystemExit(f"eval failed ({child.returncode}): {err[-2000:]}")
    return seconds, peak


REPLAY = ("--record-mode", "replay", "--cassette", str(CASSETTE))
MODES: dict[str, tuple[str, ...]] = {
    "serial": (),
    "workers 2": ("--workers", "2"),
    "ray 2 actors": ("--executor", "ray", "--workers", "2"),
}


def throughput(data: Path, rows: int, scratch: Path, extra: tuple[str, ...]) -> dict[str, Any]:
    figures = {}
    for name, args in MODES.items():
        seconds, _ = run_eval(data, scratch / "out.jsonl", *args, *extra)
        figures[name] = {"seconds": round(seconds, 2), "items_per_s": round(rows / seconds, 2)}
        print(f"  {name:13} {seconds:8.2f} s  {rows / seconds:9.2f} items/s", flush=True)
    return figures


def overhead(data: Path, rows: int) -> dict[str, Any]:
    """Seconds per item through one Ray actor minus serial, both after start-up."""
    from offline_scorer.assembly.open import JudgeSettings, open_judge
    from offline_scorer.assembly.run_spec import RunSpec
    from offline_scorer.batch.cluster import RayExecutor
    from offline_scorer.batch.datasets import iter_dataset
    from offline_scorer.batch.executors import SerialExecutor
    from offline_scorer.batch.run import item_context
    from offline_scorer.cassette.judge import RecordMode
    from offline_scorer.scorers.summarization.options import ScorerOptions

    settings = JudgeSettings(cassette=CASSETTE, mode=RecordMode.REPLAY)
    judge, _ = open_judge(settings)
    scorer = RunSpec.of("summarization", ScorerOptions()).scorer_on(judge)
    context = item_context([scorer])
    serial = SerialExecutor(scorer)
    for _ in serial.results(iter_dataset(PAIRS), context):  # warm the same caches Ray's will
        pass
    start = time.perf_counter()
    for _ in serial.results(iter_dataset(data), context):
        pass
    serial_s = time.perf_counter() - start
    figures: dict[str, Any] = {"serial_ms_per_item": round(1000 * serial_s / rows, 3)}
    for actors in (1, 2):
        with RayExecutor(
            RunSpec.of("summarization", ScorerOptions(), settings), actors=actors
        ) as ray:
            for _ in ray.results(iter_dataset(PAIRS), context):
                pass
            start = time.perf_counter()
            for _ in ray.results(iter_dataset(data), context):
                pass
            ray_s = time.perf_counter() - start
        figures[f"ray_{actors}_actor_ms_per_item"] = round(1000 * ray_s / rows, 3)
    figures["overhead_ms_per_item"] = round(
        figures["ray_1_actor_ms_per_item"] - figures["serial_ms_per_item"], 3
    )
    return figures


def memory(scratch: Path, rows: int) -> dict[str, Any]:
    big = cycled_rows(scratch / "big.jsonl", rows)
    figures: dict[str, Any] = {"rows": rows, "input_mib": round(big.stat().st_size / 2**20, 1)}
    for name in ("serial", "ray 2 actors"):
        seconds, peak = run_eval(big, scratch / "big.out.jsonl", *MODES[name], *REPLAY)
        figures[name] = {
            "seconds": round(seconds, 1),
            "items_per_s": round(rows / seconds, 1),
            "driver_peak_rss_mib": round(peak, 1),
        }
        print(
            f"{rows:,} rows replayed, {name}: driver peak RSS {peak:.0f} MiB in {seconds:.0f} s; "
            f"goal < {RSS_GOAL_MIB:.0f} MiB",
            flush=True,
        )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--live", action="store_true", help="also time the live runs")
    parser.add_argument("--rows", type=int, default=100_000, help="rows of the memory run")
    parser.add_argument("--replay-rows", type=int, default=6_000, help="rows of the replay runs")
    parser.add_argument(
        "--parts",
        default="replay,overhead,memory",
        help="which figures to measure (comma-separated; the others in the results file stay)",
    )
    args = parser.parse_args()
    parts = set(args.parts.split(",")) | ({"live"} if args.live else set())
    out = RESULTS / "scale-out.json"
    report: dict[str, Any] = json.loads(out.read_text("utf-8")) if out.exists() else {}
    report["machine"] = {"cpu": cpu_model(), "ray": package_version("ray")}
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        if "live" in parts:
            print("live, 12 fixture pairs, --record-mode off:", flush=True)
            report["live"] = throughput(PAIRS, 12, scratch, ("--record-mode", "off"))
        replay_data = cycled_rows(scratch / "replay.jsonl", args.replay_rows)
        if "replay" in parts:
            print(f"replay, {args.replay_rows:,} rows:", flush=True)
            report["replay"] = throughput(replay_data, args.replay_rows, scratch, REPLAY)
        if "overhead" in parts:
            report["overhead"] = found = overhead(replay_data, args.replay_rows)
            print(
                f"Ray overhead in replay: {found['overhead_ms_per_item']:.3f} ms per item "
                f"(serial {found['serial_ms_per_item']:.3f}, one actor "
                f"{found['ray_1_actor_ms_per_item']:.3f}, two actors "
                f"{found['ray_2_actor_ms_per_item']:.3f}); goal < {OVERHEAD_GOAL_MS} ms",
                flush=True,
            )
        if "memory" in parts:
            report["memory"] = memory(scratch, args.rows)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"written: {out}")


if __name__ == "__main__":
    main()
