"""offline-scorer: Mastra's Summarization Scorer, judged by local GGUF models, replayable."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from offline_scorer.errors import (
    CassetteFileError,
    CassetteMissError,
    ConfigError,
    ContextOverflowError,
    GenerationError,
    InputError,
    ModelError,
    OfflineScorerError,
)
from offline_scorer.judging.protocol import Judge, JudgeRequest, Message, SamplingSettings
from offline_scorer.scorers.summarization.options import ScorerOptions
from offline_scorer.scorers.summarization.result import ScorerResult
from offline_scorer.scorers.summarization.runs import ToolResult, extract_tool_results
from offline_scorer.scorers.summarization.scorer import (
    SummarizationScorer,
    create_summarization_scorer,
)

try:
    __version__ = version("offline-scorer")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

__all__ = [
    "CassetteFileError",
    "CassetteMissError",
    "ConfigError",
    "ContextOverflowError",
    "GenerationError",
    "InputError",
    "Judge",
    "JudgeRequest",
    "Message",
    "ModelError",
    "OfflineScorerError",
    "SamplingSettings",
    "ScorerOptions",
    "ScorerResult",
    "SummarizationScorer",
    "ToolResult",
    "__version__",
    "create_summarization_scorer",
    "extract_tool_results",
]
