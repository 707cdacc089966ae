"""One example pair's requests, for the GBNF files in `grammars/` (review and drift checks).

Preprocess and analyze schemas are built from the texts judged (claims are the summary's
sentences, questions the source's), so the files show them for this pair.
"""

from __future__ import annotations

from offline_scorer.judging.protocol import JudgeRequest
from offline_scorer.scorers.summarization.asking import Asking
from offline_scorer.scorers.summarization.options import DEFAULT_MAX_QUESTIONS, ScorerOptions
from offline_scorer.scorers.summarization.prompts import (
    analyze_request,
    preprocess_request,
    reason_request,
)

EXAMPLE_SOURCE = (
    "The ferry to Kellow Island runs twice a day from the north pier. "
    "A return ticket costs twelve euros, and children under five travel free. "
    "In winter storms the morning crossing is often cancelled."
)
EXAMPLE_SUMMARY = "The Kellow Island ferry runs twice daily. Children under ten travel free."


def example_requests() -> dict[str, JudgeRequest]:
    """File stem -> request, for the example pair (two questions asked in the analyze step)."""
    asking = Asking.of(ScorerOptions())  # the default options' requests
    pre = preprocess_request(EXAMPLE_SOURCE, EXAMPLE_SUMMARY, DEFAULT_MAX_QUESTIONS, asking)
    assert pre.output_schema is not None
    questions = list(pre.output_schema["properties"]["questions"]["items"]["enum"][:2])
    return {
        "preprocess-example": pre,
        "analyze-example": analyze_request(EXAMPLE_SUMMARY, questions),
        "reason": reason_request(""),
    }
