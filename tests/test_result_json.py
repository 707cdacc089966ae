"""Score output bytes: the laid-out `to_json` must be exactly the standard library's encoding."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from offline_scorer.scorers.summarization.result import (
    AnalyzeStepResult,
    PreprocessStepResult,
    ScorerResult,
    VerdictProbabilities,
)
from offline_scorer.scorers.summarization.rule import score_verdicts
from offline_scorer.scorers.summarization.schemas import ClaimVerdict, QuestionVerdict

texts = st.text(max_size=30)  # any code point, quotes, backslashes and control characters
claims = st.lists(
    st.builds(ClaimVerdict, claim=texts, supported=st.booleans(), reason=texts), max_size=4
)
verdicts = st.lists(
    st.builds(QuestionVerdict, question=texts, answered=st.booleans(), reason=texts), max_size=4
)
scores = st.one_of(
    st.integers(0, 10**6), st.floats(min_value=0, allow_nan=False, allow_infinity=False)
)


probabilities = st.floats(min_value=0, max_value=1, allow_nan=False)


@settings(max_examples=300, deadline=None)
@given(
    claims,
    st.lists(texts, max_size=4),
    verdicts,
    scores,
    texts,
    st.none() | st.tuples(st.none() | probabilities, st.lists(st.none() | probabilities)),
)
def test_to_json_is_the_standard_encoding(
    alignment, questions, coverage, score, reason, found
) -> None:
    outcome = score_verdicts(alignment, [v.question for v in coverage], coverage, 1)
    extra = None
    if found is not None:  # any floats, tiny ones included, in every float field
        threshold, values = found
        extra = VerdictProbabilities(
            threshold=threshold,
            alignment=tuple((values * 4)[: len(alignment)] + [None] * len(alignment))[
                : len(alignment)
            ],
            coverage=tuple([0.00001] * len(coverage)),
        )
    result = ScorerResult(
        score=score,
        reason=reason,
        preprocess_step_result=PreprocessStepResult(
            alignment=tuple(alignment), questions=tuple(questions)
        ),
        analyze_step_result=AnalyzeStepResult(coverage=tuple(coverage)),
        verdict_probabilities=extra,
        outcome=outcome,
    )
    assert result.to_json() == json.dumps(result.to_dict(), ensure_ascii=False, indent=2)
