"""Mastra's own `createSummarizationScorer` (from npm, run by node 22) against `serve` on the
shipped GGUF, in both of Mastra's configurations (its default, the schema inline in the prompt,
on all 12 fixture pairs; the schema sent beside the prompt as OpenAI's `response_format`, on the
first 3): every step answered once and schema-valid, claims and questions taken
from the pair, the run recorded, and a replay with the model runtime import-blocked printing
byte-identical results."""

from __future__ import annotations

from pathlib import Path

import pytest

from offline_scorer.cassette.store.file import CassetteFile
from offline_scorer.models.registry import load_registry
from offline_scorer.scorers.summarization.grounding import claims_of, question_candidates
from offline_scorer.serve.mastra import served_options
from offline_scorer.serve.mastra_reason import given_in, reason_problem, written_reason
from tests.conftest import MECHANICS_MODEL
from tests.mastra_client import judge_executions, load_fixture_pairs, require_node, run_score
from tests.serve_process import free_port, serving

# Words of the worked examples in Mastra's prompts (tests/data/mastra/README.md) that no
# fixture pair contains: an answer holding one copied the example instead of judging the pair.
EXAMPLE_WORDS = ("Company Y", "ML model", "99%", "95%", "Seattle", "quantum", "ABC Corp")


# How many fixture pairs each configuration is run on live (None: all 12).
LIVE_PAIRS = {"inline": None, "native": 3}


@pytest.mark.live
@pytest.mark.parametrize("mode", sorted(LIVE_PAIRS))
def test_mastra_scorer_through_serve_records_and_replays_byte_identically(
    tmp_path: Path, mode: str
) -> None:
    require_node()
    pairs = load_fixture_pairs()[: LIVE_PAIRS[mode]]
    cassette = tmp_path / f"mastra-{mode}.oscas"
    args = ("--cassette", str(cassette), "--threads", "2")
    port = free_port()  # the same URL both times: score.mjs prints the URLs it called
    with serving(tmp_path, "--record-mode", "record", *args, port=port) as live:
        first = run_score(live.base_url, pairs, mode=mode)
    with CassetteFile.open(cassette, create=False) as stored:
        assert stored.exchange_count == 3 * len(pairs)
    with serving(
        tmp_path, "--record-mode", "replay", *args, block_runtime=True, port=port
    ) as replay:
        second = run_score(replay.base_url, pairs, mode=mode)
    assert second.lines == first.lines  # each pair's whole line, result JSON included

    split = served_options(load_registry().resolve(MECHANICS_MODEL)).clock_always_ends
    for line, pair in zip(first.results, pairs, strict=True):
        assert line["id"] == pair["id"]
        assert line["http_requests"] == 3  # no fallback request: schema-valid the first time
        for step, executions in judge_executions(line).items():
            assert [e["attemptCount"] for e in executions] == [1], step
        result = line["result"]
        claims = [a["claim"] for a in result["preprocessStepResult"]["alignment"]]
        questions = result["preprocessStepResult"]["questions"]
        assert claims == list(claims_of(pair["summary"], clock_always_ends=split))
        candidates = set(question_candidates(pair["source"], clock_always_ends=split))
        assert questions and set(questions) <= candidates
        coverage = result["analyzeStepResult"]["coverage"]
        assert [v["question"] for v in coverage] == questions
        assert result["reason"].startswith(f"The score is {result['score']} because ")
        said = " ".join([*claims, *questions, result["reason"]])
        said += " ".join(
            v["reason"] for v in [*coverage, *result["preprocessStepResult"]["alignment"]]
        )
        assert not [w for w in EXAMPLE_WORDS if w in said and w not in pair["source"]]
    _assert_reasons_are_vetted(cassette, pairs, first.results)


def _assert_reasons_are_vetted(cassette: Path, pairs: list[dict], results: list[dict]) -> None:
    """The reason Mastra prints passes the library's reader checks against the result its
    prompt gave, or is the product's sentence for that result, marked as such."""
    style = served_options(load_registry().resolve(MECHANICS_MODEL)).free_text
    with CassetteFile.open(cassette, create=False) as stored:
        prompts = [
            stored.blob_text(payload["request"]["messages"][-1]["content"])  # type: ignore[index]
            for _, payload in stored.iter_exchanges()
            if payload["step"] == "reason"
        ]
    for line, pair in zip(results, pairs, strict=True):
        reason = line["result"]["reason"]
        prompt = next(p for p in prompts if f"\n{pair['summary']}\n\nScore: " in p)
        given = given_in(prompt, style)
        assert given is not None
        marked = f"{written_reason(given)} (Written by offline-scorer in place of the judge's"
        assert reason_problem(given, reason) is None or reason.startswith(marked), reason
