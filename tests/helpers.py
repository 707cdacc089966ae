"""Builders for scripted judges, shared by the scoring tests."""

from __future__ import annotations

from offline_scorer import create_summarization_scorer
from offline_scorer.testing import ScriptedJudge

SOURCE = "The Quillmarsh ferry left Port Alder at 9:00 on 3 May 2021 with 40 passengers."
SUMMARY = "A ferry left Port Alder with 40 passengers."


def scripted(
    claims: list[bool], questions: int, verdicts: list[bool], reason: str = "Scripted."
) -> ScriptedJudge:
    return ScriptedJudge(
        alignment=[
            {"claim": f"claim {i}", "supported": s, "reason": f"why {i}"}
            for i, s in enumerate(claims)
        ],
        questions=[f"Is fact {i} true?" for i in range(questions)],
        coverage=[
            {"question": f"Is fact {i} true?", "answered": a, "reason": f"because {i}"}
            for i, a in enumerate(verdicts)
        ],
        reason=reason,
    )


def mastra_run(source: str = SOURCE, summary: str = SUMMARY) -> dict:
    return {
        "input": {"inputMessages": [{"id": "u1", "role": "user", "content": source}]},
        "output": [{"id": "a1", "role": "assistant", "content": summary}],
    }


def score_of(judge: ScriptedJudge, **options: object):
    scorer = create_summarization_scorer(model=judge, options=options or None)
    return scorer.run(mastra_run())
