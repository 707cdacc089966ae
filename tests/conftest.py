from __future__ import annotations

import importlib
import json
import os
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
MECHANICS_MODEL = "smollm2-135m"
TEST_KINDS = ROOT / "tests" / "kinds"
TEST_KIND_ENTRY_POINT = "consistency = offline_scorer_test_kinds.consistency:SPEC"


def pytest_configure(config: pytest.Config) -> None:
    # CLI runs record by default; keep those recordings out of the user's data dir.
    scratch = Path(tempfile.mkdtemp(prefix="offline-scorer-tests-"))
    os.environ.setdefault("OFFLINE_SCORER_CASSETTE", str(scratch / "default.oscas"))
    register_test_kinds(scratch)
    # Tests of mechanics run on the small judge the committed cassettes were recorded with,
    # by name; tests/test_default_judge.py runs the shipped default (the env var removed).
    os.environ.setdefault("OFFLINE_SCORER_MODEL", MECHANICS_MODEL)


def register_test_kinds(scratch: Path) -> None:
    """Make the test-only scorer kind (tests/kinds) known to this process and to every command
    the tests start, the way a third-party plugin is known: an entry point of an installed
    distribution. Its metadata is written to a scratch folder put on the path (here and in
    $PYTHONPATH, which subprocesses inherit), so nothing is installed: a user's environment,
    set up by scripts/setup, never offers the kind."""
    info = scratch / "kinds" / "offline_scorer_test_kinds-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: offline-scorer-test-kinds\nVersion: 0.1.0\n",
        encoding="utf-8",
    )
    (info / "entry_points.txt").write_text(
        f"[offline_scorer.scorers]\n{TEST_KIND_ENTRY_POINT}\n", encoding="utf-8"
    )
    added = [str(info.parent), str(TEST_KINDS)]
    sys.path[:0] = [entry for entry in added if entry not in sys.path]
    os.environ["PYTHONPATH"] = pythonpath_of(os.environ.get("PYTHONPATH"), *added)
    # this process looked its kinds up already (the pytest plugin's fixtures, at its import):
    # the registry's own API makes the kind known here
    from offline_scorer.scorers.registry import register

    register(importlib.import_module("offline_scorer_test_kinds.consistency").SPEC)


def pythonpath_of(*entries: str | None) -> str:
    """A $PYTHONPATH of `entries` (None and empty ones left out, each once, in order)."""
    kept: list[str] = []
    for entry in entries:
        for part in (entry or "").split(os.pathsep):
            if part and part not in kept:
                kept.append(part)
    return os.pathsep.join(kept)


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
        f"context_size = {spec.context_size}\n"
        f"[models.{spec.name}.scorers.summarization]\n"
        f"verdict_threshold = {spec.verdict_threshold}\n",
        encoding="utf-8",
    )
    path = pythonpath_of(str(ROOT), os.environ.get("PYTHONPATH"))
    return {**os.environ, "OFFLINE_SCORER_MODELS": str(registry), "PYTHONPATH": path}


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
