"""The Mastra client harness and the facts tests/data/mastra/README.md states about what Mastra
sends, checked two ways: against the committed captures (no node needed), and by running the real
@mastra/evals scorer (node 22 from scripts/setup-node) against the capture server, which also
proves the committed captures are still what the pinned Mastra sends."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.mastra_client import (
    CLIENT_DIR,
    judge_executions,
    load_fixture_pairs,
    require_node,
    run_score,
)

DATA = Path(__file__).resolve().parent / "data" / "mastra" / "requests"
CAPTURE = CLIENT_DIR / "capture" / "capture_server.py"
PAIR = load_fixture_pairs(["01-harbor-bridge"])[0]

STEP1_HEAD = "Complete two independent parts.\n\nPart 1 (alignment): "
STEP2_HEAD = (
    "Decide whether each question can be answered from the summary below. The summary is the "
    "only evidence you have, and you must not rely on prior knowledge.\n\nSummary:\n"
)
STEP3_HEAD = "Explain the summarization score for the given summary.\n\nSource Text:\n"
SCHEMA_HEAD = "Return your response as JSON matching this schema:\n\n"
SCHEMA_TAIL = "\n\nReturn only valid JSON. Do not include markdown or explanatory text."
SYSTEM_HEAD = "You are a strict summarization evaluator."
FALLBACK_TAIL = "\nYou MUST answer with a JSON object that matches the JSON schema above."


def body(name: str) -> dict:
    return json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))


def user_parts(request: dict) -> list[str]:
    content = request["messages"][1]["content"]
    if isinstance(content, str):
        return [content]
    assert all(part["type"] == "text" for part in content)
    return [part["text"] for part in content]


def split_step1(prompt: str) -> tuple[str, str]:
    assert prompt.startswith(STEP1_HEAD) and prompt.endswith("\n\nJSON:\n")
    middle = prompt[: -len("\n\nJSON:\n")].split("\n}\n\nSource Text:\n", 1)[1]
    source, summary = middle.rsplit("\n\nSummary:\n", 1)
    return source, summary


def split_step2(prompt: str) -> tuple[str, list[str]]:
    assert prompt.startswith(STEP2_HEAD)
    summary, rest = prompt[len(STEP2_HEAD) :].split("\n\nNumber of questions: ", 1)
    count, rest = rest.split("\n\nQuestions:\n", 1)
    block = rest.split('\n\nSet "answered" to true only', 1)[0]
    questions = [line.split("] ", 1)[1] for line in block.split("\n") if line]
    assert [line.split("]")[0] for line in block.split("\n")] == [
        f"[{i}" for i in range(len(questions))
    ]
    assert int(count) == len(questions)
    return summary, questions


def split_step3(prompt: str) -> tuple[str, str]:
    assert prompt.startswith(STEP3_HEAD)
    head = prompt[len(STEP3_HEAD) :].split("\n\nScore: ", 1)[0]
    source, summary = head.rsplit("\n\nSummary:\n", 1)
    return source, summary


@pytest.mark.parametrize("mode", ["inline", "native"])
def test_captured_requests_hold_the_documented_prompts(mode: str) -> None:
    steps = [body(f"{mode}-{i}") for i in (1, 2, 3)]
    for request in steps:
        assert request["stream"] is True
        assert request["stream_options"] == {"include_usage": True}
        assert not {"temperature", "top_p", "seed", "max_tokens", "stop"} & set(request)
        assert [m["role"] for m in request["messages"]] == ["system", "user"]
        assert request["messages"][0]["content"].startswith(SYSTEM_HEAD)
    first, second, third = (user_parts(r) for r in steps)
    if mode == "inline":
        # The schema is appended as a second text part to the structured steps only.
        assert len(first) == len(second) == 2 and len(third) == 1
        for parts, request in ((first, steps[0]), (second, steps[1])):
            assert "response_format" not in request
            assert parts[1].startswith(SCHEMA_HEAD) and parts[1].endswith(SCHEMA_TAIL)
            schema = json.loads(parts[1][len(SCHEMA_HEAD) : -len(SCHEMA_TAIL)])
            assert schema["additionalProperties"] is False
    else:
        assert isinstance(steps[0]["messages"][1]["content"], str)
        for request, key in ((steps[0], "alignment"), (steps[1], "coverage")):
            fmt = request["response_format"]
            assert fmt["type"] == "json_schema"
            assert fmt["json_schema"]["name"] == "response" and fmt["json_schema"]["strict"]
            assert key in fmt["json_schema"]["schema"]["properties"]
        assert "response_format" not in steps[2]
    assert split_step1(first[0]) == (PAIR["source"], PAIR["summary"])
    summary, questions = split_step2(second[0])
    assert summary == PAIR["summary"] and questions
    assert split_step3(third[0]) == (PAIR["source"], PAIR["summary"])


@pytest.mark.parametrize("mode", ["inline", "native"])
def test_captured_fallback_moves_the_schema_to_the_system_message(mode: str) -> None:
    request = body(f"{mode}-fallback-1")
    assert "response_format" not in request
    system = request["messages"][0]["content"]
    assert system.startswith(SYSTEM_HEAD) and system.endswith(FALLBACK_TAIL)
    schema = json.loads(system.split("\n\nJSON schema:\n", 1)[1][: -len(FALLBACK_TAIL)])
    assert set(schema["properties"]) == {"alignment", "questions"}
    assert split_step1(user_parts(request)[0]) == (PAIR["source"], PAIR["summary"])


@pytest.fixture
def capture_server(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[tuple[str, Path]]:
    bad_first = getattr(request, "param", 0)
    out = tmp_path / "captured"
    proc = subprocess.Popen(
        [sys.executable, str(CAPTURE), str(out), "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "CAPTURE_BAD_FIRST": str(bad_first)},
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("listening on "), line
        yield line.split()[-1], out
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.parametrize("mode", ["inline", "native"])
def test_mastra_runs_three_requests_and_reruns_identically(
    mode: str, capture_server: tuple[str, Path]
) -> None:
    require_node()
    url, out = capture_server
    pairs = load_fixture_pairs(["01-harbor-bridge", "02-seed-library"])
    first = run_score(url, pairs, mode=mode, model="judge")
    second = run_score(url, pairs, mode=mode, model="judge")
    assert first.lines == second.lines
    for line in first.results:
        assert line["http_requests"] == 3
        assert all(r["status"] == 200 for r in line["requests"])
        executions = judge_executions(line)
        assert set(executions) == {"preprocess", "analyze", "generateReason"}
        assert all(e["attemptCount"] == 1 for ex in executions.values() for e in ex)
        assert line["volatile"]  # runId and durations were dropped, not compared
        assert 0 <= line["result"]["score"] <= 1 and line["result"]["reason"]
    # Pair 01 went first: the bodies Mastra sends now are the committed captures.
    for i in (1, 2, 3):
        got = json.loads((out / f"{i:03d}.json").read_text(encoding="utf-8"))
        assert got == body(f"{mode}-{i}"), f"Mastra now sends a different {mode}-{i}.json"


@pytest.mark.parametrize("capture_server", [1], indirect=True)
def test_request_count_shows_mastras_fallback_retry(capture_server: tuple[str, Path]) -> None:
    require_node()
    url, _ = capture_server
    run = run_score(url, [PAIR], mode="inline", model="judge")
    line = run.results[0]
    assert line["http_requests"] == 4
    assert judge_executions(line)["preprocess"][0]["attemptCount"] == 2
