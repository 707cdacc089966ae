"""DeepEval's SummarizationMetric on a local GGUF through llama-cpp-python, one JSON line per pair.

Runs in DeepEval's own virtual environment (bench/deepeval/.venv, made by setup.sh), never in
offline-scorer's. The judge is what a typical DeepEval user writes for a local model: a
`DeepEvalBaseLLM` whose `generate` sends DeepEval's prompt to `Llama.create_chat_completion`
(temperature 0, the GGUF's own chat template). DeepEval passes a pydantic `schema=` to
`generate`; what happens to it depends on --json-mode:

- parse (default): the schema is accepted and NOT turned into a grammar; the text goes back and
  DeepEval parses the JSON out of it (`trimAndLoadJson`), as for any custom model that returns a
  string.
- grammar: what DeepEval's custom-LLM guide recommends for small models ("JSON confinement"):
  the schema goes to llama-cpp-python as `response_format={"type": "json_object", "schema": ...}`
  (llama.cpp's GBNF sampler), and `generate` returns the validated schema instance. An answer cut
  at max_tokens still fails validation.

Every parse failure is counted; DeepEval does not retry one, the evaluation fails.

    bench/deepeval/.venv/bin/python bench/deepeval/run_deepeval.py --model PATH.gguf \
        [--pairs-file fixtures/pairs.jsonl] [--pairs N] [--threads T] [--max-tokens 1024] \
        [--eval-timeout 900] [--json-mode parse|grammar]

stdout: one JSON object per evaluation (nothing else); stderr: progress and DeepEval's own output.
Telemetry is opted out, .env loading is off, and any attempt to open a network connection is
refused and reported in the `network_attempts` field (the benchmark must be offline).
"""

from __future__ import annotations

import os

