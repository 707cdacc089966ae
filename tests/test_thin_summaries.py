"""A faithful but thin summary scores as thin: the product property the score exists for.

Four fixture sources with a one-sentence summary each (`fixtures/thin/pairs.jsonl`), recorded
with the default judge at its registry options (`scripts/record-fixtures --data
fixtures/thin/pairs.jsonl --out fixtures/thin --model qwen2.5-coder-1.5b`). Replayed here with
no model runtime: the bytes are the goldens, and every score is at most 0.3, held down by
coverage while alignment stays high (docs/judges.md, "What a thin summary scores").
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import FIXTURES, ROOT, block_imports_code

THIN = FIXTURES / "thin"
JUDGE = "qwen2.5-coder-1.5b"


def _replay(out: Path) -> subprocess.CompletedProcess[str]:
    code = block_imports_code("llama_cpp", "llguidance") + (
        "from offline_scorer.cli import main\n"
        "sys.argv = ['offline-scorer'] + sys.argv[1:]\n"
        "main()\n"
    )
    args = [
        "eval",
        str(THIN / "pairs.jsonl"),
        "--out",
        str(out),
        "--quiet",
        "--model",
        JUDGE,
        "--cassette",
        str(THIN / "cassettes" / "fixtures.oscas"),
        "--record-mode",
        "replay",
    ]
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT, timeout=300
    )


def test_thin_summaries_replay_to_their_goldens_and_score_as_thin(tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    proc = _replay(out)
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes() == (THIN / "golden" / "results.jsonl").read_bytes()
    header, *lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert header["recipe"]["model"] == "qwen2.5-coder-1.5b"
    assert len(lines) == 4
    for line in lines:
        assert line["status"] == "ok"
        assert line["score"] <= 0.3, (line["id"], line["axes"])
        assert line["limiting_axis"] == "coverage", (line["id"], line["axes"])
        assert line["axes"]["alignment"] >= 0.5, (line["id"], line["axes"])
