"""The three systems `benchmarks.side_by_side` times: ours (the live scorer, instrumented), the
decode limit (raw llama.cpp replaying ours' decodes), and DeepEval (in its own environment).

Kept apart from the command so that each module stays readable; nothing here prints a figure.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks._common import NAN, ROOT
from offline_scorer.backends.llama_cpp.judge import LlamaJudge
from offline_scorer.errors import GenerationError
from offline_scorer.judging.protocol import Completion, JudgeBase, JudgeIdentity, JudgeRequest
from offline_scorer.scorers.summarization.options import ScorerOptions
from offline_scorer.scorers.summarization.scorer import SummarizationScorer

# DeepEval's own virtual environment, made by benchmarks/deepeval/setup.sh.
DEEPEVAL_DIR = ROOT / "benchmarks" / "deepeval"
DEEPEVAL_PYTHON = DEEPEVAL_DIR / ".venv" / "bin" / "python"
DEEPEVAL_RUNNER = DEEPEVAL_DIR / "run_deepeval.py"


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
