"""offline-scorer beside DeepEval and beside the decode limit: one run, one machine, one GGUF.

For each repeat, on the same documents (fixtures/pairs.jsonl) and the same model file:

1. ours: the live `SummarizationScorer` over `LlamaJudge` (grammar-constrained, greedy, KV-cache
   prefix reuse): wall time per evaluation, model calls, prompt tokens (rendered, and evaluated
   after prefix reuse), tokens generated, schema-valid outputs (no `GenerationError`);
2. DeepEval: `SummarizationMetric` over the same GGUF through llama-cpp-python's chat completion,
   in DeepEval's own virtual environment (bench/deepeval/.venv, `bash bench/deepeval/setup.sh`),
   run as a subprocess with the same threads; prompt-and-parse JSON, as a typical user writes it
   (no grammar); a cap of --deepeval-max-tokens per call and --deepeval-timeout per evaluation;
3. the decode limit: raw llama.cpp, unconstrained and greedy, generating exactly as many tokens
   as ours generated, from ours' very prompts (same tokens, same prefix reuse), call by call;

then, once, the replay figures from bench/bench_replay.py and bench/bench_cassette_open.py.
Medians over repeats of each system's mean per evaluation; a Markdown table on stdout, the raw
numbers in --out (JSON) if given. Model load time is outside every timed region.

    python bench/bench_side_by_side.py [--pairs N] [--repeat R] [--threads T] \
        [--out docs/benchmarks-side-by-side.json]

Run it alone on the machine: other load skews every number here.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shlex
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.machine import cpu_model, package_version  # noqa: E402
from offline_scorer.backends.llama_cpp import load_judge  # noqa: E402
from offline_scorer.backends.llama_cpp.gbnf import request_grammar  # noqa: E402
from offline_scorer.backends.llama_cpp.judge import LlamaJudge  # noqa: E402
from offline_scorer.errors import GenerationError  # noqa: E402
from offline_scorer.judging.protocol import (  # noqa: E402
    Completion,
    JudgeBase,
    JudgeIdentity,
    JudgeRequest,
)
from offline_scorer.scorers.summarization.options import ScorerOptions  # noqa: E402
from offline_scorer.scorers.summarization.prompts import (  # noqa: E402
    ANALYZE_MAX_TOKENS,
    PREPROCESS_MAX_TOKENS,
    REASON_MAX_TOKENS,
)
from offline_scorer.scorers.summarization.scorer import SummarizationScorer  # noqa: E402
from offline_scorer.settings import default_threads  # noqa: E402

PAIRS_FILE = ROOT / "fixtures" / "pairs.jsonl"
DEEPEVAL_DIR = ROOT / "bench" / "deepeval"
DEEPEVAL_PYTHON = DEEPEVAL_DIR / ".venv" / "bin" / "python"
DEEPEVAL_RUNNER = DEEPEVAL_DIR / "run_deepeval.py"
LOAD_LIMIT = 0.5
NAN = float("nan")

GOAL_SPEEDUP = 2.5  # DeepEval s/eval over ours
GOAL_INVALID = 0
GOAL_OVERHEAD = 0.15  # ours / limit - 1
GOAL_REPLAY = 5000.0  # evaluations/s

METRICS = (
    "seconds",
    "calls",
    "prompt_tokens",
    "prompt_tokens_evaluated",
    "completion_tokens",
    "forced_tokens",
)


# ---------------------------------------------------------------- machine facts


def load_average() -> float | None:
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def cpus_available() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 0


# ---------------------------------------------------------------- ours, instrumented


@dataclass
class DecodeRecord:
    """One `LlamaJudge.decode` as the live run did it: enough to replay it for the limit."""

    prompt: list[int]
    n: int
    forced: int
    finished: bool
    prompt_evaluated: int
    seconds: float


@dataclass
class Instrument:
    """Wraps one judge engine's `decode` and `eval_prompt` (instance attributes, same behaviour)."""

    judge: LlamaJudge
    decodes: list[DecodeRecord] = field(default_factory=list)
    prompt_evaluated: int = 0

    def __post_init__(self) -> None:
        engine = self.judge.engine
        self.raw_decode = engine.decode
        raw_eval_prompt = engine.eval_prompt
        llama = engine.llama

        def eval_prompt(tokens: list[int]) -> None:
            real_eval = llama.eval  # the class's method: no instance override is kept

            def counting_eval(batch: Any) -> Any:
                self.prompt_evaluated += len(batch)
                return real_eval(batch)

            llama.eval = counting_eval
            try:
                raw_eval_prompt(tokens)
            finally:
                del llama.eval

        def decode(prompt: list[int], constraint: Any, budget: int, **kwargs: Any) -> Any:
            before = self.prompt_evaluated
            started = time.perf_counter()
            tokens, forced, finished = self.raw_decode(prompt, constraint, budget, **kwargs)
            self.decodes.append(
                DecodeRecord(
                    prompt=list(prompt),
                    n=len(tokens),
                    forced=forced,
                    finished=finished,
                    prompt_evaluated=self.prompt_evaluated - before,
                    seconds=time.perf_counter() - started,
                )
            )
            return tokens, forced, finished

        engine.eval_prompt = eval_prompt  # type: ignore[method-assign]
        engine.decode = decode  # type: ignore[method-assign]

    def reset_cache(self) -> None:
        """Start a run from an empty KV cache, so ours and the limit see the same reuse."""
        self.judge.engine.llama.n_tokens = 0


