"""Source and summary resolution, options, reasons and malformed input, through ScriptedJudge."""

from __future__ import annotations

import json

import pytest

from offline_scorer import (
    ConfigError,
    GenerationError,
    InputError,
    create_summarization_scorer,
    extract_tool_results,
)
from offline_scorer.scorers.summarization.result import RESULT_JSON_SCHEMA
from offline_scorer.testing import ScriptedJudge
from tests.helpers import SOURCE, SUMMARY, mastra_run, score_of, scripted

T, F = True, False


def calls_by_step(judge: ScriptedJudge) -> dict[str, str]:
    return dict(judge.calls)


def test_coverage_call_never_sees_the_source():
    judge = scripted([T], 2, [T, T])
    score_of(judge)
    calls = calls_by_step(judge)
    assert "Quillmarsh" in calls["preprocess"]
    assert SUMMARY in calls["analyze"]
    assert "Quillmarsh" not in calls["analyze"]
    for fragment in ("9:00", "3 May 2021"):
        assert fragment not in calls["analyze"]


def test_source_option_replaces_the_first_user_message():
    judge = scripted([T], 1, [T])
    scorer = create_summarization_scorer(model=judge, options={"source": "Option Zelkova text."})
    scorer.run(mastra_run())
    assert "Option Zelkova text." in calls_by_step(judge)["preprocess"]
    assert "Quillmarsh" not in calls_by_step(judge)["preprocess"]


def test_source_extractor_wins_over_source_option():
    judge = scripted([T], 1, [T])
    seen = []

    def extractor(run_input, output):
        seen.append((run_input, output))
        return "Extracted Marrowgate text."

    scorer = create_summarization_scorer(
        model=judge, options={"source": "Option text.", "sourceExtractor": extractor}
    )
    run = mastra_run()
    scorer.run(run)
    assert seen == [(run["input"], run["output"])]
    text = calls_by_step(judge)["preprocess"]
    assert "Extracted Marrowgate text." in text
    assert "Option text." not in text


def test_tool_call_turn_without_text_is_skipped_for_the_summary():
    judge = scripted([T], 1, [T])
    output = [
        {"id": "a1", "role": "assistant", "content": "The real summary."},
        {
            "id": "a2",
            "role": "assistant",
            "content": "",
            "toolInvocations": [
                {
                    "toolCallId": "c1",
                    "toolName": "log",
                    "args": {},
                    "result": "ok",
                    "state": "result",
                }
            ],
        },
    ]
    scorer = create_summarization_scorer(model=judge)
    scorer.run(
        {
            "input": {"inputMessages": [{"id": "u", "role": "user", "content": SOURCE}]},
            "output": output,
        }
    )
    assert "The real summary." in calls_by_step(judge)["analyze"]


def test_tool_results_helper_feeds_a_source_extractor():
    document = "Fetched Thornbury report: 12 bridges inspected."
    output = [
        {
            "id": "a1",
            "role": "assistant",
            "content": "",
            "toolInvocations": [
                {"toolCallId": "c0", "toolName": "search", "args": {}, "state": "call"},
                {
                    "toolCallId": "c1",
                    "toolName": "fetchDocument",
                    "args": {"id": 7},
                    "result": document,
                    "state": "result",
                },
            ],
        },
        {"id": "a2", "role": "assistant", "content": "Twelve bridges were inspected."},
    ]
    results = extract_tool_results(output)
    assert [(r.name, r.result, r.args, r.tool_call_id) for r in results] == [
        ("fetchDocument", document, {"id": 7}, "c1")
    ]

    def from_tool(run_input, run_output):
        return next(r.result for r in extract_tool_results(run_output) if r.name == "fetchDocument")

    judge = scripted([T], 1, [T])
    scorer = create_summarization_scorer(model=judge, options={"source_extractor": from_tool})
    scorer.run({"input": {"inputMessages": []}, "output": output})
    calls = calls_by_step(judge)
    assert document in calls["preprocess"]
    assert "Twelve bridges were inspected." in calls["analyze"]


