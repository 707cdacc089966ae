"""benchmarks.cut_cassette: a recording cut by replay answers the command it was cut for, the
same as the whole recording does, and nothing else."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from offline_scorer.cassette.store.file import CassetteFile
from tests.conftest import FIXTURES, ROOT, replay_env

FIXTURE_CASSETTE = FIXTURES / "cassettes" / "fixtures.oscas"


def _run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, env=env, capture_output=True, timeout=300
    )


def _eval(data: Path, cassette: Path, out: Path) -> list[str]:
    return [
        "eval",
        str(data),
        "--out",
        str(out),
        "--record-mode",
        "replay",
        "--cassette",
        str(cassette),
    ]


def test_a_cut_recording_replays_its_rows_as_the_whole_one_did(tmp_path: Path):
    env = replay_env(tmp_path)
    pairs = (FIXTURES / "pairs.jsonl").read_text(encoding="utf-8").splitlines()
    two = tmp_path / "two.jsonl"
    two.write_text("\n".join(pairs[:2]) + "\n", encoding="utf-8")
    cut = tmp_path / "cut.oscas"
    whole_out, cut_out = tmp_path / "whole.jsonl", tmp_path / "cut.jsonl"

    made = _run(
        "benchmarks.cut_cassette",
        str(FIXTURE_CASSETTE),
        str(cut),
        "--",
        *_eval(two, FIXTURE_CASSETTE, whole_out),
        env=env,
    )
    assert made.returncode == 0, made.stderr.decode()
    replayed = _run("offline_scorer", *_eval(two, cut, cut_out), env=env)
    assert replayed.returncode == 0, replayed.stderr.decode()
    assert cut_out.read_bytes() == whole_out.read_bytes()

    with (
        CassetteFile(cut, create=False) as small,
        CassetteFile(FIXTURE_CASSETTE, create=False) as big,
    ):
        assert 0 < small.exchange_count < big.exchange_count
        for key, exchange in small.iter_exchanges():
            assert big.get_exchange(key) == exchange  # copied, not re-recorded

    # a row the command did not score has no exchange in the cut recording: replay misses
    third, third_out = tmp_path / "third.jsonl", tmp_path / "third.out"
    third.write_text(pairs[2] + "\n", encoding="utf-8")
    _run("offline_scorer", *_eval(third, cut, third_out), env=env)
    _header, line = (json.loads(x) for x in third_out.read_text(encoding="utf-8").splitlines())
    assert (line["status"], line["error"]["type"]) == ("error", "CassetteMissError")
