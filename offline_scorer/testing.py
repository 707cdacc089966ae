"""Test helpers for users of offline-scorer: a judge that answers from a script."""

from offline_scorer.judging.scripted import ScriptedJudge

__all__ = ["ScriptedJudge"]
