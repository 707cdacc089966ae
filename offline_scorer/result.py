"""The scorer's result, serialised with Mastra's field names and a fixed key order."""

from __future__ import annotations

import json
import json.encoder
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
        """Stable bytes: fixed key order, UTF-8 text kept as is, two-space indent, no newline.

        The bytes are exactly `json.dumps(self.to_dict(), ensure_ascii=False, indent=2)` (a
        property test holds them to it); it is laid out here because the standard library's
        indenting encoder is pure Python and was a fifth of the replay time.
        """
        claims = [
            f'{{\n        "claim": {_text(c.claim)},\n        "supported": {_BOOL[c.supported]},'
            f'\n        "reason": {_text(c.reason)}\n      }}'
            for c in self.preprocess_step_result.alignment
        ]
        verdicts = [
            f'{{\n        "question": {_text(v.question)},'
            f'\n        "answered": {_BOOL[v.answered]},'
            f'\n        "reason": {_text(v.reason)}\n      }}'
            for v in self.analyze_step_result.coverage
        ]
        questions = [_text(q) for q in self.preprocess_step_result.questions]
        return (
            f'{{\n  "score": {_number(self.score)},\n  "reason": {_text(self.reason)},\n'
            f'  "preprocessStepResult": {{\n    "alignment": {_array(claims)},\n'
            f'    "questions": {_array(questions)}\n  }},\n'
            f'  "analyzeStepResult": {{\n    "coverage": {_array(verdicts)}\n  }}\n}}'
        )


_text = json.encoder.encode_basestring  # what json.dumps(ensure_ascii=False) uses for str
_number = json.JSONEncoder().encode
_BOOL = {True: "true", False: "false"}


def _array(items: list[str]) -> str:
    """A JSON array of already-encoded items, at the third nesting level (indent 4)."""
    if not items:
        return "[]"
    return "[\n      " + ",\n      ".join(items) + "\n    ]"


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
