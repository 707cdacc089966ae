"""The scorer's result, serialised with Mastra's field names and a fixed key order."""

from __future__ import annotations

import json
import json.encoder
from dataclasses import dataclass
from typing import Any

from offline_scorer.scorers.summarization.rule import ScoreOutcome
from offline_scorer.scorers.summarization.schemas import ClaimVerdict, QuestionVerdict


@dataclass(frozen=True)
class PreprocessStepResult:
    alignment: tuple[ClaimVerdict, ...]
    questions: tuple[str, ...]


@dataclass(frozen=True)
class AnalyzeStepResult:
    coverage: tuple[QuestionVerdict, ...]  # exactly one per asked question, by position


PROBABILITY_PLACES = 4


@dataclass(frozen=True)
class VerdictProbabilities:
    """The judge's P(true) behind each verdict, beside Mastra's fields (which stay as they are).

    `alignment[i]` belongs to claim i, `coverage[i]` to coverage verdict i; None where the judge
    gave no probability (a verdict the judge never returned counts as "not answered").
    `threshold` is the P(true) at or above which the judge committed to `true`.
    """

    threshold: float | None
    alignment: tuple[float | None, ...]
    coverage: tuple[float | None, ...]

    @classmethod
    def aligned(
        cls,
        threshold: float | None,
        supported: tuple[float, ...] | None,
        answered: tuple[float, ...] | None,
        claims: int,
        asked: int,
    ) -> VerdictProbabilities:
        def fit(values: tuple[float, ...] | None, count: int) -> tuple[float | None, ...]:
            kept = [round(v, PROBABILITY_PLACES) for v in (values or ())[:count]]
            return (*kept, *([None] * (count - len(kept))))

        return cls(threshold, fit(supported, claims), fit(answered, asked))

    def to_dict(self) -> dict[str, Any]:
        return {
            "threshold": self.threshold,
            "alignment": list(self.alignment),
            "coverage": list(self.coverage),
        }

    @property
    def min_supported(self) -> float | None:
        """The weakest claim's P(supported): alignment is 1 exactly when it clears the threshold."""
        known = [p for p in self.alignment if p is not None]
        return min(known) if known else None


@dataclass(frozen=True)
class ScorerResult:
    score: float | int
    reason: str
    preprocess_step_result: PreprocessStepResult
    analyze_step_result: AnalyzeStepResult
    outcome: ScoreOutcome  # derived numbers, for display; not serialised (the spec derives them)
    verdict_probabilities: VerdictProbabilities | None = None

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
            "verdictProbabilities": None
            if self.verdict_probabilities is None
            else self.verdict_probabilities.to_dict(),
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
        probabilities = "null"
        if (found := self.verdict_probabilities) is not None:
            probabilities = (
                f'{{\n    "threshold": {_number(found.threshold)},\n'
                f'    "alignment": {_array([_number(p) for p in found.alignment])},\n'
                f'    "coverage": {_array([_number(p) for p in found.coverage])}\n  }}'
            )
        return (
            f'{{\n  "score": {_number(self.score)},\n  "reason": {_text(self.reason)},\n'
            f'  "preprocessStepResult": {{\n    "alignment": {_array(claims)},\n'
            f'    "questions": {_array(questions)}\n  }},\n'
            f'  "analyzeStepResult": {{\n    "coverage": {_array(verdicts)}\n  }},\n'
            f'  "verdictProbabilities": {probabilities}\n}}'
        )


_text = json.encoder.encode_basestring  # what json.dumps(ensure_ascii=False) uses for str
_number = json.JSONEncoder().encode
_BOOL = {True: "true", False: "false"}


def _array(items: list[str]) -> str:
    """A JSON array of already-encoded items, at the third nesting level (indent 4)."""
    if not items:
        return "[]"
    return "[\n      " + ",\n      ".join(items) + "\n    ]"


_PROBABILITY = {"type": ["number", "null"], "minimum": 0, "maximum": 1}
RESULT_JSON_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "additionalProperties": False,
    "required": [
        "score",
        "reason",
        "preprocessStepResult",
        "analyzeStepResult",
        "verdictProbabilities",
    ],
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
        "verdictProbabilities": {
            "oneOf": [
                {"type": "null"},
                {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["threshold", "alignment", "coverage"],
                    "properties": {
                        "threshold": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
                        "alignment": {"type": "array", "items": _PROBABILITY},
                        "coverage": {"type": "array", "items": _PROBABILITY},
                    },
                },
            ]
        },
    },
}
