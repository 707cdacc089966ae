"""`ScriptedJudge`: a judge that answers from a script, for testing scoring logic and user code.

It answers by step (preprocess, analyze, reason), never by call order, and records what each call
sent, so a test can assert on prompts (for example that the coverage call never saw the source).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from offline_scorer.judging.protocol import Completion, JudgeBase, JudgeRequest


class ScriptedJudge(JudgeBase):
    """Answers each step with the verdicts it was given.

    alignment: claim verdicts for the preprocess step, `{"claim", "supported", "reason"}` each.
    questions: the questions the preprocess step "draws from the source".
    coverage: verdicts for the analyze step, `{"question", "answered", "reason"}` each; as many or
        as few as you like (the scorer matches them to the asked questions by position).
    reason: what the model says in the reason step; it appears in `result.reason`.
    raw: optional raw text per step, sent back verbatim instead of the scripted answer (for
        testing how malformed answers are handled).
    probabilities: optional P(true) per boolean verdict, by step ("preprocess": one per claim,
        "analyze": one per coverage verdict), answered as a Completion with `threshold`; without
        them the judge gives no probabilities, like any backend that cannot read them. Under
        "baseline", one per coverage verdict: the P(answered) a verdict-only request for that
        question gets (the content-free baseline; default: the "analyze" one).

    When a request's schema puts every verdict before a top-level "reasons" list (the library's
    own requests do), the judge answers that way: each verdict's "reason" moves, in order, to
    "reasons". A request for one claim's or one question's verdict (`one_by_one`) gets the
    scripted verdict with that claim or question, and its P(true); a verdict-only request
    (`{"answered"}` alone) gets that verdict and its "baseline" P(true).
    """

    def __init__(
        self,
        *,
        alignment: Sequence[Mapping[str, Any]] = (),
        questions: Sequence[str] = (),
        coverage: Sequence[Mapping[str, Any]] = (),
        reason: str = "",
        raw: Mapping[str, str] | None = None,
        probabilities: Mapping[str, Sequence[float]] | None = None,
        threshold: float | None = 0.5,
    ) -> None:
        self.answers: dict[str, dict[str, Any]] = {
            "preprocess": {"alignment": [dict(a) for a in alignment], "questions": list(questions)},
            "analyze": {"coverage": [dict(c) for c in coverage]},
            "reason": {"explanation": reason},
        }
        self.raw = dict(raw or {})
        self.probabilities = {step: tuple(values) for step, values in (probabilities or {}).items()}
        self.threshold = threshold
        self.calls: list[tuple[str, str]] = []
        self.requests: list[JudgeRequest] = []

    def complete(self, request: JudgeRequest) -> Completion:
        sent = request.text()
        if request.output_schema is not None:
            sent += "\n[schema]\n" + json.dumps(request.output_schema, ensure_ascii=False)
        self.calls.append((request.step, sent))
        self.requests.append(request)
        if request.step in self.raw:
            return Completion(self.raw[request.step])
        if request.step not in self.answers:
            raise ValueError(f"ScriptedJudge has no answer for step {request.step!r}")
        probabilities = self.probabilities.get(request.step)
        one = _one_verdict(self.answers[request.step], request.output_schema, request.text())
        if one is not None:  # a request for one claim's or one question's verdict
            index, answer = one
            if "reason" not in answer:  # a verdict-only request: the content-free baseline
                probabilities = self.probabilities.get("baseline", probabilities)
            probabilities = None if probabilities is None else probabilities[index : index + 1]
        else:
            answer = _laid_out(self.answers[request.step], request.output_schema)
        text = json.dumps(answer, ensure_ascii=False, separators=(",", ":"))
        if probabilities is not None:
            return Completion(text, probabilities, self.threshold)
        return Completion(text)


_ONE_VERDICT = {"supported": ("alignment", "claim"), "answered": ("coverage", "question")}


def _one_verdict(
    answer: dict[str, Any], schema: Mapping[str, Any] | None, sent: str
) -> tuple[int, dict[str, Any]] | None:
    """(position, verdict) of the scripted verdict a one-verdict request asks for, or None for
    any other request. Such a request names its claim or question after the texts it shares
    with the others (a claim also stands in the summary before it): the one named last."""
    shape = schema or {}
    if "anyOf" in shape:  # a reason that depends on the verdict: each branch has its fields
        shape = shape["anyOf"][0]
    properties = list(shape.get("properties", {}))
    if len(properties) not in (1, 2) or properties[0] not in _ONE_VERDICT:
        return None
    verdicts, field = _ONE_VERDICT[properties[0]]
    places = [sent.rfind(str(verdict[field])) for verdict in answer[verdicts]]
    if not places or max(places) < 0:
        raise ValueError(f"ScriptedJudge has no {field} this request names")
    index = places.index(max(places))
    verdict = answer[verdicts][index]
    return index, {name: verdict[name] for name in properties}


def _laid_out(answer: dict[str, Any], schema: Mapping[str, Any] | None) -> dict[str, Any]:
    """The scripted answer in the schema's layout: verdicts with their reasons, or every verdict
    first and then a "reasons" list, in the order the schema lists its properties."""
    properties = (schema or {}).get("properties", {})
    if list(properties) == ["questions"]:  # the questions asked alone
        return {"questions": answer["questions"]}
    if "reasons" not in properties or "reasons" in answer:
        return answer
    verdicts = next(name for name in answer if isinstance(answer[name], list))
    calls = [{k: v for k, v in item.items() if k != "reason"} for item in answer[verdicts]]
    reasons = [item.get("reason", "") for item in answer[verdicts]]
    laid = {**answer, verdicts: calls, "reasons": reasons}
    return {name: laid[name] for name in properties if name in laid}