def test_plain_strings_and_content_parts_are_accepted():
    judge = scripted([T], 1, [T])
    scorer = create_summarization_scorer(model=judge)
    scorer.run(
        {
            "input": "Plain Ulverston source.",
            "output": [{"role": "assistant", "content": [{"type": "text", "text": "Parts."}]}],
        }
    )
    calls = calls_by_step(judge)
    assert "Plain Ulverston source." in calls["preprocess"]
    assert "Parts." in calls["analyze"]


def test_no_user_message_means_empty_source():
    judge = scripted([T], 0, [])
    scorer = create_summarization_scorer(model=judge)
    result = scorer.run(
        {
            "input": {"inputMessages": [{"id": "s", "role": "system", "content": "sys"}]},
            "output": "Sum.",
        }
    )
    assert result.score == 0
    assert "no questions" in result.reason


@pytest.mark.parametrize("bad", [0, -3])
def test_max_questions_below_one_raises_at_construction(bad):
    judge = scripted([T], 1, [T])
    with pytest.raises(ConfigError, match="max_questions must be a whole number, at least 1"):
        create_summarization_scorer(model=judge, options={"max_questions": bad})
    assert judge.calls == []


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"maxQuestions": 2.5}, "whole number"),
        ({"max_questions": True}, "whole number"),
        ({"scale": 0}, "scale must be a finite number > 0, got 0"),
        ({"scale": float("nan")}, "finite"),
        ({"scale": "2"}, "finite number"),
        ({"maxquestions": 3}, "unknown scorer option 'maxquestions'"),
        ({"max_questions": 3, "maxQuestions": 4}, "given twice"),
        ({"source": 3}, "source must be a string"),
        ({"source_extractor": "nope"}, "callable"),
    ],
)
def test_bad_options_fail_at_construction(options, message):
    with pytest.raises(ConfigError, match=message):
        create_summarization_scorer(model=scripted([T], 1, [T]), options=options)


def test_camel_case_aliases_work():
    judge = scripted([T], 3, [T, F, F])
    result = create_summarization_scorer(model=judge, options={"maxQuestions": 1}).run(mastra_run())
    assert result.score == 1


def test_model_must_be_a_judge():
    with pytest.raises(TypeError, match="complete"):
        create_summarization_scorer(model="not a judge")


def test_reason_states_numbers_limiting_axis_and_unsupported_claims():
    judge = scripted(
        [T, F], 2, [T, T], reason="Alignment is limited because the claim is invented."
    )
    result = score_of(judge)
    assert result.reason.startswith(
        "Score 0.5 of 1: alignment 0.5 (1 of 2 claims supported), coverage 1 (2 of 2 "
        "questions answered). Alignment limits the score."
    )
    assert 'Unsupported claims: "claim 1".' in result.reason
    assert result.reason.endswith(
        "Judge's explanation: Alignment is limited because the claim is invented."
    )
    reason_call = calls_by_step(judge)["reason"]
    assert "SCORE: 0.5 of 1 (alignment 0.5, coverage 1)" in reason_call
    assert "LIMITING AXIS: alignment" in reason_call


def test_reason_names_unanswered_questions_when_coverage_limits():
    result = score_of(scripted([T], 4, [T, F, T, F], reason="It omits facts."))
    assert "coverage 0.5 (2 of 4 questions answered)" in result.reason
    assert "Coverage limits the score." in result.reason
    assert 'Unanswered questions: "Is fact 1 true?"; "Is fact 3 true?".' in result.reason


def test_reason_for_equal_axes():
    full = score_of(scripted([T], 1, [T]))
    assert "Neither axis limits the score." in full.reason
    half = score_of(scripted([T, F], 2, [T, F]))
    assert "Both axes limit the score equally." in half.reason
    assert "Unsupported claims" in half.reason and "Unanswered questions" in half.reason


