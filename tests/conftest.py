from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
MECHANICS_MODEL = "smollm2-135m"


def pytest_configure(config: pytest.Config) -> None:
    # CLI runs record by default; keep those recordings out of the user's data dir.
    scratch = Path(tempfile.mkdtemp(prefix="offline-scorer-tests-"))
    os.environ.setdefault("OFFLINE_SCORER_CASSETTE", str(scratch / "default.oscas"))
    # Tests of mechanics run on the small judge the committed cassettes were recorded with,
    # by name; tests/test_default_judge.py runs the shipped default (the env var removed).
    os.environ.setdefault("OFFLINE_SCORER_MODEL", MECHANICS_MODEL)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--skip-live",
        action="store_true",
        help="skip tests that run the real default GGUF (they are run by default)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--skip-live"):
        skip = pytest.mark.skip(reason="--skip-live given")
        for item in items:
            if "live" in item.keywords:
                item.add_marker(skip)


@pytest.fixture(scope="session")
def fixture_pairs() -> list[dict]:
    lines = (FIXTURES / "pairs.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def fixture_ids() -> list[str]:
    lines = (FIXTURES / "pairs.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["id"] for line in lines]


def replay_env(tmp_path: Path) -> dict[str, str]:
    """Environment in which the default model's file does not exist (pins unchanged)."""
    from offline_scorer.models.registry import load_registry

    spec = load_registry().resolve("default")
    registry = tmp_path / "models.toml"
    registry.write_text(
        f'[models.{spec.name}]\npath = "{tmp_path / "absent.gguf"}"\n'
        f'sha256 = "{spec.sha256}"\nchat_template_sha256 = "{spec.chat_template_sha256}"\n'
        f"context_size = {spec.context_size}\nverdict_threshold = {spec.verdict_threshold}\n",
        encoding="utf-8",
    )
    return {**os.environ, "OFFLINE_SCORER_MODELS": str(registry), "PYTHONPATH": str(ROOT)}


def block_imports_code(*modules: str) -> str:
    """Python source that makes importing `modules` fail, for subprocess tests."""
    names = ", ".join(repr(m) for m in modules)
    return (
        "import sys\n"
        "class _Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        f"        if name.split('.')[0] in ({names},):\n"
        "            raise ImportError('blocked for this test: ' + name)\n"
        "        return None\n"
        "sys.meta_path.insert(0, _Block())\n"
    )


PYTHON = sys.executable


@pytest.fixture(scope="session")
def live_judge():
    """The judge the tests of mechanics run (SmolLM2, $OFFLINE_SCORER_MODEL), loaded once."""
    pytest.importorskip("llama_cpp", reason="the live extra is not installed")
    from offline_scorer.backends.llama_cpp import load_judge

    return load_judge("default")
