"""Whether a judge's explanation misstates the result it explains.

The explanation is the one text whose facts the product computed itself (the score and the
axis that limits it), so unlike a reason it can be checked exactly: "The score is 1 because
..." for a score of 0 is refused however well it reads. Its other checks (whole sentences,
known words, numbers of the figures) are `readable.problem`'s, as for every text.
"""

from __future__ import annotations

import re

from offline_scorer.scorers.summarization.refusal import Refusal
from offline_scorer.scorers.summarization.stated_numbers import WORD

_AXES = frozenset({"alignment", "coverage"})
_SCORE_STATED = re.compile(r"\bscore (?:is|was|of) (\d+(?:\.\d+)?)")


def misstates(text: str, score: float, limiting_axis: str) -> Refusal | None:
    """Why an explanation misstates the result (None: it does not): it gives the score as
    another of the figures ("The score is 1" when it is 0), or names only the axis that does
    not limit it ("coverage was the weaker axis" when alignment was)."""
    stated = _SCORE_STATED.findall(text.lower())
    if any(float(value) != score for value in stated):
        return Refusal("gives another score", f"{stated[0]} where it is {score:g}")
    if limiting_axis not in _AXES:
        return None
    named = _AXES.intersection(WORD.findall(text.lower()))
    if named and limiting_axis not in named:
        return Refusal(
            "names the axis that does not limit the score",
            f"{min(named)}, where {limiting_axis} limits it",
        )
    return None
