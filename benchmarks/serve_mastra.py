"""Mastra's real scorer against `serve` on a judge: first try, replay, and the texts it prints.

    python -m benchmarks.serve_mastra [--model qwen2.5-coder-0.5b] [--modes inline native]
        [--out benchmarks/results/serve-mastra-MODEL.json] [--cassettes DIR] [--replay-only]

For each of Mastra's two structured-output configurations (inline schema, native
`response_format`), on the 12 fixtures: `offline-scorer serve --model MODEL --record-mode record`
on loopback answers `createSummarizationScorer` from the npm package (tests/clients/mastra); then
a `serve --record-mode replay` with the model runtime blocked answers the same run. Reported per
mode: evaluations that completed with exactly three requests (no fallback retry), whether the
replay's output lines are byte-identical, the record and replay times, and the texts Mastra
returns (each claim's and question's reason, and the final reason) counted by
`benchmarks/texts.py`'s checks: not a sentence, cut at a bound, list numbering, foreign
characters, numbers that are not the figures (for the final reason: the score, the axes, how
many claims and questions failed, and the numbers in those, which is what Mastra's prompt gives
the judge); and how many final reasons `serve` replaced with the product's marked sentence
because the judge's failed the library's reader checks (`serve/mastra_reason.py`). Every final
reason is kept in the output, by pair, to be read. Needs node (scripts/setup-node); run it
alone.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchmarks._common import RESULTS
from benchmarks.texts import CHECKS, check, numbers_in, scripts_in
from offline_scorer.scorers.summarization.schemas import MAX_REASON_CHARS
from offline_scorer.serve.mastra import REASON_MAX_CHARS
from offline_scorer.serve.mastra_reason import written_by_product
from tests.mastra_client import load_fixture_pairs, require_node, run_score
from tests.serve_process import free_port, serving


def texts(result: Mapping[str, Any]) -> list[tuple[str, str, int, str]]:
    """(kind, text, character bound, text whose numbers it may state) of one Mastra result."""
    found = []
    for verdict in result["preprocessStepResult"]["alignment"]:
        found.append(("claim reason", verdict["reason"], MAX_REASON_CHARS, verdict["claim"]))
    for verdict in result["analyzeStepResult"]["coverage"]:
        found.append(("coverage reason", verdict["reason"], MAX_REASON_CHARS, verdict["question"]))
    found.append(("explanation", result["reason"], REASON_MAX_CHARS, _figures(result)))
    return found


def _figures(result: Mapping[str, Any]) -> str:
    """What Mastra's reason prompt gave the judge to state: the score, the scale, each axis
    (two decimals, as JavaScript prints them), how many claims and questions it listed as
    failing, and those claims and questions."""
    claims = result["preprocessStepResult"]["alignment"]
    coverage = result["analyzeStepResult"]["coverage"]
    unsupported = [c["claim"] for c in claims if not c["supported"]]
    missing = [q["question"] for q in coverage if not q["answered"]]
    axes = [
        1 - len(unsupported) / len(claims) if claims else 0,
        1 - len(missing) / len(coverage) if coverage else 0,
    ]
    numbers = [str(result["score"]), "1", *(_js(round(a, 2)) for a in axes)]
    return " ".join([*numbers, str(len(unsupported)), str(len(missing)), *unsupported, *missing])


def _js(number: float) -> str:
    """A number as JavaScript's String() writes it (1, not 1.0)."""
    return str(int(number)) if number == int(number) else repr(number)


def count_texts(
    lines: list[dict[str, Any]], pairs: Mapping[str, Mapping[str, str]]
) -> tuple[dict[str, dict[str, int]], list[dict[str, Any]]]:
    """The counts per kind of text, and every text that failed a check (pair, kind, checks,
    text), to be read."""
    table: dict[str, Counter[str]] = {}
    failing: list[dict[str, Any]] = []
    for line in lines:
        pair = pairs[line["id"]]
        scripts = scripts_in([pair["source"], pair["summary"]])
        for kind, text, bound, context in texts(line["result"]):
            if kind == "explanation":
                allowed = numbers_in(context)
            else:
                allowed = numbers_in(pair["source"]) | numbers_in(pair["summary"])
                allowed |= numbers_in(context)
            counted = check(text, bound, None, scripts, allowed)
            failed = [c for c in CHECKS if counted[c]]
            if failed:
                failing.append({"id": line["id"], "kind": kind, "checks": failed, "text": text})
            counted["product_written"] = int(kind == "explanation" and written_by_product(text))
            table.setdefault(kind, Counter()).update(counted)
    columns = ("texts", "product_written", *CHECKS)
    return {kind: {c: table[kind][c] for c in columns} for kind in table}, failing


