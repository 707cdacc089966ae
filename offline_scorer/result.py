"""The scorer's result, serialised with Mastra's field names and a fixed key order."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from offline_scorer.schemas import ClaimVerdict, QuestionVerdict
from offline_scorer.scoring import ScoreOutcome


@dataclass(frozen=True)
class PreprocessStepResult:
    alignment: tuple[ClaimVerdict, ...]
    questions: tuple[str, ...]


@dataclass(frozen=True)
class AnalyzeStepResult:
    coverage: tuple[QuestionVerdict, ...]  # exactly one per asked question, by position


@dataclass(frozen=True)
class ScorerResult:
    score: float | int
    reason: str
    preprocess_step_result: PreprocessStepResult
    analyze_step_result: AnalyzeStepResult
    outcome: ScoreOutcome  # derived numbers, for display; not serialised (the spec derives them)

    def to_dict(self) -> dict[str, Any]:
        return {
            "score": self.score,
            "reason": self.reason,
            "preprocessStepResult": {
                "alignment": [
                    {"claim": c.claim, "supported": c.supported, "reason": c.reason}
                    for c in self.preprocess_step_result.alignment
                ],
                "questions": list(self.preprocess_step_result.questions),
            },
            "analyzeStepResult": {
                "coverage": [
                    {"question": v.question, "answered": v.answered, "reason": v.reason}
                    for v in self.analyze_step_result.coverage
                ]
            },
        }

    def to_json(self) -> str:
        """Stable bytes: fixed key order, UTF-8 text kept as is, two-space indent, no newline."""
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=2)


RESULT_JSON_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "additionalProperties": False,
    "required": ["score", "reason", "preprocessStepResult", "analyzeStepResult"],
    "properties": {
        "score": {"type": "number", "minimum": 0},
        "reason": {"type": "string"},
        "preprocessStepResult": {
            "type": "object",
            "additionalProperties": False,
            "required": ["alignment", "questions"],
            "properties": {
                "alignment": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["claim", "supported", "reason"],
                        "properties": {
                            "claim": {"type": "string"},
                            "supported": {"type": "boolean"},
                            "reason": {"type": "string"},
                        },
                    },
                },
                "questions": {"type": "array", "items": {"type": "string"}},
            },
        },
        "analyzeStepResult": {
            "type": "object",
            "additionalProperties": False,
            "required": ["coverage"],
            "properties": {
                "coverage": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["question", "answered", "reason"],
                        "properties": {
                            "question": {"type": "string"},
                            "answered": {"type": "boolean"},
                            "reason": {"type": "string"},
                        },
                    },
                }
            },
        },
    },
}
