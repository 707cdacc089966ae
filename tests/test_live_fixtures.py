"""The fixture evaluations, recorded live on the real default GGUF, then replayed without it.

One live pass (`scripts/record-fixtures`, the same script that made the committed fixtures) is
shared by every assertion here; it is the slowest part of the suite (about 15 s per pair on
2 cores). The replays then prove the cassette alone reproduces every byte.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass

import pytest

from offline_scorer.assembly.open import pinned_identity
from offline_scorer.cassette.judge import CassetteJudge, RecordMode
from offline_scorer.judging.protocol import Completion, JudgeRequest, as_completion
from offline_scorer.models.registry import load_registry
from offline_scorer.scorers.summarization.result import RESULT_JSON_SCHEMA
from offline_scorer.scorers.summarization.scorer import SummarizationScorer
from tests.conftest import FIXTURES, ROOT, block_imports_code, replay_env
from tests.helpers import assert_same_recording, recorded_options

pytestmark = pytest.mark.live
jsonschema = pytest.importorskip("jsonschema")


@dataclass
class Exchange:
    request: JudgeRequest
    text: str


class Tap:
    """Passes requests on and keeps every exchange."""

    def __init__(self, inner):
        self.inner = inner
        self.exchanges: list[Exchange] = []

    def complete(self, request: JudgeRequest) -> Completion:
        completion = as_completion(self.inner.complete(request))
        self.exchanges.append(Exchange(request, completion.text))
        return completion


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    """Record every fixture pair live into a fresh cassette and golden files."""
    pytest.importorskip("llama_cpp", reason="the live extra is not installed")
    out = tmp_path_factory.mktemp("recorded")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "record-fixtures"), "--out", str(out)],
        capture_output=True,
        timeout=1800,
    )
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    return out


@pytest.fixture(scope="module")
def runs(recording, fixture_pairs):
    """(pair, exchanges, result) per pair, replayed in-process from the live recording."""
    identity = pinned_identity(load_registry().resolve("default"))
    cassette = recording / "cassettes" / "fixtures.oscas"
    judge = CassetteJudge(cassette, mode=RecordMode.REPLAY, identity=identity)
    out = []
    for pair in fixture_pairs:
        tap = Tap(judge)
        result = SummarizationScorer(tap, recorded_options(cassette)).score_texts(
            pair["source"], pair["summary"]
        )
        out.append((pair, tap.exchanges, result))
    assert judge.hits == 3 * len(fixture_pairs) and judge.recorded == 0
    return out


def test_at_least_ten_pairs(fixture_pairs):
    assert len(fixture_pairs) >= 10


def test_exactly_three_calls_per_evaluation(recording, fixture_pairs):
    from offline_scorer.cassette.store.container import CassetteFile

    with CassetteFile(recording / "cassettes" / "fixtures.oscas", create=False) as cas:
        steps = [payload["step"] for _, payload in cas.iter_exchanges()]
    assert steps == ["preprocess", "analyze", "reason"] * len(fixture_pairs)


def test_every_structured_output_matches_its_schema(runs):
    checked = 0
    for _pair, exchanges, _ in runs:
        for exchange in exchanges:
            data = json.loads(exchange.text)  # raises on broken JSON
            jsonschema.validate(data, exchange.request.output_schema)
            checked += 1
    assert checked == 3 * len(runs)


def test_coverage_verdicts_echo_the_asked_questions_in_order(runs):
    for pair, exchanges, result in runs:
        asked = list(result.preprocess_step_result.questions[:10])
        raw = json.loads(exchanges[1].text)["coverage"]
        assert [v["question"] for v in raw] == asked, pair["id"]


def _analyze_text_without_questions(exchanges) -> str:
    """The coverage prompt minus the questions, which the judge drew from the source itself."""
    text = exchanges[1].request.text()
    for question in json.loads(exchanges[0].text)["questions"]:
        text = text.replace(question, "")
    return text


def test_coverage_prompt_never_contains_the_source(runs):
    for pair, exchanges, _ in runs:
        assert pair["summary"] in exchanges[1].request.text()
        analyze = _analyze_text_without_questions(exchanges).replace(pair["summary"], "")
        sentences = [s.strip() for s in pair["source"].replace("\n", " ").split(". ")]
        for sentence in (s for s in sentences if len(s) > 20):
            assert sentence not in analyze, (pair["id"], sentence)


def test_distinctive_source_word_never_reaches_the_coverage_prompt(runs):
    words = {"01": "Quillmarsh", "04": "Veskerholt", "09": "Skelvin", "12": "Brindlecombe"}
    for pair, exchanges, _ in runs:
        word = words.get(pair["id"][:2])
        if word:
            assert word in exchanges[0].request.text()
            assert word not in _analyze_text_without_questions(exchanges)


def test_results_validate_against_the_result_schema(runs):
    for _, _, result in runs:
        jsonschema.validate(json.loads(result.to_json()), RESULT_JSON_SCHEMA)
        assert 0 <= result.score <= 1
        assert result.reason.startswith(f"Score {result.score!r} of 1:")


def test_replay_in_a_fresh_process_without_runtime_or_model_is_byte_identical(
    recording, fixture_pairs, tmp_path
):
    code = block_imports_code("llama_cpp", "llguidance") + (
        "import runpy, sys\n"
        "sys.argv = ['replay_worker', sys.argv[1], sys.argv[2]]\n"
        "runpy.run_path('tests/replay_worker.py', run_name='__main__')\n"
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            str(recording / "cassettes" / "fixtures.oscas"),
            str(FIXTURES / "pairs.jsonl"),
        ],
        capture_output=True,
        env=replay_env(tmp_path),
        cwd=ROOT,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    lines = [json.loads(line) for line in proc.stdout.decode().splitlines()]
    assert lines[-1] == {"runtime_modules": []}
    replayed = {line["id"]: line["json"] + "\n" for line in lines[:-1]}
    assert list(replayed) == [p["id"] for p in fixture_pairs]
    for pair_id, text in replayed.items():
        recorded = (recording / "golden" / f"{pair_id}.json").read_text(encoding="utf-8")
        golden = (FIXTURES / "golden" / f"{pair_id}.json").read_text(encoding="utf-8")
        assert text == recorded, pair_id
        assert text == golden, pair_id


def test_recording_again_gives_the_committed_recording(recording):
    """The same exchanges, requests and answers; on the hardware that recorded them, the same
    bytes (`assert_same_recording`)."""
    fresh = recording / "cassettes" / "fixtures.oscas"
    assert_same_recording(fresh, FIXTURES / "cassettes" / "fixtures.oscas")


def test_eval_replay_without_runtime_or_model_gives_the_same_results_file(recording, tmp_path):
    from tests.test_evals import eval_cli

    out = tmp_path / "replayed.jsonl"
    proc = eval_cli(
        "eval",
        str(FIXTURES / "pairs.jsonl"),
        "--out",
        str(out),
        "--record-mode",
        "replay",
        "--cassette",
        str(recording / "cassettes" / "fixtures.oscas"),
        env=replay_env(tmp_path),
    )
    assert proc.returncode == 0, proc.stderr.decode()
    recorded = (recording / "golden" / "results.jsonl").read_bytes()
    assert out.read_bytes() == recorded
    assert recorded == (FIXTURES / "golden" / "results.jsonl").read_bytes()
