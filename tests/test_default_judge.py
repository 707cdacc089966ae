"""The main job on the shipped default judge, as a new user runs it after `scripts/setup`.

The other tests pin the small judge the committed cassettes were recorded with
($OFFLINE_SCORER_MODEL, set in conftest); these remove that pin, so they run whatever the shipped
registry names as default, installed by `scripts/setup`. A missing default model is a failure
here, not a skip: a fresh machine must have it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from offline_scorer.models.registry import load_registry
from tests.conftest import FIXTURES

pytestmark = pytest.mark.live

PAIRS = ("01-harbor-bridge", "02-seed-library")


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "OFFLINE_SCORER_MODEL"}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A folder per pair, filled by the main-job test that scores the pair live (its
    cassette): the printed-result test replays pair 01 from there instead of judging again."""
    return {pair: tmp_path_factory.mktemp(pair) for pair in PAIRS}


def _score(pair: str, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    pytest.importorskip("llama_cpp", reason="the live extra is not installed")
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "offline_scorer",
            "score",
            "--source",
            str(FIXTURES / "pairs" / f"{pair}.source.txt"),
            "--summary",
            str(FIXTURES / "pairs" / f"{pair}.summary.txt"),
            "--threads",
            "2",
            "--cassette",
            str(tmp_path / f"{pair}.oscas"),
            *extra,
        ],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=600,
    )


def test_the_shipped_default_is_installed_and_verified(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OFFLINE_SCORER_MODEL", raising=False)
    spec = load_registry().resolve("default")
    spec.verify()  # raises with what to run when the file is missing or differs


@pytest.mark.parametrize("pair", PAIRS)
def test_the_main_job_shows_the_judges_own_words(pair: str, recorded: dict[str, Path]) -> None:
    tmp_path = recorded[pair]
    proc = _score(pair, tmp_path, "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout)
    assert 0.0 <= result["score"] <= 1.0
    authors = result["textAuthors"]
    texts = [authors["explanation"], *authors["alignment"], *authors["coverage"]]
    assert "model" in texts, f"every text was replaced: {authors}"
    # replayed from what was just recorded: the same bytes, no model run
    replay = _score(pair, tmp_path, "--json", "--record-mode", "replay")
    assert replay.returncode == 0, replay.stderr[-2000:]
    assert replay.stdout == proc.stdout
    if pair != PAIRS[0]:
        return
    # an exchange re-run live by itself, after other requests than when it was recorded,
    # answers byte for byte alike: a prompt's state never depends on what the cache held
    # before (one pair shows it, on 4 of its exchanges spread over the steps)
    verify = subprocess.run(
        [
            *(sys.executable, "-m", "offline_scorer", "cassette", "verify"),
            *(str(tmp_path / f"{pair}.oscas"), "--live", "--sample", "4", "--threads", "2"),
        ],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=600,
    )
    assert verify.returncode == 0, verify.stdout + verify.stderr[-2000:]
    counts = re.search(r"live: (\d+) of (\d+) exchanges came back byte-identical", verify.stdout)
    assert counts is not None, verify.stdout
    assert counts[1] == counts[2], verify.stdout


def test_the_printed_result_names_a_judge_written_text(recorded: dict[str, Path]) -> None:
    """What `score` prints (not --json) of the default judge's live run, replayed from the
    recording the main-job test made of pair 01 (the same result: printing needs no new run)."""
    folder = recorded[PAIRS[0]]
    if not (folder / f"{PAIRS[0]}.oscas").is_file():  # this test run alone: record it first
        made = _score(PAIRS[0], folder)
        assert made.returncode == 0, made.stderr[-2000:]
    proc = _score(PAIRS[0], folder, "--record-mode", "replay")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("score ")
    assert "  judge: " in proc.stdout, proc.stdout
