"""offline-scorer: Mastra's Summarization Scorer, judged by local GGUF models, replayable."""

from __future__ import annotations

from offline_scorer.assembly.open import JudgeSettings, get_judge
from offline_scorer.assembly.open import open_judge as _open_judge
from offline_scorer.cassette.modes import RecordMode
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
from offline_scorer.version import __version__


def open_judge(settings: JudgeSettings) -> Judge:
    """The judge `settings` ask for (model, backend, cassette, record mode): live, replayed or
    recorded. A context manager; `get_judge` is the short form."""
    return _open_judge(settings)[0]


__all__ = [
    "CassetteFileError",
    "CassetteMissError",
    "ConfigError",
    "ContextOverflowError",
    "GenerationError",
    "InputError",
    "Judge",
    "JudgeRequest",
    "JudgeSettings",
    "Message",
    "ModelError",
    "OfflineScorerError",
    "RecordMode",
    "SamplingSettings",
    "ScorerOptions",
    "ScorerResult",
    "SummarizationScorer",
    "ToolResult",
    "__version__",
    "create_summarization_scorer",
    "extract_tool_results",
    "get_judge",
    "open_judge",
]