class CountingJudge(JudgeBase):
    """The live judge behind a counter: calls, and the usage each completion carries."""

    def __init__(self, judge: LlamaJudge) -> None:
        self.judge = judge
        self.completions: list[Completion] = []
        self.calls = 0

    @property
    def identity(self) -> JudgeIdentity:
        return self.judge.identity

    def complete(self, request: JudgeRequest) -> Completion:
        self.calls += 1
        completion = self.judge.complete(request)
        self.completions.append(completion)
        return completion


def run_ours(judge: LlamaJudge, inst: Instrument, pairs: list[dict], repeat: int) -> list[dict]:
    rows = []
    inst.reset_cache()
    for index, pair in enumerate(pairs, 1):
        counting = CountingJudge(judge)
        scorer = SummarizationScorer(counting, ScorerOptions())
        inst.decodes = []
        started = time.perf_counter()
        error: BaseException | None = None
        result = None
        try:
            result = scorer.score_texts(pair["source"], pair["summary"])
        except GenerationError as caught:
            error = caught
        except Exception as caught:  # a crash is recorded as an invalid output, never hidden
            error = caught
        seconds = time.perf_counter() - started
        decodes = inst.decodes
        row = {
            "system": "ours",
            "repeat": repeat,
            "id": pair["id"],
            "ok": error is None,
            "seconds": seconds,
            "calls": counting.calls,
            "prompt_tokens": sum(len(d.prompt) for d in decodes),
            "prompt_tokens_evaluated": sum(d.prompt_evaluated for d in decodes),
            "completion_tokens": sum(d.n for d in decodes),
            "forced_tokens": sum(d.forced for d in decodes),
            "decode_seconds": sum(d.seconds for d in decodes),
            "failure": None
            if error is None
            else ("schema" if isinstance(error, GenerationError) else "crash"),
            "error": None if error is None else f"{type(error).__name__}: {error}"[:500],
            "score": None if result is None else result.score,
            "call_detail": [
                {
                    "prompt_tokens": len(d.prompt),
                    "prompt_tokens_evaluated": d.prompt_evaluated,
                    "completion_tokens": d.n,
                    "forced_tokens": d.forced,
                    "finished": d.finished,
                    "decode_seconds": round(d.seconds, 4),
                }
                for d in decodes
            ],
            "_decodes": decodes,
        }
        rows.append(row)
        print(
            f"[ours {index}/{len(pairs)}] {pair['id']}: {seconds:.2f} s, {counting.calls} "
            f"call(s), {'ok' if error is None else row['error']}",
            file=sys.stderr,
        )
    return rows


def run_limit(inst: Instrument, ours_rows: list[dict], repeat: int) -> list[dict]:
    """Ours' decodes again, unconstrained and greedy, exactly n tokens each, same prompts."""
    rows = []
    inst.reset_cache()
    for index, ours in enumerate(ours_rows, 1):
        evaluated = 0
        started = time.perf_counter()
        for record in ours["_decodes"]:
            before = inst.prompt_evaluated
            inst.raw_decode(record.prompt, None, budget=record.n, stop_at_eog=False)
            evaluated += inst.prompt_evaluated - before
        seconds = time.perf_counter() - started
        rows.append(
            {
                "system": "limit",
                "repeat": repeat,
                "id": ours["id"],
                "ok": True,
                "seconds": seconds,
                "calls": len(ours["_decodes"]),
                "prompt_tokens": ours["prompt_tokens"],
                "prompt_tokens_evaluated": evaluated,
                "completion_tokens": ours["completion_tokens"],
            }
        )
        print(
            f"[limit {index}/{len(ours_rows)}] {ours['id']}: {seconds:.2f} s "
            f"(ours {ours['seconds']:.2f} s)",
            file=sys.stderr,
        )
    return rows


