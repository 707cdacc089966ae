"""Threads and batch sizes for prefill on this CPU: speed, and whether they change the bytes.

    python -m benchmarks.threads_batch [--model NAME] [--threads 1 2] [--batches 128 256 512]
        [--tokens 600] [--repeat 2] [--out benchmarks/results/threads-batch-NAME.json]

For each (threads, n_batch) with n_ubatch = n_batch, the model is loaded afresh and:
1. prefill tokens/s: the first --tokens tokens of a fixture's source into an empty cache
   (median of --repeat);
2. decode tokens/s: 32 single-token steps after that prompt;
3. a fingerprint of the result: the sha256 of the logits after the prompt (float32 bytes) and
   the 24 tokens greedy decoding picks from there.
A setting whose fingerprint differs from the default's (2 threads, n_batch 512) can change a
verdict's probability, so it is a different judge for a cassette: `docs/reproducibility.md`'s
drift table records which. Run it alone: other load skews every rate.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks._common import FIXTURE_PAIRS, RESULTS
from offline_scorer.models.registry import load_registry

DEFAULT = (2, 512)
DECODE_STEPS = 32
GREEDY_TOKENS = 24


def measure(path: Path, threads: int, batch: int, text: str, count: int, repeat: int) -> dict:
    """Rates and fingerprint of one setting, from a fresh load."""
    import llama_cpp
    import numpy as np

    llama = llama_cpp.Llama(
        model_path=str(path),
        n_ctx=2048,
        n_threads=threads,
        n_threads_batch=threads,
        n_batch=batch,
        n_ubatch=batch,
        verbose=False,
    )
    tokens = llama.tokenize(text.encode("utf-8"))[:count]
    prefill = []
    for _ in range(repeat):
        llama.reset()
        started = time.perf_counter()
        llama.eval(tokens)
        prefill.append(len(tokens) / (time.perf_counter() - started))

    def last_logits() -> Any:  # the row llama.cpp keeps for the batch's last token
        return np.ctypeslib.as_array(llama._ctx.get_logits(), shape=(llama.n_vocab(),))

    fingerprint = hashlib.sha256(last_logits().astype(np.float32).tobytes()).hexdigest()[:16]
    greedy: list[int] = []
    steps = []
    for _ in range(max(DECODE_STEPS, GREEDY_TOKENS)):
        token = int(np.argmax(last_logits()))
        if len(greedy) < GREEDY_TOKENS:
            greedy.append(token)
        started = time.perf_counter()
        llama.eval([token])
        steps.append(time.perf_counter() - started)
    llama.close()
    return {
        "threads": threads,
        "n_batch": batch,
        "prompt_tokens": len(tokens),
        "prefill_tokens_per_s": round(statistics.median(prefill), 1),
        "decode_tokens_per_s": round(1 / statistics.median(steps), 2),
        "logits_sha256": fingerprint,
        "greedy": greedy,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--batches", type=int, nargs="+", default=[128, 256, 512])
    parser.add_argument("--tokens", type=int, default=600)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    spec = load_registry().resolve(args.model)
    path = spec.locate()
    pairs = (FIXTURE_PAIRS).read_text(encoding="utf-8").splitlines()
    text = " ".join(json.loads(line)["source"] for line in pairs if line.strip())
    rows: list[dict[str, Any]] = []
    for threads in args.threads:
        for batch in args.batches:
            rows.append(measure(path, threads, batch, text, args.tokens, args.repeat))
    base = next((r for r in rows if (r["threads"], r["n_batch"]) == DEFAULT), rows[0])
    print(f"{spec.name}: {rows[0]['prompt_tokens']} prompt tokens")
    print("threads n_batch  prefill t/s  decode t/s  logits same  greedy same")
    for row in rows:
        row["logits_same_as_default"] = row["logits_sha256"] == base["logits_sha256"]
        row["greedy_same_as_default"] = row["greedy"] == base["greedy"]
        print(
            f"{row['threads']:>7} {row['n_batch']:>7} {row['prefill_tokens_per_s']:>12} "
            f"{row['decode_tokens_per_s']:>11} {row['logits_same_as_default']!s:>12} "
            f"{row['greedy_same_as_default']!s:>12}"
        )
    out = args.out or RESULTS / f"threads-batch-{spec.name}.json"
    out.write_text(json.dumps({"model": spec.name, "rows": rows}, indent=1) + "\n", "utf-8")
    print(f"per-setting figures: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
