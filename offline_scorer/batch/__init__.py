"""Batch evaluation: datasets in, one results line per item out, on an executor."""

from offline_scorer.batch.run import EvalRun, ItemResult, run_evals

__all__ = ["EvalRun", "ItemResult", "run_evals"]
