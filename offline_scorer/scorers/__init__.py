"""Scorers: one folder per kind, each registered by a `ScorerSpec` (see `registry`)."""

from __future__ import annotations

from offline_scorer.scorers.protocol import Scorer, ScoreResult
from offline_scorer.scorers.registry import DEFAULT_KIND, get_spec, kinds, register
from offline_scorer.scorers.spec import ScorerSpec

__all__ = ["DEFAULT_KIND", "ScoreResult", "Scorer", "ScorerSpec", "get_spec", "kinds", "register"]
