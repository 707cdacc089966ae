"""OpenAI request -> judge request, on the requests Mastra really sent (tests/data/mastra)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from offline_scorer.backends.llama_cpp.schema_source import constraint_source, schema_problem
from offline_scorer.scorers.summarization.grounding import claims_of, question_candidates
from offline_scorer.serve.errors import ApiError
from offline_scorer.serve.inline_schema import inline_schema
from offline_scorer.serve.translate import DEFAULT_MAX_TOKENS, prepare
from offline_scorer.serve.wire import parse_request
from tests.conftest import FIXTURES

REQUESTS = Path(__file__).parent / "data/mastra/requests"
PAIR = json.loads((FIXTURES / "pairs.jsonl").read_text(encoding="utf-8").splitlines()[0])
STEPS = {"1": "preprocess", "2": "analyze", "3": "reason"}


def _captured(name: str) -> dict:
    return json.loads((REQUESTS / f"{name}.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    "name",
    [
        "inline-1",
        "inline-2",
        "inline-3",
        "native-1",
        "native-2",
        "native-3",
        "inline-fallback-1",
        "native-fallback-1",
        "router-inline-1",
    ],
)
def test_every_captured_mastra_request_is_recognised_and_grounded(name: str) -> None:
    body = _captured(name)
    prepared = prepare(parse_request(body))
    request = prepared.request
    assert request.step == STEPS[name[-1]]
    # the model reads what Mastra sent, parts joined by a line break
    sent = [
        m["content"]
        if isinstance(m["content"], str)
        else "\n".join(p["text"] for p in m["content"])
        for m in body["messages"]
    ]
    assert [m.content for m in request.messages] == sent
    schema = request.output_schema
    assert schema is not None
    assert schema_problem(schema) is None
    if request.step == "preprocess" and PAIR["summary"] in sent[-1]:  # the router's is a stub
        alignment = schema["properties"]["alignment"]["prefixItems"]
        assert [a["properties"]["claim"]["const"] for a in alignment] == list(
            claims_of(PAIR["summary"], clock_always_ends=False)
        )
        enum = schema["properties"]["questions"]["items"]["enum"]
        assert enum == list(question_candidates(PAIR["source"], clock_always_ends=False))
        source = constraint_source(schema)
        assert source is not None and source[0] == "gbnf"  # the library's compiler
    if request.step == "reason":
        assert prepared.text_reply
        assert schema["pattern"].startswith("^The\\ score\\ is\\ 0\\.57") or schema[
            "pattern"
        ].startswith("^The score is 0\\.57 because ")


def test_analyze_questions_are_the_listed_ones_in_order() -> None:
    request = prepare(parse_request(_captured("inline-2"))).request
    assert request.output_schema is not None
    items = request.output_schema["properties"]["coverage"]["prefixItems"]
    questions = [i["properties"]["question"]["const"] for i in items]
    text = request.messages[1].content
    assert len(questions) == 7
    assert all(f"[{i}] {q}\n" in text or f"[{i}] {q}\n\n" in text for i, q in enumerate(questions))


def test_an_unrecognised_prompt_keeps_the_schema_it_carries() -> None:
    body = _captured("inline-1")
    body["messages"][1]["content"][0]["text"] = "Summarise the text.\n\nJSON:\n"
    request = prepare(parse_request(body)).request
    assert request.step == "chat"
    assert request.output_schema is not None
    assert request.output_schema == inline_schema(request.messages)
    assert set(request.output_schema["properties"]) == {"alignment", "questions"}
    assert request.sampling.max_tokens == DEFAULT_MAX_TOKENS and request.sampling.cut_at_limit


def test_sampling_fields_that_are_given_enter_the_request() -> None:
    base = {"model": "default", "messages": [{"role": "user", "content": "Hi."}]}
    plain = prepare(parse_request(base)).request.sampling
    budget = prepare(parse_request({**base, "max_tokens": 7})).request.sampling
    assert plain.temperature == 0 and plain.max_tokens == DEFAULT_MAX_TOKENS
    assert budget.max_tokens == 7 and budget != plain
    with pytest.raises(ApiError, match="differ"):
        prepare(parse_request({**base, "max_tokens": 7, "max_completion_tokens": 8}))


def test_json_object_and_text_formats() -> None:
    base = {"model": "default", "messages": [{"role": "user", "content": "Hi."}]}
    as_object = prepare(parse_request({**base, "response_format": {"type": "json_object"}}))
    assert as_object.request.output_schema == {"type": "object"}
    as_text = prepare(parse_request({**base, "response_format": {"type": "text"}}))
    assert as_text.request.output_schema is None


def test_the_served_judges_coverage_threshold_commits_mastras_coverage_verdicts() -> None:
    from offline_scorer.models.registry import load_registry
    from offline_scorer.serve.mastra import served_options

    options = served_options(load_registry().resolve("qwen2.5-coder-0.5b"))
    assert options.free_text == "open" and options.coverage_threshold is not None
    steps = {
        name: prepare(parse_request(_captured(name)), options).request
        for name in ("inline-1", "inline-2", "inline-3")
    }
    assert steps["inline-2"].step == "analyze"
    assert steps["inline-2"].sampling.verdict_threshold == options.coverage_threshold
    assert steps["inline-1"].sampling.verdict_threshold == options.claim_threshold
    assert steps["inline-3"].sampling.verdict_threshold is None
    # a judge whose entry sets none keeps its own threshold for every step
    plain = prepare(parse_request(_captured("inline-2"))).request
    assert plain.sampling.verdict_threshold is None


def test_an_open_style_judges_reason_states_only_the_figures_in_the_words_it_was_given() -> None:
    """Mastra's opening and the axis that limits the score (written from the figures), then
    words of the inputs, the listed claims and questions and the rules; numbers only of the
    figures (0.57 of 1, alignment 1, 3 questions listed) and of the listed lines: neither the
    worked examples' facts nor their counts can be retold."""
    from offline_scorer.scorers.summarization.options import ScorerOptions

    request = prepare(parse_request(_captured("inline-3")), ScorerOptions(free_text="open"))
    schema = request.request.output_schema
    assert request.request.step == "reason" and schema is not None
    pattern = re.compile(schema["pattern"])
    assert pattern.match(
        "The score is 0.57 because coverage was the weaker axis: the summary leaves out 3 "
        "questions, such as whether engineers from Quillmarsh inspected the bridge in January."
    )
    axis = "The score is 0.57 because coverage was the weaker axis"  # written from the figures
    assert pattern.match(f"{axis}: the shuttle will run every 20 minutes.")
    assert not pattern.match("The score is 0.57 because the shuttle will run every 20 minutes.")
    assert not pattern.match(  # the axis that does not limit it
        "The score is 0.57 because alignment was the weaker axis: the shuttle runs."
    )
    assert not pattern.match(f"{axis}: the summary answers 4 of 7 questions.")
    assert not pattern.match(f"{axis}: the summary leaves out the employee count.")  # example's
    assert not pattern.match(f"{axis}: the summary answers \u245b questions.")
    assert not pattern.match("The score is 1 because the summary is faithful.")  # not its score


