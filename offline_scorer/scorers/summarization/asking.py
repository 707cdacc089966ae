"""What shapes an evaluation's requests besides its texts: read once from the options.

Every request builder takes it whole, so an option that changes what the judge is asked (the
free-text style, the claims' verdict threshold, quoted evidence, the question unit, and how
texts are cut into sentences) reaches each builder the same way, and none of them has a
default of its own that could disagree with another's.
"""

from __future__ import annotations

from dataclasses import dataclass

from offline_scorer.scorers.summarization.options import ScorerOptions


@dataclass(frozen=True)
class Asking:
    """The options a request depends on. `clock_always_ends`: whether a sentence is cut after
    every "a.m."/"p.m." (`ScorerOptions.splitting` 1) or only before a capital (2); `unit`:
    what a coverage question asks about ("sentences" or "facts")."""

    style: str
    claim_threshold: float | None
    quote_evidence: bool
    clock_always_ends: bool
    unit: str

    @classmethod
    def of(cls, options: ScorerOptions) -> Asking:
        """The requests' share of `options`."""
        return cls(
            style=options.free_text,
            claim_threshold=options.claim_threshold,
            quote_evidence=options.quote_evidence,
            clock_always_ends=options.clock_always_ends,
            unit=options.questions,
        )
