"""The coverage question asked alone: one request per question, and its content-free twin.

A one-question request puts the summary first, so that a runtime keeping its prompt prefix
reads it once per evaluation. With `coverage_baseline` the question asks whether the summary
*states* the fact and is also asked of an empty summary ("N/A"): how readily the judge answers
a question whatever the summary says is then taken out of its P(answered) (`baseline`).
"""

from __future__ import annotations

import functools

from offline_scorer.judging.protocol import JudgeRequest
from offline_scorer.scorers.summarization.asking import Asking
from offline_scorer.scorers.summarization.prompts import (
    REQUESTS_KEPT,
    _quotes,
    _request,
    analyze_vocabulary,
    sampling,
)
from offline_scorer.scorers.summarization.schemas import QuestionCheck, _Strict, check_schema

_QUESTION = """Summary:
{summary}

Question:
{question}

Does the summary answer this question? Answer in JSON."""
"""One coverage question judged alone, after the summary. Asked this way, Qwen2.5-Coder-0.5B's
P(answered) gave ROC AUC 0.81 on benchmarks.coverage's set, against 0.57 with every
question in one answer (docs/judges.md)."""

_STATED = """Summary:
{summary}

Question:
{question}

Does the summary itself state this fact? Answer "answered": true only if the summary states \
it; false if the summary leaves it out. Answer in JSON."""
"""The question under `coverage_baseline`. On coverage-dev.jsonl (80 paraphrasing summaries,
880 human-labelled facts) Qwen2.5-Coder-1.5B's P(answered) gave ROC AUC 0.926 asked so and
0.924 with `_QUESTION`; read against the content-free baseline, 0.930 and 0.933, with a
per-summary Pearson out of sample of 0.705 and 0.684 (docs/judges.md)."""


class AnsweredOnly(_Strict):
    """The baseline's answer: a verdict alone (only its P(answered) is used)."""

    answered: bool


EMPTY_SUMMARY = "N/A"
"""The content-free summary of the baseline request: it states no fact."""


@functools.lru_cache(maxsize=REQUESTS_KEPT)
def question_request(
    summary: str, question: str, asking: Asking, threshold: float | None, stated: bool
) -> JudgeRequest:
    """One coverage question's verdict and reason, the summary first; `threshold` as in
    `analyze_request` (per question: `coverage_baseline` carries it to each question's scale);
    with quoted evidence, a question answered is given the summary sentence that answers it as
    its reason (`check_schema`); `stated` asks whether the summary states the fact (`_STATED`,
    the wording `coverage_baseline` was measured with)."""
    user = (_STATED if stated else _QUESTION).format(summary=summary, question=question)
    vocabulary = analyze_vocabulary(summary, (question,))
    quotes = _quotes(question, summary, "summary", asking.quote_evidence)
    schema = check_schema(QuestionCheck, vocabulary, asking.style, quotes)
    settings = sampling("analyze", asking.style, threshold)
    return _request("analyze", user, schema, settings, rules=False)


@functools.lru_cache(maxsize=REQUESTS_KEPT)
def baseline_request(question: str, style: str) -> JudgeRequest:
    """The question asked of the empty summary, verdict only: its P(answered) is the judge's
    leaning to answer this question whatever a summary says."""
    user = _STATED.format(summary=EMPTY_SUMMARY, question=question)
    schema = {k: v for k, v in AnsweredOnly.model_json_schema().items() if k != "description"}
    return _request("analyze", user, schema, sampling("analyze", style), rules=False)
