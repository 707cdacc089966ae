"""A run recorded with `--model path/to/x.gguf` replays with the same flag: the judge's identity
comes from the file's digest and the cassette's records (the registry pins nothing for a path),
and from the cassette alone once the file is gone."""

from __future__ import annotations

import shutil

import pytest

from offline_scorer.models.registry import load_registry
from tests.conftest import FIXTURES, MECHANICS_MODEL, block_imports_code
from tests.test_cli import assert_clean_error, run_cli

pytestmark = pytest.mark.live

PAIR = FIXTURES / "pairs" / "01-harbor-bridge"
TEXTS = ("--source", f"{PAIR}.source.txt", "--summary", f"{PAIR}.summary.txt", "--json")


def test_a_run_recorded_from_a_file_replays_from_it_and_without_it(tmp_path) -> None:
    pytest.importorskip("llama_cpp")
    gguf = tmp_path / "judge.gguf"
    shutil.copyfile(load_registry().resolve(MECHANICS_MODEL).locate(), gguf)
    cassette = tmp_path / "run.oscas"
    common = ("--model", str(gguf), "--cassette", str(cassette))
    recorded = run_cli("score", *TEXTS, *common, "--record-mode", "record")
    assert recorded.returncode == 0, recorded.stderr.decode()
    replayed = run_cli("score", *TEXTS, *common, "--record-mode", "replay")
    assert replayed.returncode == 0, replayed.stderr.decode()
    assert replayed.stdout == recorded.stdout
    gguf.unlink()  # the cassette alone names the judge it holds
    again = run_cli("score", *TEXTS, *common, "--record-mode", "replay")
    assert again.returncode == 0, again.stderr.decode()
    assert again.stdout == recorded.stdout


def test_a_file_the_cassette_has_no_records_of_is_one_line(tmp_path) -> None:
    other = tmp_path / "other.gguf"
    other.write_bytes(b"GGUF not the recorded model")
    cassette = FIXTURES / "cassettes" / "fixtures.oscas"
    proc = run_cli(
        "score",
        *TEXTS,
        "--model",
        str(other),
        "--cassette",
        str(cassette),
        "--record-mode",
        "replay",
    )
    assert_clean_error(proc, 3, "holds no records of the model file", str(other))


def test_replay_by_path_needs_no_runtime(tmp_path) -> None:
    """The identity is read without llama-cpp-python (import blocked)."""
    import subprocess
    import sys

    cassette = FIXTURES / "cassettes" / "fixtures.oscas"
    gone = tmp_path / "gone.gguf"  # absent: the fixtures cassette holds one judge
    code = block_imports_code("llama_cpp", "llguidance") + (
        "import sys\nfrom offline_scorer.cli.app import main\n"
        f"sys.argv = ['offline-scorer', 'score', *{list(TEXTS)!r}, '--model', {str(gone)!r}, "
        f"'--cassette', {str(cassette)!r}, '--record-mode', 'replay']\nmain()\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert '"score"' in proc.stdout


def test_eval_replays_a_run_recorded_from_a_file_without_it(tmp_path) -> None:
    pytest.importorskip("llama_cpp")
    gguf = tmp_path / "judge.gguf"
    shutil.copyfile(load_registry().resolve(MECHANICS_MODEL).locate(), gguf)
    data = tmp_path / "two.jsonl"
    lines = (FIXTURES / "pairs.jsonl").read_text(encoding="utf-8").splitlines()[:2]
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    common = ("--model", str(gguf), "--cassette", str(tmp_path / "run.oscas"), "--quiet")
    first = run_cli("eval", str(data), "--out", str(tmp_path / "a.jsonl"), *common)
    assert first.returncode == 0, first.stderr.decode()
    gguf.unlink()
    again = run_cli(
        "eval", str(data), "--out", str(tmp_path / "b.jsonl"), *common, "--record-mode", "replay"
    )
    assert again.returncode == 0, again.stderr.decode()
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()


def test_the_real_file_records_and_replays_without_the_runtime(tmp_path) -> None:
    """`score --model path/to/x.gguf` recorded, then the same command with `--record-mode
    replay` and llama-cpp-python blocked: the identity is the file's fingerprint (its sha256 and
    the chat template its GGUF metadata holds), and the output is the recorded bytes."""
    import subprocess
    import sys

    pytest.importorskip("llama_cpp")
    gguf = str(load_registry().resolve(MECHANICS_MODEL).locate())  # the installed SmolLM2 file
    cassette = str(tmp_path / "run.oscas")
    common = ["--model", gguf, "--cassette", cassette]
    recorded = run_cli("score", *TEXTS, *common, "--record-mode", "record")
    assert recorded.returncode == 0, recorded.stderr.decode()
    code = block_imports_code("llama_cpp", "llguidance") + (
        "import sys\nfrom offline_scorer.cli.app import main\n"
        f"sys.argv = ['offline-scorer', 'score', *{list(TEXTS)!r}, *{common!r}, "
        "'--record-mode', 'replay']\nmain()\n"
    )
    replayed = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    assert replayed.returncode == 0, replayed.stderr.decode()
    assert replayed.stdout == recorded.stdout
