"""Deprecated: `offline_scorer.live.llama_judge` moved to `offline_scorer.backends.llama_cpp`.

Kept for one release so code that imported `load_judge` from here keeps working.
"""

from __future__ import annotations

import warnings

from offline_scorer.backends.llama_cpp import load_judge

try:  # the class needs the model runtime's dependencies; load_judge says so when called
    from offline_scorer.backends.llama_cpp.judge import LlamaJudge
except ImportError:  # pragma: no cover - core-only install
    pass

warnings.warn(
    "offline_scorer.live.llama_judge is deprecated and will be removed in the next release; "
    "import load_judge from offline_scorer.backends.llama_cpp instead",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = ["LlamaJudge", "load_judge"]
