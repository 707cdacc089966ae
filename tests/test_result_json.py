"""Score output bytes: the laid-out `to_json` must be exactly the standard library's encoding."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from offline_scorer.scorers.summarization.result import (
    AnalyzeStepResult,
    PreprocessStepResult,
    ScorerResult,
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


@settings(max_examples=300, deadline=None)
@given(claims, st.lists(texts, max_size=4), verdicts, scores, texts)
def test_to_json_is_the_standard_encoding(alignment, questions, coverage, score, reason) -> None:
    outcome = score_verdicts(alignment, [v.question for v in coverage], coverage, 1)
    result = ScorerResult(
        score=score,
        reason=reason,
        preprocess_step_result=PreprocessStepResult(
            alignment=tuple(alignment), questions=tuple(questions)
        ),
        analyze_step_result=AnalyzeStepResult(coverage=tuple(coverage)),
        outcome=outcome,
    )
    assert result.to_json() == json.dumps(result.to_dict(), ensure_ascii=False, indent=2)
