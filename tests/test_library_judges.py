"""The public way to get a judge: `offline_scorer.get_judge` and `open_judge`, and the README's
example of them, run as written (it replays the committed fixture cassette, so it needs neither
the model nor the runtime)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import offline_scorer
from offline_scorer import ConfigError, JudgeSettings, RecordMode, get_judge, open_judge

ROOT = Path(__file__).resolve().parents[1]
CASSETTE = ROOT / "fixtures/cassettes/fixtures.oscas"


def readme_example() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    return next(block for block in blocks if "get_judge(" in block)


def test_the_readmes_example_prints_the_golden_score_and_reason():
    guard = "import sys; sys.modules['llama_cpp'] = None\n"  # replay must not need the runtime
    done = subprocess.run(
        [sys.executable, "-c", guard + readme_example()],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    golden = json.loads((ROOT / "fixtures/golden/01-harbor-bridge.json").read_text())
    assert done.stdout == f"{golden['score']} {golden['reason']}\n"


def test_get_judge_and_open_judge_give_the_same_replaying_judge():
    with get_judge("smollm2-135m", cassette=CASSETTE, record_mode="replay") as short:
        settings = JudgeSettings(model="smollm2-135m", cassette=CASSETTE, mode=RecordMode.REPLAY)
        with open_judge(settings) as whole:
            assert short.identity == whole.identity is not None


def test_a_mode_that_needs_a_cassette_without_one_is_one_config_error():
    with pytest.raises(ConfigError, match="needs a cassette: pass cassette=PATH"):
        get_judge("smollm2-135m", record_mode="replay")


def test_the_judges_api_is_exported_from_the_package_root():
    assert {"get_judge", "open_judge", "JudgeSettings", "RecordMode"} <= set(offline_scorer.__all__)
