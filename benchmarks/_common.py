"""What every benchmark shares: where things are, the machine it ran on, and strict JSON out.

One module so that a check (is the machine busy? which CPU?) is written once, and so that every
script finds the repository's fixtures and its results folder the same way, from the package's
own location rather than from the working directory or an edited `sys.path`: the benchmarks run
as `python -m benchmarks.NAME` from the repository root, which puts the root on the path.
"""

from __future__ import annotations

import json
import math
import os
import platform
import statistics
import sys
from collections.abc import Iterable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
"""Summary figures in git; large per-row files and cassettes are regenerated (README.md)."""
FIXTURE_PAIRS = ROOT / "fixtures" / "pairs.jsonl"
FIXTURE_CASSETTE = ROOT / "fixtures" / "cassettes" / "fixtures.oscas"
FIXTURE_GOLDEN = ROOT / "fixtures" / "golden"
SHARED_DATA = ROOT.parent / "shared" / "data"
"""The labelled dev sets (judge-dev.jsonl, judge-dev-news.jsonl) live beside the repository."""

LOAD_LIMIT = 0.5
"""A 1-minute load average above this means another process shares the 2 cores: timings lie."""
NAN = float("nan")


def read_jsonl(path: Path, limit: int | None = None) -> list[dict[str, Any]]:
    """The rows of a JSON Lines file (blank lines skipped), the first `limit` when given."""
    with path.open(encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines if line.strip()]
    return rows[:limit] if limit else rows


def write_json(path: Path, figures: Any) -> None:
    """Write a run's figures as strict, indented JSON (NaN as null) and say where."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(clean(figures), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path}")


def repo_env() -> dict[str, str]:
    """This environment with the repository on $PYTHONPATH, for the commands a benchmark
    starts (they import `offline_scorer`, `benchmarks` and `tests` from this checkout)."""
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def module_command(module: str, *args: str) -> list[str]:
    """The command that runs benchmark `module` (its `__spec__.name`) in a fresh process: a
    measurement that must not share this process's caches, heap or loaded model. Run it with
    `cwd=ROOT` or `env=repo_env()` so that the package is found."""
    return [sys.executable, "-m", module, *args]


# -- the machine


def cpu_model() -> str:
    """The CPU's name, recorded beside every timing (figures from two machines do not mix)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "Hardware", "Processor") and value.strip():
                return value.strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def package_version(name: str) -> str:
    """An installed distribution's version, or "not installed" (an optional runtime)."""
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def cpus_available() -> int:
    """The CPUs this process may run on (its affinity), which is what a timing got."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 0


def load_average() -> float | None:
    """The 1-minute load average, None where the platform has none."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def warn_if_busy() -> None:
    """Warn on stderr when something else is running: benchmarks must run alone."""
    load = load_average()
    if load is not None and load > LOAD_LIMIT:
        print(
            f"warning: 1-minute load average is {load:.2f} (> {LOAD_LIMIT}); "
            "benchmarks must run alone, so these numbers may be skewed",
            file=sys.stderr,
        )


# -- figures


def finite(values: Iterable[float | None]) -> list[float]:
    """The values that are numbers (a failed measurement is None or NaN)."""
    return [v for v in values if v is not None and not math.isnan(v)]


def median(values: Iterable[float | None]) -> float:
    """The median of the finite values, NaN when there are none."""
    kept = finite(values)
    return statistics.median(kept) if kept else NAN


def mean(values: Iterable[float | None]) -> float:
    """The mean of the finite values, NaN when there are none."""
    kept = finite(values)
    return statistics.fmean(kept) if kept else NAN


def ratio(a: float, b: float) -> float:
    """a / b, NaN when either is NaN or b is not positive (no ratio to report)."""
    return a / b if b > 0 and not (math.isnan(a) or math.isnan(b)) else NAN


def fmt(value: Any, spec: str = ".2f") -> str:
    """A figure for a printed table: "n/a" for a missing one."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:{spec}}"


def clean(value: Any) -> Any:
    """NaN -> None and no private ("_") keys, so a results file is strict JSON of figures."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: clean(v) for k, v in value.items() if not str(k).startswith("_")}
    if isinstance(value, list | tuple):
        return [clean(v) for v in value]
    return value
