"""Drive promptfoo's real CLI (npm, run by node 22) from the Python tests and the benchmarks.

scripts/setup-clients installs the pinned promptfoo of tests/clients/promptfoo/package-lock.json
into tests/clients/promptfoo/node_modules with the node 22 of scripts/setup-node. run_eval copies
tests/clients/promptfoo/promptfooconfig.yaml into a work folder next to a tests.jsonl made from
the pairs, and runs `promptfoo eval` with its cache off, one test at a time, the grader pointed at
BASE_URL by OPENAI_BASE_URL, and every other connection sent to a dead proxy.

    run = run_eval(base_url, pairs, work_dir)
    run.lines     # one JSON line per pair: its assertions' pass, score and reason (keys sorted)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.mastra_client import NodeSetupError, node_binary

ROOT = Path(__file__).resolve().parents[1]
CLIENT_DIR = ROOT / "tests" / "clients" / "promptfoo"
CONFIG = CLIENT_DIR / "promptfooconfig.yaml"
CLI = CLIENT_DIR / "node_modules" / "promptfoo" / "dist" / "src" / "main.js"
VERSION = "0.123.1"
# Anything not on loopback goes to this proxy, where nothing listens: promptfoo must stay local.
DEAD_PROXY = "http://127.0.0.1:9"


def require_promptfoo() -> Path:
    """The node binary, failing the test (never skipping) when promptfoo is not installed."""
    try:
        node = node_binary()
    except NodeSetupError as exc:
        pytest.fail(f"node 22 unavailable: {exc}", pytrace=False)
    if not CLI.is_file():
        pytest.fail(f"promptfoo is not installed ({CLI}): run scripts/setup-clients", pytrace=False)
    return node


def installed_version() -> str:
    package = CLIENT_DIR / "node_modules" / "promptfoo" / "package.json"
    return str(json.loads(package.read_text(encoding="utf-8"))["version"])


@dataclass(frozen=True)
class PromptfooRun:
    lines: list[str]
    results: list[dict[str, Any]]
    stdout: str
    stderr: str
    returncode: int


def run_eval(
    base_url: str,
    pairs: Iterable[Mapping[str, str]],
    work_dir: Path,
    *,
    timeout: float = 1800,
    env: Mapping[str, str] | None = None,
) -> PromptfooRun:
    """`promptfoo eval` over `pairs` graded at `base_url`; raises AssertionError (with promptfoo's
    output) when it fails to run or a pair lacks a graded llm-rubric and factuality result."""
    node = node_binary()
    work_dir.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(CONFIG, work_dir / "promptfooconfig.yaml")
    pairs = list(pairs)
    with (work_dir / "tests.jsonl").open("w", encoding="utf-8") as out:
        for pair in pairs:
            test = {
                "description": pair["id"],
                "vars": {k: pair[k] for k in ("id", "source", "summary")},
            }
            out.write(json.dumps(test, ensure_ascii=False) + "\n")
    home = work_dir / "home"
    proc_env = {k: v for k, v in os.environ.items() if not k.startswith(("NODE_", "PROMPTFOO_"))}
    proc_env.update(
        {
            "OPENAI_BASE_URL": base_url,
            "OPENAI_API_KEY": "unused",
            "PROMPTFOO_CACHE_ENABLED": "false",
            "PROMPTFOO_DISABLE_TELEMETRY": "1",
            "PROMPTFOO_DISABLE_UPDATE": "1",
            "PROMPTFOO_DISABLE_SHARING": "1",
            "PROMPTFOO_CONFIG_DIR": str(home),
            "HOME": str(home),
            "HTTP_PROXY": DEAD_PROXY,
            "HTTPS_PROXY": DEAD_PROXY,
            "NO_PROXY": "127.0.0.1,localhost",
            "NO_COLOR": "1",
            "PATH": f"{node.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        }
    )
    proc_env.update(env or {})
    out_file = work_dir / "out.json"
    cmd = [
        str(node),
        str(CLI),
        "eval",
        "-c",
        "promptfooconfig.yaml",
        "--no-cache",
        "-j",
        "1",
        "--no-write",
        "--no-table",
        "--no-progress-bar",
        "-o",
        str(out_file),
    ]
    proc = subprocess.run(
        cmd,
        cwd=work_dir,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=timeout,
        env=proc_env,
        stdin=subprocess.DEVNULL,
    )
    detail = (
        f"promptfoo exited {proc.returncode}\nstdout:\n{proc.stdout[-3000:]}"
        f"\nstderr:\n{proc.stderr[-3000:]}"
    )
    # promptfoo exits 100 when an assertion failed: a judged summary may fail its rubric.
    if proc.returncode not in (0, 100) or not out_file.is_file():
        raise AssertionError(detail)
    results = graded(json.loads(out_file.read_text(encoding="utf-8")), pairs, detail)
    lines = [json.dumps(r, sort_keys=True, ensure_ascii=False) for r in results]
    return PromptfooRun(lines, results, proc.stdout, proc.stderr, proc.returncode)


def graded(output: Mapping[str, Any], pairs: list[Mapping[str, str]], detail: str) -> list[dict]:
    """Each pair's assertion results ({type, pass, score, reason}) from promptfoo's -o JSON."""
    rows = output["results"]["results"]
    by_id = {row["vars"]["id"]: row for row in rows}
    results = []
    for pair in pairs:
        row = by_id.get(pair["id"])
        if row is None:
            raise AssertionError(f"no promptfoo result for {pair['id']}\n{detail}")
        if row.get("error") and not row.get("gradingResult"):
            raise AssertionError(f"{pair['id']}: {row['error']}\n{detail}")
        components = row["gradingResult"].get("componentResults") or []
        assertions = [
            {
                "type": c["assertion"]["type"],
                "pass": c["pass"],
                "score": c["score"],
                "reason": c["reason"],
            }
            for c in components
        ]
        types = [a["type"] for a in assertions]
        if types != ["llm-rubric", "factuality"]:
            raise AssertionError(f"{pair['id']}: assertions {types}\n{detail}")
        results.append({"id": pair["id"], "assertions": assertions})
    return results


# How promptfoo 0.123.1's graders say that the grader's answer could not be read, or not had.
FAILURE_MARKERS = (
    "Could not extract JSON",
    "malformed response",
    "did not match expected format",
    "No output",
    "Error parsing output",
    "API error",
    "API call error",
)


def grading_failures(results: Iterable[Mapping[str, Any]]) -> list[str]:
    """Assertions whose reason is a grading failure (parse or transport), not a judgement."""
    return [
        f"{r['id']} {a['type']}: {a['reason'][:300]}"
        for r in results
        for a in r["assertions"]
        if any(marker in a["reason"] for marker in FAILURE_MARKERS)
    ]