def one_mode(model: str, mode: str, work: Path, cassettes: Path) -> dict[str, Any]:
    """Record then replay one configuration; `work` takes the servers' logs."""
    pairs = load_fixture_pairs()
    cassette = cassettes / f"mastra-{mode}.oscas"
    args = ("--model", model, "--cassette", str(cassette), "--threads", "2")
    port = free_port()  # the same URL both times: score.mjs prints the URLs it called
    started = time.perf_counter()
    with serving(work, "--record-mode", "record", *args, port=port) as live:
        first = run_score(live.base_url, pairs, mode=mode, model=model, check=False)
    recorded = time.perf_counter() - started
    started = time.perf_counter()
    with serving(work, "--record-mode", "replay", *args, block_runtime=True, port=port) as rep:
        second = run_score(rep.base_url, pairs, mode=mode, model=model, check=False)
    replayed = time.perf_counter() - started
    done = [r for r in first.results if "error" not in r]
    by_id = {p["id"]: p for p in pairs}
    return {
        "mode": mode,
        "evaluations": len(pairs),
        "completed_first_try": sum(r["http_requests"] == 3 for r in done),
        "errors": [r["error"] for r in first.results if "error" in r],
        "replay_identical": second.lines == first.lines,
        "record_seconds": round(recorded, 1),
        "replay_seconds": round(replayed, 1),
        **_texts_part(done, by_id),
    }


def _texts_part(
    done: list[dict[str, Any]], pairs: Mapping[str, Mapping[str, str]]
) -> dict[str, Any]:
    counts, failing = count_texts(done, pairs)
    return {
        "texts": counts,
        "failing_texts": failing,
        "explanations": {r["id"]: r["result"]["reason"] for r in done},
    }


def replay_mode(
    model: str, mode: str, work: Path, cassettes: Path, recorded: Mapping[str, Any]
) -> dict[str, Any]:
    """What Mastra prints now from a kept cassette (no model): the texts and explanations
    derived again, the recording's own figures (`recorded`: first try, record time, whether
    its replay was identical then) kept as they were measured."""
    pairs = load_fixture_pairs()
    cassette = cassettes / f"mastra-{mode}.oscas"
    args = ("--model", model, "--cassette", str(cassette), "--threads", "2")
    started = time.perf_counter()
    with serving(work, "--record-mode", "replay", *args, block_runtime=True) as rep:
        again = run_score(rep.base_url, pairs, mode=mode, model=model, check=False)
    replayed = time.perf_counter() - started
    done = [r for r in again.results if "error" not in r]
    return {
        **recorded,
        "replay_seconds": round(replayed, 1),
        "errors": [r["error"] for r in again.results if "error" in r],
        **_texts_part(done, {p["id"]: p for p in pairs}),
        "texts_derived_again_from_the_cassette": True,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="qwen2.5-coder-0.5b")
    parser.add_argument("--modes", nargs="+", default=["inline", "native"])
    parser.add_argument("--out", type=Path)
    parser.add_argument(
        "--cassettes",
        type=Path,
        help="keep the recorded cassettes here (mastra-MODE.oscas, replayable with `serve "
        "--record-mode replay`); by default they go with a scratch folder",
    )
    parser.add_argument(
        "--replay-only",
        action="store_true",
        help="with --cassettes holding a run's cassettes and --out its report: derive the "
        "texts Mastra prints again by replay (no model), keeping the run's measured figures",
    )
    args = parser.parse_args()
    require_node()
    out = args.out or RESULTS / f"serve-mastra-{args.model}.json"
    if args.replay_only:
        if args.cassettes is None or not out.is_file():
            parser.error("--replay-only needs --cassettes and an existing --out report")
        before = {m["mode"]: m for m in json.loads(out.read_text(encoding="utf-8"))["modes"]}
        with tempfile.TemporaryDirectory() as scratch:
            modes = [
                replay_mode(args.model, m, Path(scratch), args.cassettes, before[m])
                for m in args.modes
            ]
        report = {"model": args.model, "modes": modes}
        out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        print(json.dumps(report, indent=2))
        return
    kept = (
        [args.cassettes / f"mastra-{mode}.oscas" for mode in args.modes] if args.cassettes else []
    )
    if any(path.exists() for path in kept):
        parser.error(
            f"{args.cassettes} already holds a cassette of these modes: give another folder"
        )
    with tempfile.TemporaryDirectory() as scratch:
        cassettes = args.cassettes or Path(scratch)
        cassettes.mkdir(parents=True, exist_ok=True)
        report = {
            "model": args.model,
            "modes": [one_mode(args.model, m, Path(scratch), cassettes) for m in args.modes],
        }
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
