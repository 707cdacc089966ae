"""A summarization result as text for a person: what `offline-scorer score` prints."""

from __future__ import annotations

from collections.abc import Sequence

from offline_scorer.scorers.summarization.result import Author, ScorerResult

_WRITERS: dict[Author, str] = {"model": "judge", "product": "offline-scorer"}


def _verdicts(
    rows: Sequence[tuple[bool, str, str]], authors: Sequence[Author] | None, yes: str, no: str
) -> list[str]:
    """One line per verdict and one for its reason, naming who wrote the reason: every
    verdict, not only the failing ones, so a judge's words on a clean summary are seen too."""
    if not rows:
        return ["  (none)"]
    width = max(len(yes), len(no))
    lines = []
    for index, (positive, text, reason) in enumerate(rows):
        writer = _WRITERS[authors[index]] if authors and index < len(authors) else "judge"
        lines.append(f'  {(yes if positive else no).ljust(width)}  "{text}"')
        lines.append(f"  {' ' * width}  {writer}: {reason}")
    return lines


def describe(result: ScorerResult) -> str:
    """Score, both axes with their counts, the limiting axis, the reason, and every verdict
    with its reason and who wrote it, one per line."""
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
        at = f"verdicts true at or above {found.threshold}"
        if found.coverage_threshold is not None:
            at = f"claims true at or above {found.threshold}, questions {found.coverage_threshold}"
        lines.append(f"P(true)    weakest claim {'n/a' if weakest is None else weakest}, {at}")
    lines += ["", f"reason: {result.reason}"]
    authors = result.text_authors
    if authors is not None and authors.product_written:
        lines.append(
            f"texts: offline-scorer wrote {authors.product_written} of the {authors.texts} texts "
            "from the verdicts, because the judge's own were not readable (result field "
            "textAuthors says which)"
        )
    claims = [(c.supported, c.claim, c.reason) for c in result.preprocess_step_result.alignment]
    questions = [(v.answered, v.question, v.reason) for v in result.analyze_step_result.coverage]
    lines += ["", "claims:"]
    lines += _verdicts(claims, authors.alignment if authors else None, "supported", "UNSUPPORTED")
    lines.append("questions:")
    lines += _verdicts(questions, authors.coverage if authors else None, "answered", "UNANSWERED")
    return "\n".join(lines)
