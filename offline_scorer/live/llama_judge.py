"""Deprecated: `offline_scorer.live.llama_judge` moved to `offline_scorer.backends.llama_cpp`.

Kept for one release so code that imported `load_judge` from here keeps working.
"""

from __future__ import annotations

import contextlib
import warnings

from offline_scorer.backends.llama_cpp import load_judge

# The class needs the model runtime's dependencies; load_judge says so when called without them.
with contextlib.suppress(ImportError):
    from offline_scorer.backends.llama_cpp.judge import LlamaJudge

warnings.warn(
    "offline_scorer.live.llama_judge is deprecated and will be removed in the next release; "
    "import load_judge from offline_scorer.backends.llama_cpp instead",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = ["LlamaJudge", "load_judge"]