# ---------------------------------------------------------------- DeepEval, in its own venv


def run_deepeval(
    args: argparse.Namespace, model_path: Path, pairs: list[dict], repeat: int
) -> tuple[list[dict], dict]:
    command = [
        str(DEEPEVAL_PYTHON),
        str(DEEPEVAL_RUNNER),
        "--model",
        str(model_path),
        "--pairs-file",
        str(args.pairs_file),
        "--pairs",
        str(len(pairs)),
        "--threads",
        str(args.threads),
        "--max-tokens",
        str(args.deepeval_max_tokens),
        "--eval-timeout",
        str(args.deepeval_timeout),
        "--repeat-index",
        str(repeat),
        "--json-mode",
        args.deepeval_json_mode,
    ]
    env = dict(
        os.environ,
        DEEPEVAL_TELEMETRY_OPT_OUT="YES",
        DEEPEVAL_DISABLE_DOTENV="1",
        DEEPEVAL_UPDATE_WARNING_OPT_IN="0",
    )
    limit_s = len(pairs) * (args.deepeval_timeout + 60) + 120
    info: dict[str, Any] = {"command": shlex.join(command), "returncode": None, "error": None}
    started = time.perf_counter()
    try:
        child = subprocess.run(
            command,
            stdout=subprocess.PIPE,
            stderr=None,
            text=True,
            env=env,
            cwd=str(DEEPEVAL_DIR),
            timeout=limit_s,
            check=False,
        )
        stdout, info["returncode"] = child.stdout, child.returncode
    except subprocess.TimeoutExpired as expired:
        out = expired.stdout or ""
        stdout = out.decode() if isinstance(out, bytes) else out
        info["error"] = f"runner killed after {limit_s:.0f} s"
    info["wall_s"] = time.perf_counter() - started
    rows = []
    for line in stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                info["error"] = f"unreadable line from the runner: {line[:120]!r}"
    if info["returncode"] not in (0, None) and info["error"] is None:
        info["error"] = f"runner exited with {info['returncode']}"
    done = {row["id"] for row in rows}
    for pair in pairs:  # an evaluation the runner never reported is a failed one
        if pair["id"] not in done:
            rows.append(
                {
                    "system": "deepeval",
                    "repeat": repeat,
                    "id": pair["id"],
                    "ok": False,
                    "seconds": NAN,
                    "calls": 0,
                    "prompt_tokens": 0,
                    "prompt_tokens_evaluated": 0,
                    "completion_tokens": 0,
                    "json_failures": 0,
                    "failure": "runner",
                    "error": info["error"] or "not reported",
                }
            )
    order = {pair["id"]: i for i, pair in enumerate(pairs)}
    rows.sort(key=lambda row: order.get(row["id"], 0))
    return rows, info


# ---------------------------------------------------------------- replay figures


def last_json_line(text: str) -> dict | None:
    for line in reversed(text.splitlines()):
        if line.strip().startswith("{"):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                return None
    return None


