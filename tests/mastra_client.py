"""Drive Mastra's real TypeScript summarization scorer from the Python tests.

scripts/setup-node installs node 22 (npm registry package node-linux-*) into a cache directory and
the pinned @mastra/evals client into tests/clients/mastra/node_modules; tests/clients/mastra/
score.mjs runs the unmodified `createSummarizationScorer` against an OpenAI-compatible base URL.

    from tests.mastra_client import require_node, run_score
    node = require_node()          # a test's first line: fails (CI) or skips (elsewhere) loudly
    run = run_score(base_url, pairs, mode="inline", model="smollm2-135m")
    run.results[0]["result"]["score"], run.results[0]["http_requests"]   # 3 expected
    run.lines                       # the raw stdout lines, for byte-for-byte comparison

Each result line (keys sorted at every level) is
    {"http_requests": N, "id": ..., "requests": [{"method", "status", "url"}, ...],
     "result": <scorer.run's result without its volatile fields>, "volatile": [dropped paths]}
or, when the evaluation threw, {"error", "http_requests", "id", "requests"}.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CLIENT_DIR = ROOT / "tests" / "clients" / "mastra"
SCORE_MJS = CLIENT_DIR / "score.mjs"
SETUP_NODE = ROOT / "scripts" / "setup-node"
MODES = ("inline", "native")
# setup-node fetches node (~30 MB) and the client (~160 packages) on a cold cache: about 15 s
# here; generous for a slow registry.
SETUP_TIMEOUT_S = 600


class NodeSetupError(RuntimeError):
    """scripts/setup-node could not provide node 22 and the Mastra client."""


@functools.cache
def node_binary() -> Path:
    """The cached node 22 binary, installing it and the Mastra client first when needed.

    Raises NodeSetupError with setup-node's own message when it fails.
    """
    try:
        proc = subprocess.run(
            ["bash", str(SETUP_NODE), "--print-node"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=SETUP_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise NodeSetupError(f"scripts/setup-node did not run to the end: {exc}") from exc
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        tail = "\n".join(proc.stderr.strip().splitlines()[-20:])
        raise NodeSetupError(f"scripts/setup-node exited {proc.returncode}:\n{tail}")
    node = Path(lines[-1])
    if not node.is_file() or not os.access(node, os.X_OK):
        raise NodeSetupError(f"scripts/setup-node printed {node}, which is not an executable file")
    return node


def require_node() -> Path:
    """node_binary() for a test, which fails (never skips) with setup-node's reason when node
    cannot be set up: scripts/setup installs it, so a missing client is a broken setup."""
    try:
        return node_binary()
    except NodeSetupError as exc:
        pytest.fail(f"node 22 / Mastra client unavailable: {exc}", pytrace=False)


@dataclass(frozen=True)
class MastraRun:
    """One score.mjs run: its raw stdout lines, the parsed results, stderr and exit code."""

    lines: list[str]
    results: list[dict]
    stderr: str
    returncode: int

    def by_id(self) -> dict[str, dict]:
        return {r["id"]: r for r in self.results}


def load_fixture_pairs(ids: Iterable[str] | None = None) -> list[dict]:
    """The project's fixture pairs ({id, source, summary}) from fixtures/pairs.jsonl."""
    rows = [
        json.loads(line)
        for line in (ROOT / "fixtures" / "pairs.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    pairs = [{k: row[k] for k in ("id", "source", "summary")} for row in rows]
    if ids is None:
        return pairs
    wanted = list(ids)
    index = {p["id"]: p for p in pairs}
    return [index[i] for i in wanted]


def run_score(
    base_url: str,
    pairs: Iterable[Mapping[str, str]],
    *,
    mode: str = "inline",
    model: str = "default",
    api_key: str | None = None,
    max_questions: int | None = None,
    timeout: float = 1800,
    check: bool = True,
    env: Mapping[str, str] | None = None,
) -> MastraRun:
    """Run Mastra's createSummarizationScorer on each pair against `base_url` (which includes
    the /v1 prefix if the server has one: the client posts to {base_url}/chat/completions).

    mode "inline": Mastra's default for an unknown provider (schema appended to the prompt);
    mode "native": response_format json_schema. With check=True (the default) a non-zero exit
    or a pair that errored raises AssertionError carrying score.mjs's stderr.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    node = node_binary()
    payload = [{"id": p["id"], "source": p["source"], "summary": p["summary"]} for p in pairs]
    cmd = [str(node), str(SCORE_MJS), "--base-url", base_url, "--mode", mode, "--model", model]
    if api_key is not None:
        cmd += ["--api-key", api_key]
    if max_questions is not None:
        cmd += ["--max-questions", str(max_questions)]
    proc_env = {k: v for k, v in os.environ.items() if not k.startswith("NODE_")}
    proc_env["MASTRA_TELEMETRY_DISABLED"] = "1"
    proc_env.update(env or {})
    proc = subprocess.run(
        cmd,
        cwd=CLIENT_DIR,
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=timeout,
        env=proc_env,
    )
    lines = proc.stdout.splitlines()
    results = [json.loads(line) for line in lines if line.strip()]
    run = MastraRun(lines=lines, results=results, stderr=proc.stderr, returncode=proc.returncode)
    if check:
        errors = [r for r in results if "error" in r]
        if proc.returncode != 0 or errors or len(results) != len(payload):
            detail = "\n".join(f"{r['id']}: {r['error']}" for r in errors)
            raise AssertionError(
                f"score.mjs exited {proc.returncode} with {len(results)}/{len(payload)} results"
                f"\n{detail}\nstderr:\n{proc.stderr[-4000:]}"
            )
    return run


def judge_executions(result_line: Mapping) -> dict[str, list[dict]]:
    """The judge executions of each step (preprocess, analyze, generateReason) of one line."""
    judge = result_line["result"].get("judge", {})
    return {step: data.get("executions", []) for step, data in judge.items()}