# Before DeepEval is imported: no telemetry, no update check, no .env from the working tree,
# DeepEval's local state in a throw-away place unless the caller chose one.
os.environ["DEEPEVAL_TELEMETRY_OPT_OUT"] = "YES"
os.environ["DEEPEVAL_UPDATE_WARNING_OPT_IN"] = "0"
os.environ["DEEPEVAL_DISABLE_DOTENV"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import argparse
import atexit
import json
import shutil
import socket
import sys
import tempfile
import time
import traceback
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
N_CTX = 8192
SEED = 0

# ---------------------------------------------------------------- network guard

NETWORK_ATTEMPTS: list[str] = []
_LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1", "", None}


def _is_local(host: Any) -> bool:
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    return host in _LOCAL_HOSTS or (isinstance(host, str) and host.startswith("127."))


def install_network_guard() -> None:
    """Refuse (and record) every connection or name lookup that would leave this machine."""
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def target(address: Any) -> Any:
        return address[0] if isinstance(address, tuple) and address else address

    def connect(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_local(target(address)):
            NETWORK_ATTEMPTS.append(f"connect {address!r}")
            raise OSError("network access is disabled in this benchmark")
        return real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_local(target(address)):
            NETWORK_ATTEMPTS.append(f"connect {address!r}")
            raise OSError("network access is disabled in this benchmark")
        return real_connect_ex(self, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if not _is_local(host):
            NETWORK_ATTEMPTS.append(f"getaddrinfo {host!r}")
            raise socket.gaierror(f"network access is disabled in this benchmark ({host!r})")
        return real_getaddrinfo(host, *args, **kwargs)

    socket.socket.connect = connect  # type: ignore[method-assign,assignment]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign,assignment]
    socket.getaddrinfo = getaddrinfo


# ---------------------------------------------------------------- counters


class EvaluationTimeoutError(RuntimeError):
    """The evaluation used up its wall-time allowance; raised before the next model call."""


class Counters:
    """What one evaluation cost. Reset before each `metric.measure`."""

    def __init__(self) -> None:
        self.reset(None)

    def reset(self, deadline: float | None) -> None:
        self.deadline = deadline
        self.calls: list[dict[str, Any]] = []
        self.parse_attempts = 0
        self.parse_failures: list[str] = []

    def totals(self) -> dict[str, int]:
        return {
            "calls": len(self.calls),
            "prompt_tokens": sum(c["prompt_tokens"] for c in self.calls),
            "prompt_tokens_evaluated": sum(c["prompt_tokens_evaluated"] for c in self.calls),
            "completion_tokens": sum(c["completion_tokens"] for c in self.calls),
            "calls_cut_at_max_tokens": sum(c["finish_reason"] == "length" for c in self.calls),
        }


COUNTERS = Counters()


def count_json_parsing() -> None:
    """Count DeepEval's JSON parses and their failures; behaviour is unchanged (same function)."""
    import deepeval.metrics.utils as utils_package
    from deepeval.metrics.utils import generation

    original = generation.trimAndLoadJson

    def counting(input_string: Any, metric: Any = None) -> Any:
        COUNTERS.parse_attempts += 1
        try:
            return original(input_string, metric)
        except Exception as error:
            COUNTERS.parse_failures.append(f"{type(error).__name__}: {error}")
            raise

    generation.trimAndLoadJson = counting
    if getattr(utils_package, "trimAndLoadJson", None) is original:
        utils_package.trimAndLoadJson = counting


# ---------------------------------------------------------------- the model


def make_model_class() -> type:
    import llama_cpp
    from deepeval.models import DeepEvalBaseLLM

    class LlamaCppJudge(DeepEvalBaseLLM):
        """A local GGUF through llama-cpp-python's chat completion: prompt in, text out."""

        def __init__(
            self, model_path: str, threads: int, max_tokens: int, json_mode: str = "parse"
        ) -> None:
            self.model_path = model_path
            self.threads = threads
            self.max_tokens = max_tokens
            self.json_mode = json_mode
            super().__init__(model=Path(model_path).name)

        def load_model(self) -> Any:
            llama = llama_cpp.Llama(
                model_path=self.model_path,
                n_ctx=N_CTX,
                n_threads=self.threads,
                n_threads_batch=self.threads,
                seed=SEED,
                verbose=False,
            )
            self._count_prompt_eval(llama)
            return llama

        def _count_prompt_eval(self, llama: Any) -> None:
            """llama.generate evaluates the uncached prompt suffix in its first eval() call."""
            real_eval = llama.eval
            self._evals: list[int] = []

            def counting_eval(tokens: Any) -> Any:
                self._evals.append(len(tokens))
                return real_eval(tokens)

            llama.eval = counting_eval

        def get_model_name(self) -> str:
            return f"llama-cpp-python:{Path(self.model_path).name}"

        def generate(self, prompt: str, schema: Any = None) -> Any:
            if COUNTERS.deadline is not None and time.perf_counter() > COUNTERS.deadline:
                raise EvaluationTimeoutError(
                    f"evaluation timed out after {len(COUNTERS.calls)} model call(s)"
                )
            self._evals = []
            confined = self.json_mode == "grammar" and schema is not None
            extra: dict[str, Any] = {}
            if confined:  # llama-cpp-python turns the JSON schema into a llama.cpp GBNF grammar
                extra["response_format"] = {
                    "type": "json_object",
                    "schema": schema.model_json_schema(),
                }
            started = time.perf_counter()
            try:
                response = self.model.create_chat_completion(
                    messages=[{"role": "user", "content": prompt}],
                    temperature=0.0,
                    max_tokens=self.max_tokens,
                    **extra,
                )
            except TypeError as error:
                # DeepEval's generate_with_schema retries a TypeError without `schema`: keep a
                # failure inside llama-cpp-python from silently becoming a second call.
                raise RuntimeError(f"llama-cpp-python: {error}") from error
            seconds = time.perf_counter() - started
            choice = response["choices"][0]
            usage = response.get("usage") or {}
            text = choice["message"]["content"] or ""
            COUNTERS.calls.append(
                {
                    "schema": getattr(schema, "__name__", None),
                    "prompt_chars": len(prompt),
                    "prompt_tokens": int(usage.get("prompt_tokens", 0)),
                    "prompt_tokens_evaluated": self._evals[0] if self._evals else 0,
                    "completion_tokens": int(usage.get("completion_tokens", 0)),
                    "finish_reason": choice.get("finish_reason"),
                    "seconds": round(seconds, 4),
                    "text_head": text[:160],
                    "text_tail": text[-160:],
                }
            )
            if not confined:
                return text
            # DeepEval's guide for custom models: return the schema instance, not text.
            COUNTERS.parse_attempts += 1
            try:
                return schema.model_validate_json(text)
            except ValueError as error:  # pydantic's ValidationError is a ValueError
                COUNTERS.parse_failures.append(f"{type(error).__name__}: {error}"[:300])
                raise ValueError(
                    f"invalid JSON under the grammar "
                    f"(finish_reason {choice.get('finish_reason')}): "
                    f"{str(error).splitlines()[0]}"
                ) from None

        async def a_generate(self, prompt: str, schema: Any = None) -> Any:
            return self.generate(prompt, schema=schema)

    return LlamaCppJudge


# ---------------------------------------------------------------- main


def package_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def classify(error: BaseException) -> str:
    if isinstance(error, EvaluationTimeoutError):
        return "timeout"
    if COUNTERS.parse_failures and "invalid JSON" in str(error):
        return "invalid_json"
    if isinstance(error, KeyError | TypeError | AttributeError) or "validation error" in str(error):
        return "schema"  # JSON parsed but not the shape DeepEval reads
    if "exceed context window" in str(error) or "context window" in str(error):
        return "context"
    return "other"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--model", required=True, help="path to the .gguf file")
    parser.add_argument("--pairs-file", type=Path, default=ROOT / "fixtures" / "pairs.jsonl")
    parser.add_argument("--pairs", type=int, default=0, help="first N pairs (0: all)")
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--max-tokens", type=int, default=1024, help="per model call")
    parser.add_argument(
        "--eval-timeout",
        type=float,
        default=900.0,
        help="seconds per evaluation; checked before each model call",
    )
    parser.add_argument("--repeat-index", type=int, default=0, help="echoed in each line")
    parser.add_argument(
        "--json-mode",
        choices=("parse", "grammar"),
        default="parse",
        help="parse: DeepEval parses the text (no grammar); grammar: each "
        "schema is enforced by llama-cpp-python's JSON-schema response_format",
    )
    args = parser.parse_args()

    # Everything DeepEval or rich prints goes to stderr; stdout carries only our JSON lines.
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    if "DEEPEVAL_HOME" not in os.environ:
        home = tempfile.mkdtemp(prefix="deepeval-home-")
        atexit.register(shutil.rmtree, home, True)
        os.environ["DEEPEVAL_HOME"] = home
    install_network_guard()

    import deepeval
    from deepeval.metrics import SummarizationMetric
    from deepeval.test_case import LLMTestCase

    count_json_parsing()
    pairs = [json.loads(line) for line in args.pairs_file.open() if line.strip()]
    if args.pairs:
        pairs = pairs[: args.pairs]

    started = time.perf_counter()
    model = make_model_class()(args.model, args.threads, args.max_tokens, args.json_mode)
    load_s = time.perf_counter() - started
    common = {
        "system": "deepeval",
        "repeat": args.repeat_index,
        "deepeval_version": deepeval.__version__,
        "llama_cpp_python_version": package_version("llama-cpp-python"),
        "chat_format": model.model.chat_format,
        "threads": args.threads,
        "max_tokens_per_call": args.max_tokens,
        "json_mode": args.json_mode,
        "eval_timeout_s": args.eval_timeout,
        "model_load_s": round(load_s, 3),
    }
    for index, pair in enumerate(pairs, 1):
        metric = SummarizationMetric(
            model=model, threshold=0.5, include_reason=True, async_mode=False, eval_mode="llm"
        )
        test_case = LLMTestCase(input=pair["source"], actual_output=pair["summary"])
        started = time.perf_counter()
        COUNTERS.reset(started + args.eval_timeout)
        error: BaseException | None = None
        try:
            metric.measure(test_case)
        except Exception as caught:
            error = caught
        seconds = time.perf_counter() - started
        row: dict[str, Any] = {
            **common,
            "id": pair["id"],
            "ok": error is None,
            "seconds": round(seconds, 4),
            **COUNTERS.totals(),
            "json_parses": COUNTERS.parse_attempts,
            "json_failures": len(COUNTERS.parse_failures),
            "failure": None if error is None else classify(error),
            "error": None if error is None else f"{type(error).__name__}: {error}"[:500],
            "score": getattr(metric, "score", None) if error is None else None,
            "reason": (getattr(metric, "reason", None) or "")[:300] if error is None else None,
            "network_attempts": list(NETWORK_ATTEMPTS),
            "call_detail": COUNTERS.calls,
        }
        if error is not None and not isinstance(error, EvaluationTimeoutError | ValueError):
            traceback.print_exception(error, file=sys.stderr)
        out.write(json.dumps(row) + "\n")
        out.flush()
        print(
            f"[deepeval {index}/{len(pairs)}] {pair['id']}: {row['seconds']:.2f} s, "
            f"{row['calls']} call(s), {'ok' if row['ok'] else row['error']}",
            file=sys.stderr,
        )


if __name__ == "__main__":
    main()
