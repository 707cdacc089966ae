"""The shipped default judge, live: a new user's first score carries the judge's own words.

Every other live test pins the small judge the committed cassettes were recorded with
(`tests/conftest.py` sets $OFFLINE_SCORER_MODEL); these run the registry's default, as the
README's main job does, on a few fixtures.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from offline_scorer.models.registry import SHIPPED_REGISTRY
from tests.conftest import FIXTURES, ROOT

pytestmark = pytest.mark.live

CASES = ("01-harbor-bridge", "03-lamp-recall")


def _shipped_default() -> str:
    import tomllib

    return str(tomllib.loads(SHIPPED_REGISTRY.read_text(encoding="utf-8"))["default"])


def _score(case: str, tmp_path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "OFFLINE_SCORER_MODEL"}
    env["OFFLINE_SCORER_CASSETTE"] = str(tmp_path / "main-job.oscas")
    pair = FIXTURES / "pairs" / case
    texts = ["--source", f"{pair}.source.txt", "--summary", f"{pair}.summary.txt"]
    return subprocess.run(
        [sys.executable, "-m", "offline_scorer", "score", *texts, *extra],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=600,
    )


def test_the_default_is_a_judge_with_measured_signal() -> None:
    from offline_scorer.models.registry import load_registry

    pytest.importorskip("llama_cpp")
    env_free = {k: v for k, v in os.environ.items() if k != "OFFLINE_SCORER_MODEL"}
    probe = subprocess.run(
        [sys.executable, "-m", "offline_scorer", "models", "list"],
        capture_output=True,
        text=True,
        env=env_free,
        cwd=ROOT,
    )
    assert f"{_shipped_default()} (default)" in probe.stdout
    entry = load_registry().models[_shipped_default()]
    assert entry.quality is not None and not entry.quality.at_chance


@pytest.mark.parametrize("case", CASES)
def test_the_main_job_shows_words_the_judge_wrote(case: str, tmp_path) -> None:
    pytest.importorskip("llama_cpp")
    proc = _score(case, tmp_path, "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    authors = result["textAuthors"]
    written = [authors["explanation"], *authors["alignment"], *authors["coverage"]]
    assert "model" in written, result
    shown = _score(case, tmp_path, "--record-mode", "replay")
    assert shown.returncode == 0, shown.stderr
    assert "score " in shown.stdout and "judge: " in shown.stdout, shown.stdout
    assert "judge quality: ROC AUC" in shown.stdout
