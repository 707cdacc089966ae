"""Scorers: one folder each, built by name so batch workers can rebuild them in a process."""

from __future__ import annotations

from typing import Any

from offline_scorer.errors import ConfigError
from offline_scorer.judging.protocol import Judge
from offline_scorer.scorers.protocol import Scorer, ScoreResult

__all__ = ["ScoreResult", "Scorer", "build_scorer"]


def build_scorer(name: str, judge: Judge, options: Any) -> Scorer:
    """The scorer called `name` over `judge`, with its own options object or mapping."""
    if name == "summarization":
        from offline_scorer.scorers.summarization.options import ScorerOptions
        from offline_scorer.scorers.summarization.scorer import SummarizationScorer

        return SummarizationScorer(judge, ScorerOptions.from_mapping(options))
    raise ConfigError(f"unknown scorer {name!r}; known scorers: summarization")
