"""A summarization result as text for a person: what `offline-scorer score` prints."""

from __future__ import annotations

from offline_scorer.scorers.summarization.result import ScorerResult


def describe(result: ScorerResult) -> str:
    """Score, both axes with their counts, the limiting axis, the reason, and the failing
    verdicts, one per line."""
    o = result.numbers
    lines = [
        f"score      {o.score!r}  (scale {o.scale!r})",
        f"alignment  {o.alignment!r}  ({o.supported_claims} of {o.total_claims} claims supported)",
        f"coverage   {o.coverage!r}  ({o.answered_questions} of {o.asked_questions} "
        "questions answered)",
        f"limiting   {o.limiting_axis}",
    ]
    found = result.verdict_probabilities
    if found is not None:
        weakest = found.min_supported
        lines.append(
            f"P(true)    weakest claim {'n/a' if weakest is None else weakest}, verdicts "
            f"true at or above {found.threshold}"
        )
    lines += ["", f"reason: {result.reason}"]
    authors = result.text_authors
    if authors is not None and authors.product_written:
        lines.append(
            f"texts: offline-scorer wrote {authors.product_written} of the {authors.texts} texts "
            "from the verdicts, because the judge's own were not readable (result field "
            "textAuthors says which)"
        )
    lines += ["", "unsupported claims:"]
    lines += [f'  - "{claim.claim}" ({claim.reason})' for claim in o.unsupported_claims]
    if not o.unsupported_claims:
        lines.append("  (none)")
    lines.append("unanswered questions:")
    lines += [f'  - "{verdict.question}" ({verdict.reason})' for verdict in o.missing_questions]
    if not o.missing_questions:
        lines.append("  (none)")
    return "\n".join(lines)
