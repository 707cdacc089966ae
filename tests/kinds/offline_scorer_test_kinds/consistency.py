"""`consistency`: one yes/no question per item (is the summary consistent with its source?),
plus a brevity axis computed without the judge. Small on purpose: it exercises every generic
path (options flags, axes, labels, verdict probabilities, calibration, report columns) with one
judge request per item.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from offline_scorer import jsontext
from offline_scorer.errors import ConfigError, GenerationError, InputError
from offline_scorer.judging.ask import ask
from offline_scorer.judging.protocol import (
    Judge,
    JudgeRequest,
    Message,
    SamplingSettings,
    TextJudge,
    as_judge,
)
from offline_scorer.scorers.protocol import Scorer
from offline_scorer.scorers.spec import ScorerSpec, VerdictColumn

AXES = ("consistency", "brevity")
SAMPLING = SamplingSettings(temperature=0.0, seed=0, max_tokens=16)
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"consistent": {"type": "boolean"}},
    "required": ["consistent"],
    "additionalProperties": False,
}
SYSTEM = "You check summaries against their source. Answer with JSON only."
TASK = (
    "SOURCE:\n{source}\n\nSUMMARY:\n{summary}\n\n"
    "Is every statement of the summary supported by the source? "
    'Answer {{"consistent": true}} or {{"consistent": false}}.'
)


@dataclass(frozen=True)
class ConsistencyOptions:
    brevity_ratio: float = field(
        default=0.5,
        metadata={"help": "Summary words per source word above which brevity drops below 1."},
    )

    def __post_init__(self) -> None:
        ratio = self.brevity_ratio
        if isinstance(ratio, bool) or not isinstance(ratio, int | float) or not 0 < ratio <= 1:
            raise ConfigError(f"brevity_ratio must be a number in (0, 1], got {ratio!r}")

    def identity(self) -> dict[str, Any]:
        return {"brevity_ratio": self.brevity_ratio}

    @classmethod
    def from_mapping(cls, options: Any) -> ConsistencyOptions:
        if options is None:
            return cls()
        if not isinstance(options, Mapping):
            raise ConfigError(f"options must be a mapping, got {type(options).__name__}")
        unknown = [name for name in options if name != "brevity_ratio"]
        if unknown:
            raise ConfigError(f"unknown option {unknown[0]!r}; known options: brevity_ratio")
        return cls(**options)


class Answer(BaseModel):
    consistent: bool


class ConsistencyResult(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    score: float | int = Field(ge=0)
    consistent: bool
    p_consistent: float | None = Field(None, alias="pConsistent", ge=0, le=1)
    consistency: float | int = Field(ge=0)
    brevity: float | int = Field(ge=0)

    @property
    def axes(self) -> dict[str, float | int]:
        return {"consistency": self.consistency, "brevity": self.brevity}

    @property
    def limiting_axis(self) -> str:
        if self.consistency == self.brevity:
            return "none" if self.consistency >= 1 else "both"
        return "consistency" if self.consistency < self.brevity else "brevity"

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)

    def to_json(self) -> str:
        return jsontext.indented(self.to_dict())


def _words(text: str) -> int:
    return len(text.split())


class ConsistencyScorer:
    name = "consistency"
    steps: tuple[str, ...] = ("judge",)
    axes: tuple[str, ...] = AXES

    def __init__(self, judge: Judge | TextJudge, options: ConsistencyOptions) -> None:
        self.judge: Judge = as_judge(judge)
        self.options = options

    def identity(self) -> dict[str, Any]:
        return {"options": self.options.identity(), "sampling": SAMPLING.normalized()}

    def _request(self, run: Mapping[str, Any]) -> tuple[JudgeRequest, str, str]:
        source, summary = run.get("input"), run.get("output")
        if not isinstance(source, str) or not isinstance(summary, str):
            raise InputError("the consistency scorer needs a text input and a text output")
        user = TASK.format(source=source, summary=summary)
        messages = (Message("system", SYSTEM), Message("user", user))
        return JudgeRequest("judge", messages, SCHEMA, SAMPLING), source, summary

    def probability(self, run: Mapping[str, Any]) -> tuple[float, ...] | None:
        request, _source, _summary = self._request(run)
        _answer, completion = ask(self.judge, request, Answer)
        return completion.verdict_probabilities

    def run(self, run: Mapping[str, Any]) -> ConsistencyResult:
        request, source, summary = self._request(run)
        answer, completion = ask(self.judge, request, Answer)
        found = completion.verdict_probabilities
        if found is not None and len(found) != 1:
            raise GenerationError(f"judge: {len(found)} verdict probabilities for 1 verdict")
        allowed = self.options.brevity_ratio * _words(source)
        brevity = 1 if _words(summary) <= allowed else round(allowed / _words(summary), 2)
        consistency = 1 if answer.consistent else 0
        return ConsistencyResult(
            score=min(consistency, brevity),
            consistent=answer.consistent,
            p_consistent=None if found is None else round(found[0], 4),
            consistency=consistency,
            brevity=brevity,
        )


def _build(judge: Judge, options: ConsistencyOptions) -> Scorer:
    return ConsistencyScorer(judge, options)


def _describe(result: ConsistencyResult) -> str:
    verdict = "consistent" if result.consistent else "not consistent"
    p = "" if result.p_consistent is None else f" (P = {result.p_consistent})"
    return (
        f"score        {result.score}\nconsistency  {result.consistency}  ({verdict}{p})\n"
        f"brevity      {result.brevity}\nlimiting     {result.limiting_axis}"
    )


def _inconsistent(result: Mapping[str, Any]) -> list[tuple[str, str]]:
    return [] if result["consistent"] else [("the summary", "judged not consistent")]


def _weakest(result: Mapping[str, Any]) -> float | None:
    found = result.get("pConsistent")
    return found if isinstance(found, float | int) else None


def _calibration(scorer: Scorer, run: Mapping[str, Any]) -> tuple[float, ...] | None:
    assert isinstance(scorer, ConsistencyScorer)
    return scorer.probability(run)


SPEC = ScorerSpec(
    kind="consistency",
    title="Consistency (test-only kind)",
    options=ConsistencyOptions,
    result=ConsistencyResult,
    axes=AXES,
    label_fields={"consistent": "binary"},
    judged_axis="consistency",
    build=_build,
    describe=_describe,
    verdict_columns=(VerdictColumn("inconsistent", _inconsistent),),
    weakest_probability=_weakest,
    calibration_probabilities=_calibration,
)
