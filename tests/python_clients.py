"""Drive the Python eval frameworks (Inspect AI, DeepEval) from the tests and the benchmarks.

Each runs in its own venv (scripts/setup-clients), in a subprocess, over pairs given on stdin:

    run = run_inspect(base_url, pairs, work_dir)    # tests/clients/inspect_task/grade.py
    run = run_deepeval(base_url, pairs, work_dir)   # tests/clients/deepeval_metrics/measure.py
    run.lines      # one JSON line per pair (keys sorted), for a byte-for-byte comparison
    run.results    # the same, parsed
    run.trailer    # the last line: the framework's version and any network attempt
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
INSPECT_DIR = ROOT / "tests" / "clients" / "inspect_task"
INSPECT_PYTHON = INSPECT_DIR / ".venv" / "bin" / "python"
INSPECT_VERSION = "0.3.285"
DEEPEVAL_DIR = ROOT / "tests" / "clients" / "deepeval_metrics"
DEEPEVAL_PYTHON = DEEPEVAL_DIR / ".venv" / "bin" / "python"
DEEPEVAL_DRIVER = DEEPEVAL_DIR / "measure.py"
DEEPEVAL_VERSION = "4.3.1"


def require_python_client(python: Path, name: str) -> Path:
    """The venv's python, failing the test (never skipping) when the venv is not there:
    scripts/setup installs it, so a missing client is a broken setup."""
    if not python.is_file():
        pytest.fail(f"{name} is not installed ({python}): run scripts/setup-clients", pytrace=False)
    return python


@dataclass(frozen=True)
class ClientRun:
    lines: list[str]
    results: list[dict[str, Any]]
    trailer: dict[str, Any]
    stderr: str
    returncode: int


def _run(
    python: Path,
    script: Path,
    args: list[str],
    pairs: Iterable[Mapping[str, str]],
    work_dir: Path,
    timeout: float,
    check: bool,
) -> ClientRun:
    work_dir.mkdir(parents=True, exist_ok=True)
    payload = [{k: p[k] for k in ("id", "source", "summary")} for p in pairs]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "PYTHON"))}
    # The frameworks keep state under HOME and the working folder (.deepeval, .inspect): a fresh
    # folder per run, so no earlier run's settings or caches enter this one.
    env.update({"HOME": str(work_dir), "NO_COLOR": "1"})
    # The drivers import `tests.clients.network_guard` from this checkout, and only that: the
    # repository root is the one entry of their path ($PYTHONPATH, not an edit of sys.path).
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run(
        [str(python), str(script), *args],
        cwd=work_dir,
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=timeout,
        env=env,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    parsed = [json.loads(line) for line in lines]
    trailer = parsed[-1] if parsed and "id" not in parsed[-1] else {}
    results = [r for r in parsed if "id" in r]
    run = ClientRun(
        lines=[line for line, r in zip(lines, parsed, strict=True) if "id" in r],
        results=results,
        trailer=trailer,
        stderr=proc.stderr,
        returncode=proc.returncode,
    )
    if check and (proc.returncode != 0 or len(results) != len(payload)):
        raise AssertionError(
            f"{script.name} exited {proc.returncode} with {len(results)}/{len(payload)} results\n"
            + "\n".join(lines)[-4000:]
            + f"\nstderr:\n{proc.stderr[-4000:]}"
        )
    return run


def run_inspect(
    base_url: str,
    pairs: Iterable[Mapping[str, str]],
    work_dir: Path,
    *,
    model: str = "default",
    timeout: float = 1800,
    check: bool = True,
) -> ClientRun:
    """Inspect AI's model_graded_qa over `pairs`, graded at `base_url` (grade.py)."""
    args = ["--base-url", base_url, "--model", model, "--log-dir", str(work_dir / "logs")]
    return _run(INSPECT_PYTHON, INSPECT_DIR / "grade.py", args, pairs, work_dir, timeout, check)


def run_deepeval(
    base_url: str,
    pairs: Iterable[Mapping[str, str]],
    work_dir: Path,
    *,
    model: str = "default",
    timeout: float = 1800,
    check: bool = True,
) -> ClientRun:
    """DeepEval's SummarizationMetric and FaithfulnessMetric over `pairs` (measure.py)."""
    args = ["--base-url", base_url, "--model", model]
    return _run(DEEPEVAL_PYTHON, DEEPEVAL_DRIVER, args, pairs, work_dir, timeout, check)