def test_empty_summary_scores_zero_and_says_why():
    judge = ScriptedJudge(
        questions=["Did it happen?"],
        coverage=[
            {"question": "Did it happen?", "answered": False, "reason": "The summary is empty."}
        ],
        reason="There is nothing to judge.",
    )
    scorer = create_summarization_scorer(model=judge)
    result = scorer.run(mastra_run(summary=""))
    assert result.score == 0
    assert "the summary yields no claims to judge" in result.reason
    assert [step for step, _ in judge.calls] == ["preprocess", "analyze", "reason"]


def test_to_json_uses_spec_names_in_a_stable_order():
    result = score_of(scripted([T, F], 2, [T, F]))
    data = json.loads(result.to_json())
    assert list(data) == [
        "score",
        "reason",
        "preprocessStepResult",
        "analyzeStepResult",
        "verdictProbabilities",
        "textAuthors",
    ]
    assert list(data["preprocessStepResult"]) == ["alignment", "questions"]
    assert list(data["preprocessStepResult"]["alignment"][0]) == ["claim", "supported", "reason"]
    assert list(data["analyzeStepResult"]["coverage"][0]) == ["question", "answered", "reason"]
    again = score_of(scripted([T, F], 2, [T, F]))
    assert again.to_json() == result.to_json()
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(data, RESULT_JSON_SCHEMA)


@pytest.mark.parametrize(
    ("run", "message"),
    [
        ("just a string", "a run must be an object"),
        ({"input": "x"}, "has no 'output'"),
        ({"input": "x", "output": 42}, "run output must be a list of messages"),
        ({"input": "x", "output": [42]}, r"run output\[0\] must be a message object"),
        ({"input": "x", "output": [{"content": "hi"}]}, "has no 'role'"),
        ({"input": "x", "output": [{"role": "assistant", "content": 5}]}, "'content' must be"),
        ({"input": {"messages": []}, "output": "s"}, "inputMessages"),
        ({"input": {"inputMessages": "nope"}, "output": "s"}, "must be a list of messages"),
        (
            {
                "input": "x",
                "output": [
                    {"role": "assistant", "content": "s", "toolInvocations": [{"state": "result"}]}
                ],
            },
            None,
        ),
    ],
)
def test_malformed_runs_are_clear_input_errors(run, message):
    scorer = create_summarization_scorer(model=scripted([T], 1, [T]))
    if message is None:  # tool invocations are only read by extract_tool_results
        with pytest.raises(InputError, match="toolName"):
            extract_tool_results(run["output"])
        return
    with pytest.raises(InputError, match=message):
        scorer.run(run)


def test_extractor_failures_are_input_errors():
    def broken(run_input, output):
        raise KeyError("document")

    scorer = create_summarization_scorer(
        model=scripted([T], 1, [T]), options={"source_extractor": broken}
    )
    with pytest.raises(InputError, match="source_extractor raised KeyError"):
        scorer.run(mastra_run())
    scorer = create_summarization_scorer(
        model=scripted([T], 1, [T]), options={"source_extractor": lambda i, o: 3}
    )
    with pytest.raises(InputError, match="must return a string"):
        scorer.run(mastra_run())


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"preprocess": "{not json"}, "preprocess: the judge's answer does not fit"),
        ({"preprocess": '{"alignment":[],"questions":[],"extra":1}'}, "extra"),
        (
            {"analyze": '{"coverage":[{"question":"q","answered":"yes","reason":"r"}]}'},
            "analyze: the judge's answer does not fit",
        ),
        ({"reason": '{"explanation":'}, "reason: "),
    ],
)
def test_malformed_judge_answers_fail_the_evaluation(raw, message):
    judge = ScriptedJudge(
        alignment=[{"claim": "c", "supported": True, "reason": "r"}], questions=["q"], raw=raw
    )
    with pytest.raises(GenerationError, match=message):
        create_summarization_scorer(model=judge).run(mastra_run())