def run_script(argv: list[str], timeout: float) -> dict:
    command = [sys.executable, *argv]
    try:
        child = subprocess.run(
            command, capture_output=True, text=True, cwd=str(ROOT), timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return {"command": shlex.join(command), "error": f"timed out after {timeout:.0f} s"}
    figures = last_json_line(child.stdout)
    result: dict[str, Any] = {
        "command": shlex.join(["python", *argv]),
        "returncode": child.returncode,
        "figures": figures,
        "text": child.stdout.strip(),
    }
    if child.returncode != 0 or figures is None:
        result["error"] = (child.stderr.strip().splitlines() or ["no JSON line"])[-1][:300]
    return result


# ---------------------------------------------------------------- aggregation


def finite(values: list[float]) -> list[float]:
    return [v for v in values if v is not None and not math.isnan(v)]


def median(values: list[float]) -> float:
    values = finite(values)
    return statistics.median(values) if values else NAN


def mean(values: list[float]) -> float:
    values = finite(values)
    return statistics.fmean(values) if values else NAN


def per_repeat(rows: list[dict], ids: set[str] | None = None) -> dict[str, float]:
    """One system, one repeat: mean per evaluation (over `ids` if given), invalid count."""
    chosen = [r for r in rows if ids is None or r["id"] in ids]
    summary = {key: mean([float(r.get(key, NAN)) for r in chosen]) for key in METRICS}
    summary["evaluations"] = len(chosen)
    summary["invalid"] = sum(not r["ok"] for r in chosen)
    summary["json_failures"] = sum(r.get("json_failures", 0) for r in chosen)
    return summary


def over_repeats(per: list[dict[str, Any]]) -> dict[str, Any]:
    keys = [*METRICS, "evaluations", "invalid", "json_failures"]
    return {key: median([p[key] for p in per]) for key in keys} | {
        "invalid_total": sum(p["invalid"] for p in per),
        "evaluations_total": sum(p["evaluations"] for p in per),
        "seconds_per_repeat": [p["seconds"] for p in per],
    }


def ratio(a: float, b: float) -> float:
    return a / b if b and not (math.isnan(a) or math.isnan(b)) else NAN


def summarise(repeats: list[dict[str, list[dict]]]) -> dict:
    systems = ("ours", "deepeval", "limit")
    out: dict[str, Any] = {s: over_repeats([per_repeat(r[s]) for r in repeats]) for s in systems}
    # Pairs every system finished in that repeat: DeepEval stops at its first unparsable answer,
    # so its all-pairs mean covers less work than ours.
    matched_per: list[dict[str, Any]] = []
    for r in repeats:
        ids = {row["id"] for row in r["ours"] if row["ok"]} & {
            row["id"] for row in r["deepeval"] if row["ok"]
        }
        matched_per.append({s: per_repeat(r[s], ids) for s in systems} | {"ids": sorted(ids)})
    out["matched"] = {s: over_repeats([m[s] for m in matched_per]) for s in systems} | {
        "ids_per_repeat": [m["ids"] for m in matched_per]
    }
    ours_s, de_s, lim_s = (out[s]["seconds"] for s in systems)
    out["speedup_vs_deepeval"] = ratio(de_s, ours_s)
    out["ours_over_deepeval"] = ratio(ours_s, de_s)
    out["ours_over_limit"] = ratio(ours_s, lim_s)
    out["overhead_over_limit"] = out["ours_over_limit"] - 1
    out["matched_speedup_vs_deepeval"] = ratio(
        out["matched"]["deepeval"]["seconds"], out["matched"]["ours"]["seconds"]
    )
    # Per-repeat ratios too, so a reader can see their spread.
    out["speedup_per_repeat"] = [
        ratio(per_repeat(r["deepeval"])["seconds"], per_repeat(r["ours"])["seconds"])
        for r in repeats
    ]
    out["overhead_per_repeat"] = [
        ratio(per_repeat(r["ours"])["seconds"], per_repeat(r["limit"])["seconds"]) - 1
        for r in repeats
    ]
    return out


def schema_counts(rows: list[dict]) -> dict[str, int]:
    """Which pydantic schema DeepEval passed to generate(), over every call of every repeat."""
    counts: dict[str, int] = {}
    for row in rows:
        for call in row.get("call_detail", []):
            name = call.get("schema") or "none"
            counts[name] = counts.get(name, 0) + 1
    return counts


# ---------------------------------------------------------------- output


def fmt(value: Any, spec: str = ".2f") -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:{spec}}"


def verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else ("met" if ok else "NOT met")


