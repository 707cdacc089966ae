"""Replays the fixture pairs from a cassette and prints one JSON result per line.

Run as a subprocess by the tests, with the model runtime blocked and the model file absent, to
prove that replay needs nothing but the cassette.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from offline_scorer.assembly.open import pinned_identity
from offline_scorer.cassette.judge import CassetteJudge, RecordMode
from offline_scorer.models.registry import load_registry
from offline_scorer.scorers.summarization.scorer import SummarizationScorer
from tests.helpers import recorded_options


def main(cassette: str, pairs_path: str) -> None:
    spec = load_registry().resolve("default")
    identity = pinned_identity(spec)
    assert identity is not None
    judge = CassetteJudge(cassette, mode=RecordMode.REPLAY, identity=identity)
    scorer = SummarizationScorer(judge, recorded_options(Path(cassette)))
    with open(pairs_path, encoding="utf-8") as handle:
        for line in handle:
            pair = json.loads(line)
            result = scorer.score_texts(pair["source"], pair["summary"])
            sys.stdout.write(json.dumps({"id": pair["id"], "json": result.to_json()}) + "\n")
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("llama_cpp", "llguidance"))
    sys.stdout.write(json.dumps({"runtime_modules": loaded}) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