def test_an_open_style_judges_verdict_reasons_state_only_the_numbers_of_their_inputs() -> None:
    from offline_scorer.scorers.summarization.options import ScorerOptions

    request = prepare(parse_request(_captured("inline-1")), ScorerOptions(free_text="open"))
    reason = _reason_pattern(request.request.output_schema)
    assert reason.match("The source says the bridge was built in 1961.")
    assert not reason.match("The claim about 99 percent accuracy contradicts the source.")


def _reason_pattern(schema: object) -> re.Pattern[str]:
    """The pattern of the first "reason" string anywhere in `schema`."""
    found: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            reason = node.get("properties", {}).get("reason")
            if isinstance(reason, dict) and "pattern" in reason:
                found.append(reason["pattern"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    assert found, "no reason pattern in the schema"
    return re.compile(found[0])


def test_mastras_requests_take_the_entrys_served_options_and_are_never_split() -> None:
    """A threshold measured on one question at a time does not describe P(answered) read from
    Mastra's list of questions; the entry's `served_options` says what does."""
    from offline_scorer.models.registry import ModelSpec
    from offline_scorer.serve.mastra import served_options

    spec = ModelSpec(
        name="judge",
        path="/nowhere/judge.gguf",
        scorers={
            "summarization": {
                "options": {"free_text": "open", "one_by_one": True, "coverage_threshold": 0.8},
                "served_options": {"coverage_threshold": 0.4},
            }
        },
    )
    options = served_options(spec)
    assert (options.free_text, options.one_by_one, options.coverage_threshold) == (
        "open",
        False,
        0.4,
    )


def test_the_served_claim_threshold_commits_mastras_claim_verdicts() -> None:
    from offline_scorer.scorers.summarization.options import ScorerOptions

    options = ScorerOptions(free_text="open", claim_threshold=0.67, coverage_threshold=0.43)
    steps = {
        name: prepare(parse_request(_captured(name)), options).request
        for name in ("inline-1", "inline-2")
    }
    assert steps["inline-1"].sampling.verdict_threshold == 0.67
    assert steps["inline-2"].sampling.verdict_threshold == 0.43


def test_a_guarded_style_judges_reason_opens_with_the_score_and_the_axis_that_limits_it() -> None:
    """A judge in the default style (SmolLM2's) gets the same opening: the given score, then
    the axis Mastra's figures say limits it, then its own words after a separator."""
    request = prepare(parse_request(_captured("native-3")))
    schema = request.request.output_schema
    assert request.request.step == "reason" and schema is not None
    pattern = re.compile(schema["pattern"])
    axis = "The score is 0.57 because coverage was the weaker axis"
    assert pattern.match(f"{axis}: the summary leaves out the shuttle.")
    assert pattern.match(f"{axis}, as the summary leaves out the shuttle.")
    assert not pattern.match(f"{axis}es of the summary are weak.")
    assert not pattern.match("The score is 0.57 because the summary leaves out the shuttle.")
    assert not pattern.match(f"{axis}: the summary answers 4 of 7 questions.")  # no digits