def print_report(
    summary: dict, meta: dict, replay: dict, cassette: dict, deepeval_runs: list[dict]
) -> None:
    how = {"parse": "prompt + parse JSON", "grammar": "JSON schema enforced by llama.cpp's GBNF"}[
        meta["deepeval_json_mode"]
    ]
    names = {
        "ours": "offline-scorer live (grammar-constrained)",
        "deepeval": f"DeepEval SummarizationMetric ({how})",
        "limit": "decode limit (raw llama.cpp, unconstrained, same prompts and n)",
    }
    print(
        f"## Side by side: {meta['pairs']} pair(s) x {meta['repeat']} repeat(s), "
        f"{meta['threads']} thread(s), model {meta['model']}\n"
    )
    load = meta["load_average_1m_at_start"]
    if load is not None and load > LOAD_LIMIT:
        print(
            f"**Warning: the 1-minute load average was {load:.2f} (> {LOAD_LIMIT}) at start: "
            "the machine was not quiet, so these timings are not reliable.**\n"
        )
    print(
        "| system | s/eval | calls/eval | prompt tok/eval | prompt tok evaluated/eval "
        "| generated tok/eval | invalid outputs |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for key in ("ours", "deepeval", "limit"):
        s = summary[key]
        invalid = "-" if key == "limit" else f"{s['invalid_total']} of {s['evaluations_total']}"
        print(
            f"| {names[key]} | {fmt(s['seconds'], '.3f')} | {fmt(s['calls'], '.1f')} "
            f"| {fmt(s['prompt_tokens'], '.0f')} | {fmt(s['prompt_tokens_evaluated'], '.0f')} "
            f"| {fmt(s['completion_tokens'], '.0f')} | {invalid} |"
        )
    print(
        "\nPer-evaluation figures are each system's mean over the pairs, median over repeats. "
        "Invalid outputs: ours = `GenerationError` (answer not schema-valid or cut at its "
        "budget); DeepEval = evaluation raised (unparsable JSON, wrong keys, timeout)."
    )
    de = summary["deepeval"]
    if de["invalid_total"]:
        print(
            f"Note: a DeepEval evaluation ends at its first failure (an unparsable answer "
            f"raises; DeepEval does not retry), so its s/eval covers less work than ours on "
            f"failed pairs (JSON failures: {fmt(de['json_failures'], '.0f')} median per "
            f"repeat). Pairs both finished: "
            f"{', '.join(summary['matched']['ids_per_repeat'][0]) or 'none'} (repeat 1); "
            f"DeepEval / ours on those: {fmt(summary['matched_speedup_vs_deepeval'])}."
        )
    forced = summary["ours"]["forced_tokens"]
    print(
        f"Ours generated {fmt(summary['ours']['completion_tokens'], '.0f')} tokens/eval, of "
        f"which {fmt(forced, '.0f')} were forced by the grammar and evaluated as a batch; the "
        "limit generates every one of its tokens one at a time, so ours can beat it (a "
        "negative overhead)."
    )
    schemas = meta.get("deepeval_schemas") or {}
    if schemas:
        passed = ", ".join(f"{name} x{count}" for name, count in schemas.items())
        enforced = (
            "the schema is not enforced (no grammar), DeepEval parses the returned text"
            if meta["deepeval_json_mode"] == "parse"
            else "each schema went to llama-cpp-python as a JSON-schema response_format "
            "(GBNF) and generate returned the validated instance"
        )
        print(
            f"DeepEval called the model as generate(prompt, schema=<pydantic class>): {passed}; "
            f"{enforced}."
        )
    print("\n| ratio | value |")
    print("| --- | ---: |")
    print(f"| ours / DeepEval (s/eval) | {fmt(summary['ours_over_deepeval'], '.3f')} |")
    print(f"| DeepEval / ours (x faster) | {fmt(summary['speedup_vs_deepeval'])} |")
    print(f"| ours / limit (s/eval) | {fmt(summary['ours_over_limit'], '.3f')} |")

    speed = summary["speedup_vs_deepeval"]
    overhead = summary["overhead_over_limit"]
    replay_figures = replay.get("figures") or {}
    replay_rates = [
        replay_figures.get(name)
        for name in ("cycled_evals_per_s_median", "distinct_evals_per_s_median")
    ]
    known_rates = [rate for rate in replay_rates if rate is not None]
    replay_rate = min(known_rates) if len(known_rates) == len(replay_rates) else None
    ours_invalid = summary["ours"]["invalid_total"]
    print("\n| goal | target | where it stands |")
    print("| --- | --- | --- |")
    print(
        f"| faster per evaluation than DeepEval | >= {GOAL_SPEEDUP}x | {fmt(speed)}x: "
        f"{verdict(None if math.isnan(speed) else speed >= GOAL_SPEEDUP)}"
        f"{' (DeepEval failed some pairs: see note)' if de['invalid_total'] else ''} |"
    )
    print(
        f"| invalid outputs (ours) | {GOAL_INVALID} | {ours_invalid} of "
        f"{summary['ours']['evaluations_total']}: {verdict(ours_invalid <= GOAL_INVALID)} |"
    )
    print(
        f"| live overhead over the decode limit | <= {GOAL_OVERHEAD:.0%} | "
        f"{fmt(overhead * 100 if not math.isnan(overhead) else NAN, '.1f')}%: "
        f"{verdict(None if math.isnan(overhead) else overhead <= GOAL_OVERHEAD)} |"
    )
    print(
        f"| replay from a cassette (cycled 12 pairs; 3,000 distinct) | "
        f">= {GOAL_REPLAY:,.0f} evaluations/s | "
        f"{' ; '.join(fmt(rate, ',.0f') for rate in replay_rates)}: "
        f"{verdict(None if replay_rate is None else replay_rate >= GOAL_REPLAY)} |"
    )
    fig = cassette.get("figures") or {}
    if fig:
        print(
            f"\nCassette open: {fig.get('exchanges', 0):,} exchanges "
            f"({fig.get('file_mib')} MiB): open {fmt(fig.get('open_s'), '.3f')} s "
            f"(budget {fig.get('open_budget_s')} s), peak RSS after open "
            f"{fmt(fig.get('rss_after_open_mib'), '.1f')} MiB, retained "
            f"{fmt(fig.get('rss_retained_after_open_mib'), '.1f')} MiB; "
            f"{fig.get('lookups')} lookups {fmt(fig.get('lookups_s'), '.3f')} s."
        )
    for name, run in (("replay", replay), ("cassette open", cassette)):
        if run.get("error"):
            print(f"\n{name} benchmark failed: {run['error']}")
    for run in deepeval_runs:
        if run.get("error"):
            print(f"\nDeepEval runner problem (repeat {run['repeat']}): {run['error']}")
    print(
        f"\nDeepEval settings: max_tokens {meta['deepeval_max_tokens']} per call, timeout "
        f"{meta['deepeval_timeout']:.0f} s per evaluation (checked before each call), "
        f"temperature 0, n_ctx 8192, chat template from the GGUF "
        f"({meta.get('deepeval_chat_format')}); model load {fmt(meta.get('deepeval_load_s'))} "
        f"s (untimed). Ours: budgets {PREPROCESS_MAX_TOKENS}/{ANALYZE_MAX_TOKENS}/"
        f"{REASON_MAX_TOKENS} tokens (preprocess/analyze/reason), llguidance tokenizer "
        f"built once before timing ({fmt(meta['ours_warmup_s'])} s), model load "
        f"{fmt(meta['ours_load_s'])} s (untimed)."
    )
    print(
        f"\nMachine: {meta['platform']}; CPU {meta['cpu_model']} ({meta['cpus_available']} "
        f"available of {meta['cpu_count']}); 1-min load average "
        f"{fmt(meta['load_average_1m_at_start'])} at start, "
        f"{fmt(meta['load_average_1m_at_end'])} at end."
    )
    v = meta["versions"]
    print(
        f"Versions: offline-scorer {v['offline-scorer']}, llama-cpp-python "
        f"{v['llama-cpp-python']}, llguidance {v['llguidance']}, deepeval {v['deepeval']} "
        f"(its own venv), python {meta['python']}."
    )
    print(f"Model: {meta['model_path']} (sha256 {meta['model_sha256'][:16]}...).")
    print(f"Command: `{meta['command']}`")


def clean(value: Any) -> Any:
    """NaN -> None and no private keys, so the JSON file is strict JSON."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: clean(v) for k, v in value.items() if not str(k).startswith("_")}
    if isinstance(value, list | tuple):
        return [clean(v) for v in value]
    return value


# ---------------------------------------------------------------- main


def main() -> None:
    doc = __doc__ or ""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=0, help="first N pairs (0: all 12)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="llama.cpp threads for every system (default: CPUs available)",
    )
    parser.add_argument("--out", type=Path, default=None, help="write the raw numbers (JSON)")
    parser.add_argument("--pairs-file", type=Path, default=PAIRS_FILE)
    parser.add_argument(
        "--deepeval-max-tokens",
        type=int,
        default=1024,
        help="max_tokens of each DeepEval model call",
    )
    parser.add_argument(
        "--deepeval-timeout",
        type=float,
        default=900.0,
        help="seconds per DeepEval evaluation (checked before each call)",
    )
    parser.add_argument(
        "--deepeval-json-mode",
        choices=("parse", "grammar"),
        default="parse",
        help="parse: DeepEval parses JSON out of free text; grammar: "
        "llama-cpp-python enforces each DeepEval schema (JSON confinement)",
    )
    parser.add_argument("--replay-seconds", type=float, default=10.0)
    args = parser.parse_args()
    args.threads = args.threads or default_threads()
    command = shlex.join(["python", *sys.argv])

    load_start = load_average()
    if load_start is not None and load_start > LOAD_LIMIT:
        print(
            f"warning: 1-minute load average is {load_start:.2f} (> {LOAD_LIMIT}); "
            "benchmarks must run alone, so these numbers may be skewed",
            file=sys.stderr,
        )
    if not DEEPEVAL_PYTHON.exists():
        sys.exit(
            f"error: {DEEPEVAL_PYTHON} is missing; run `bash bench/deepeval/setup.sh` "
            "first (DeepEval lives in its own virtual environment)"
        )

    pairs = [json.loads(line) for line in args.pairs_file.open() if line.strip()]
    if args.pairs:
        pairs = pairs[: args.pairs]

    started = time.perf_counter()
    judge = load_judge("default", threads=args.threads)
    ours_load_s = time.perf_counter() - started
    model_path = judge.spec.locate()
    started = time.perf_counter()
    # Builds the llguidance tokenizer (once per process, ~0.3 s) outside the timed region, with
    # a grammar no scorer request uses, so no cache the evaluations rely on is warmed.
    warm_grammar = request_grammar({"type": "boolean"})
    if warm_grammar is None:
        raise SystemExit("the warm-up schema compiled to no grammar")
    judge.engine.constraint(warm_grammar, "warm-up")
    ours_warmup_s = time.perf_counter() - started
    inst = Instrument(judge)

    repeats: list[dict[str, list[dict]]] = []
    deepeval_runs: list[dict] = []
    for repeat in range(args.repeat):
        print(f"--- repeat {repeat + 1}/{args.repeat}", file=sys.stderr)
        ours = run_ours(judge, inst, pairs, repeat)
        deepeval_rows, info = run_deepeval(args, model_path, pairs, repeat)
        deepeval_runs.append(info | {"repeat": repeat + 1})
        limit = run_limit(inst, ours, repeat)
        repeats.append({"ours": ours, "deepeval": deepeval_rows, "limit": limit})

    print("--- replay benchmarks", file=sys.stderr)
    replay = run_script(
        ["bench/bench_replay.py", "--seconds", str(args.replay_seconds)],
        timeout=args.replay_seconds * 10 + 120,
    )
    cassette = run_script(["bench/bench_cassette_open.py"], timeout=900)

    summary = summarise(repeats)
    de_rows = [row for r in repeats for row in r["deepeval"] if "deepeval_version" in row]
    meta = {
        "pairs": len(pairs),
        "repeat": args.repeat,
        "threads": args.threads,
        "model": judge.spec.name,
        "model_path": str(model_path),
        "model_sha256": judge.identity.model_sha256,
        "ours_load_s": ours_load_s,
        "ours_warmup_s": ours_warmup_s,
        "deepeval_max_tokens": args.deepeval_max_tokens,
        "deepeval_timeout": args.deepeval_timeout,
        "deepeval_json_mode": args.deepeval_json_mode,
        "deepeval_chat_format": de_rows[0]["chat_format"] if de_rows else None,
        "deepeval_load_s": median([row["model_load_s"] for row in de_rows]),
        "deepeval_schemas": schema_counts(de_rows),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpus_available": cpus_available(),
        "load_average_1m_at_start": load_start,
        "load_average_1m_at_end": load_average(),
        "versions": {
            "offline-scorer": package_version("offline-scorer"),
            "llama-cpp-python": package_version("llama-cpp-python"),
            "llguidance": package_version("llguidance"),
            "deepeval": de_rows[0]["deepeval_version"] if de_rows else "unknown (no run)",
        },
        "command": command,
        "goals": {
            "speedup_vs_deepeval": GOAL_SPEEDUP,
            "invalid_outputs": GOAL_INVALID,
            "overhead_over_limit": GOAL_OVERHEAD,
            "replay_evals_per_s": GOAL_REPLAY,
        },
    }
    print_report(summary, meta, replay, cassette, deepeval_runs)
    if args.out is not None:
        payload = {
            "meta": meta,
            "summary": summary,
            "replay": replay,
            "cassette_open": cassette,
            "deepeval_runs": deepeval_runs,
            "repeats": repeats,
        }
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(clean(payload), indent=2) + "\n")
        print(f"\nRaw numbers: {args.out}")


if __name__ == "__main__":
    main()
