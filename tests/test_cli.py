"""The CLI's handling of user mistakes: one clear line, a documented exit code, no traceback.

These run without a model: every error here is caught before a model would be loaded.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from offline_scorer import __version__

SOURCE = "fixtures/pairs/01-harbor-bridge.source.txt"
SUMMARY = "fixtures/pairs/01-harbor-bridge.summary.txt"


def run_cli(*args: str, stdin: bytes | None = None, env: dict | None = None):
    return subprocess.run(
        [sys.executable, "-m", "offline_scorer", *args],
        input=stdin,
        capture_output=True,
        env=env,
        timeout=120,
    )


def assert_clean_error(proc, code: int, *fragments: str) -> str:
    err = proc.stderr.decode()
    assert proc.returncode == code, (proc.returncode, err)
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    for fragment in fragments:
        assert fragment in err, err
    return err


def test_version():
    proc = run_cli("--version")
    assert proc.returncode == 0
    assert __version__ in proc.stdout.decode()


def test_missing_file(tmp_path):
    proc = run_cli("score", "--source", str(tmp_path / "nope.txt"), "--summary", SUMMARY)
    assert_clean_error(proc, 2, "--source: no such file", "nope.txt")


def test_non_utf8_file(tmp_path):
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("Caf\xe9 au lait".encode("latin-1"))
    proc = run_cli("score", "--source", SOURCE, "--summary", str(bad))
    assert_clean_error(proc, 2, "--summary", "is not valid UTF-8", "0xe9", "offset 3")


def test_non_utf8_stdin():
    proc = run_cli("score", "--source", "-", "--summary", SUMMARY, stdin=b"\xff\xfe bad")
    assert_clean_error(proc, 2, "standard input is not valid UTF-8")


def test_directory_instead_of_file(tmp_path):
    proc = run_cli("score", "--source", str(tmp_path), "--summary", SUMMARY)
    assert_clean_error(proc, 2, "is a directory")


def test_both_from_stdin():
    proc = run_cli("score", "--source", "-", "--summary", "-", stdin=b"x")
    assert_clean_error(proc, 2, "only one of --source and --summary")


def test_max_questions_below_one():
    proc = run_cli("score", "--source", SOURCE, "--summary", SUMMARY, "--max-questions", "0")
    assert_clean_error(proc, 2, "max_questions must be a whole number, at least 1")


@pytest.mark.parametrize("scale", ["0", "-1", "nan"])
def test_bad_scale(scale):
    proc = run_cli("score", "--source", SOURCE, "--summary", SUMMARY, "--scale", scale)
    assert_clean_error(proc, 2, "scale must be")


def test_unknown_model_name():
    proc = run_cli("score", "--source", SOURCE, "--summary", SUMMARY, "--model", "nope")
    assert_clean_error(proc, 3, "unknown model 'nope'", "smollm2-135m")


def test_missing_model_file(tmp_path):
    # With the runtime missing too, that is said first (see the next test); this is the case
    # of a working runtime and a registry pointing at no file.
    pytest.importorskip("llama_cpp")
    registry = tmp_path / "models.toml"
    registry.write_text('[models.ghost]\npath = "ghost.gguf"\ncontext_size = 2048\n')
    env = {**__import__("os").environ, "OFFLINE_SCORER_MODELS": str(registry)}
    proc = run_cli("score", "--source", SOURCE, "--summary", SUMMARY, "--model", "ghost", env=env)
    assert_clean_error(proc, 3, "model 'ghost': GGUF file not found", str(tmp_path / "ghost.gguf"))


def test_bad_user_registry(tmp_path):
    registry = tmp_path / "models.toml"
    registry.write_text("[models.x]\npath = 'a.gguf'\nsha256 = 'abc'\n")
    env = {**__import__("os").environ, "OFFLINE_SCORER_MODELS": str(registry)}
    proc = run_cli("models", "list", env=env)
    assert_clean_error(proc, 2, "sha256 must be 64 lowercase hex digits")


def test_grammar_files_match_the_schemas():
    proc = run_cli("grammars", "regenerate", "--check")
    assert proc.returncode == 0, proc.stderr.decode()


def test_live_run_without_the_runtime_is_a_clear_error(tmp_path):
    from tests.conftest import block_imports_code

    code = block_imports_code("llama_cpp", "llguidance", "numpy") + (
        "from offline_scorer.cli import main\n"
        "sys.argv = ['offline-scorer'] + sys.argv[1:]\n"
        "main()\n"
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            "score",
            "--source",
            SOURCE,
            "--summary",
            SUMMARY,
            "--cassette",
            str(tmp_path / "c.oscas"),
        ],
        capture_output=True,
        timeout=120,
    )
    assert_clean_error(proc, 3, "needs the 'live' extra", "pip install 'offline-scorer[live]'")
