"""Deprecated: `offline_scorer.evals` moved to `offline_scorer.batch`.

Kept for one release so code that imported `run_evals` from here keeps working.
"""

from __future__ import annotations

import warnings

from offline_scorer.batch.run import EvalRun, ItemResult, run_evals

warnings.warn(
    "offline_scorer.evals is deprecated and will be removed in the next release; "
    "import run_evals from offline_scorer.batch instead",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = ["EvalRun", "ItemResult", "run_evals"]
