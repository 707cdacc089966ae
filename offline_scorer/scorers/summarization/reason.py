"""The final reason: true numbers stated by code, the model's words only as explanation.

A judge's free text can disagree with the computed score (DeepEval's users see it happen). Here
the sentence that carries the numbers is built from the outcome itself, and the explanation the
model adds is decoded under a grammar that admits no digits, so it cannot state other numbers.
"""

from __future__ import annotations

from offline_scorer.scorers.summarization.rule import ScoreOutcome


def _fmt(value: float | int) -> str:
    return repr(value)


def _quoted(items: list[str]) -> str:
    return "; ".join(f'"{item}"' for item in items)


def facts(outcome: ScoreOutcome) -> str:
    """What the reason prompt shows the model, and the first part of the final reason."""
    lines = [
        f"SCORE: {_fmt(outcome.score)} of {_fmt(outcome.scale)} "
        f"(alignment {_fmt(outcome.alignment)}, coverage {_fmt(outcome.coverage)})",
        f"LIMITING AXIS: {outcome.limiting_axis}",
        "UNSUPPORTED CLAIMS:",
        *(f"- {c.claim}" for c in outcome.unsupported_claims),
        *(["- none"] if not outcome.unsupported_claims else []),
        "UNANSWERED QUESTIONS:",
        *(f"- {v.question}" for v in outcome.missing_questions),
        *(["- none"] if not outcome.missing_questions else []),
    ]
    if outcome.nothing_to_score:
        lines.append(f"NOTE: the score is 0 because {outcome.nothing_to_score}.")
    return "\n".join(lines)


def figures_of(outcome: ScoreOutcome) -> str:
    """The computed figures, the only numbers an explanation may state (the headline also
    quotes claims and questions, whose numbers are not figures)."""
    o = outcome
    counts = (o.supported_claims, o.total_claims, o.answered_questions, o.asked_questions)
    return " ".join(_fmt(value) for value in (o.score, o.scale, o.alignment, o.coverage, *counts))


def failing_items(outcome: ScoreOutcome) -> list[str]:
    """The claims judged unsupported and the questions judged unanswered: what an explanation
    may speak of, fact by fact."""
    return [c.claim for c in outcome.unsupported_claims] + [
        v.question for v in outcome.missing_questions
    ]


def headline(outcome: ScoreOutcome) -> str:
    """The sentence with the numbers, exactly as computed."""
    parts = [
        f"Score {_fmt(outcome.score)} of {_fmt(outcome.scale)}: "
        f"alignment {_fmt(outcome.alignment)} ({outcome.supported_claims} of "
        f"{outcome.total_claims} claims supported), coverage {_fmt(outcome.coverage)} "
        f"({outcome.answered_questions} of {outcome.asked_questions} questions answered)."
    ]
    if outcome.nothing_to_score:
        parts.append(f"The score is 0 because {outcome.nothing_to_score}.")
    axis = outcome.limiting_axis
    if axis == "none":
        parts.append("Neither axis limits the score.")
    elif axis == "both":
        parts.append("Both axes limit the score equally.")
    else:
        parts.append(f"{axis.capitalize()} limits the score.")
    if axis in ("alignment", "both") and outcome.unsupported_claims:
        claims = [c.claim for c in outcome.unsupported_claims]
        parts.append(f"Unsupported claims: {_quoted(claims)}.")
    if axis in ("coverage", "both") and outcome.missing_questions:
        questions = [v.question for v in outcome.missing_questions]
        parts.append(f"Unanswered questions: {_quoted(questions)}.")
    return " ".join(parts)


def written_explanation(outcome: ScoreOutcome) -> str:
    """The product's plain explanation, from the verdicts alone, for when the judge's own text
    may not be shown."""
    if outcome.nothing_to_score:
        return "No verdict of the judge enters this score."
    parts = {
        "none": ["The judge found every claim supported and every question answered."],
        "alignment": [_UNSUPPORTED],
        "coverage": [_LEFT_OUT],
        "both": [_UNSUPPORTED, _LEFT_OUT],
    }[outcome.limiting_axis]
    return " ".join(parts)


_UNSUPPORTED = "The judge found claims in the summary that the source does not support."
_LEFT_OUT = "The judge found facts of the source that the summary does not state."


def compose_reason(outcome: ScoreOutcome, explanation: str, by_judge: bool) -> str:
    """The headline, then the explanation: labelled as the judge's only when it is."""
    label = "Judge's explanation: " if by_judge else "Explanation (written by offline-scorer): "
    return f"{headline(outcome)} {label}{explanation}"
