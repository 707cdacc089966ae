"""How long opening a large cassette takes, and how much memory it needs.

Synthesises a cassette of realistic exchanges (default 100,000) in a temp dir, then, in a fresh
subprocess so nothing is cached in the interpreter, measures wall time and peak RSS of opening it,
of looking up random keys, and of decoding every exchange. The budget is 1 s for the open.

    python -m benchmarks.cassette_open [--exchanges N] [--lookups N]

Prints a table, then one JSON line for tooling.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks._common import module_command, repo_env
from offline_scorer.cassette.store.container import (
    CassetteFile,
    blob_key,
    encode_blob,
    encode_exchange,
    encode_header,
)

OPEN_BUDGET_S = 1.0
SEED = 20240601


def exchange_key(i: int) -> bytes:
    return hashlib.sha256(f"exchange-{i}".encode()).digest()


def synthesise(path: Path, exchanges: int) -> None:
    """Write the file directly from frames: one fsync per append would dominate the set-up."""
    rng = random.Random(SEED)
    words = ["the", "of", "claim", "source", "summary", "question", "answer", "model", "judge"]

    def prose(chars: int) -> str:
        out: list[str] = []
        while sum(map(len, out)) < chars:
            out.append(rng.choice(words))
        return " ".join(out)[:chars]

    systems = [prose(1500) for _ in range(3)]
    sources = [prose(4000) for _ in range(200)]
    schemas = [prose(800) for _ in range(3)]
    blobs = systems + sources + schemas
    with path.open("wb") as out:
        out.write(encode_header("bench"))
        for text in blobs:
            out.write(encode_blob(text))
        for i in range(exchanges):
            step = ("preprocess", "analyze", "reason")[i % 3]
            payload = {
                "step": step,
                "request": {
                    "messages": [
                        {"role": "system", "blob": blob_key(systems[i % 3]).hex()},
                        {"role": "user", "blob": blob_key(rng.choice(sources)).hex()},
                        {"role": "user", "text": prose(120)},
                    ],
                    "sampling": {"temperature": 0.0, "seed": None, "max_tokens": 1024},
                    "schema": blob_key(schemas[i % 3]).hex(),
                },
                "response": {"text": prose(300), "finish_reason": "stop", "tokens": 87},
                "meta": {
                    "model_sha256": hashlib.sha256(b"model").hexdigest(),
                    "backend": "llama-cpp-python 0.3.16",
                    "elapsed_ms": rng.randint(200, 4000),
                    "recorded_at": "2024-06-01T12:00:00Z",
                },
            }
            out.write(encode_exchange(exchange_key(i), payload))


def peak_rss_mib() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def current_rss_mib() -> float:
    """Resident memory right now (Linux only; NaN elsewhere), to tell retained from transient."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return float("nan")
    return pages * resource.getpagesize() / 2**20


def measure(path: Path, exchanges: int, lookups: int) -> dict[str, float | int]:
    """Runs in the fresh subprocess."""
    wanted = random.Random(SEED).sample(range(exchanges), lookups)
    keys = [exchange_key(i) for i in wanted]
    result: dict[str, float | int] = {"rss_baseline_mib": peak_rss_mib()}
    started = time.perf_counter()
    cassette = CassetteFile.open(path, create=False)
    result["open_s"] = time.perf_counter() - started
    result["rss_after_open_mib"] = peak_rss_mib()
    result["rss_retained_after_open_mib"] = current_rss_mib()
    result["exchange_count"] = cassette.exchange_count
    started = time.perf_counter()
    found = sum(cassette.get_exchange(key) is not None for key in keys)
    result["lookups_s"] = time.perf_counter() - started
    result["rss_after_lookups_mib"] = peak_rss_mib()
    assert found == lookups, f"only {found} of {lookups} lookups hit"
    started = time.perf_counter()
    decoded = sum(1 for _ in cassette.iter_exchanges())
    result["iterate_all_s"] = time.perf_counter() - started
    result["rss_after_iterate_mib"] = peak_rss_mib()
    assert decoded == exchanges
    cassette.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exchanges", type=int, default=100_000)
    parser.add_argument("--lookups", type=int, default=1_000)
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure is not None:
        print(json.dumps(measure(args.measure, args.exchanges, args.lookups)))
        return

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.cassette"
        started = time.perf_counter()
        synthesise(path, args.exchanges)
        synth_s = time.perf_counter() - started
        size = path.stat().st_size
        counts = ["--exchanges", str(args.exchanges), "--lookups", str(args.lookups)]
        child = subprocess.run(
            module_command(__spec__.name, "--measure", str(path), *counts),
            check=True,
            env=repo_env(),
            capture_output=True,
            text=True,
        )
    figures = json.loads(child.stdout)
    figures.update(
        exchanges=args.exchanges,
        lookups=args.lookups,
        file_mib=round(size / 2**20, 1),
        synthesise_s=synth_s,
        open_budget_s=OPEN_BUDGET_S,
        open_within_budget=figures["open_s"] <= OPEN_BUDGET_S,
    )
    rows = [
        ("open (index, no decoding)", figures["open_s"], figures["rss_after_open_mib"]),
        (f"{args.lookups} random lookups", figures["lookups_s"], figures["rss_after_lookups_mib"]),
        ("iterate + decode all", figures["iterate_all_s"], figures["rss_after_iterate_mib"]),
    ]
    print(
        f"cassette: {args.exchanges} exchanges, {figures['file_mib']} MiB on disk (page cache warm)"
    )
    print(f"{'phase':<28} {'wall s':>8} {'peak RSS MiB':>13}")
    print(f"{'interpreter + imports':<28} {'':>8} {figures['rss_baseline_mib']:>13.1f}")
    for name, seconds, rss in rows:
        print(f"{name:<28} {seconds:>8.3f} {rss:>13.1f}")
    print(
        f"RSS retained after open: {figures['rss_retained_after_open_mib']:.1f} MiB (the peak "
        "also counts the file's pages, mapped read-only while it is scanned)"
    )
    verdict = "within" if figures["open_within_budget"] else "OVER"
    print(f"open: {verdict} the {OPEN_BUDGET_S:.0f} s budget")
    print(json.dumps({k: round(v, 4) if isinstance(v, float) else v for k, v in figures.items()}))


if __name__ == "__main__":
    main()
