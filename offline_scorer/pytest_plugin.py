"""pytest integration: scorers bound to a cassette named after the test.

Tests replay by default, so CI needs neither the model nor llama-cpp-python. Record or refresh
with `pytest --offline-scorer-record-mode=auto` (or `record`). `$OFFLINE_SCORER_RECORD_MODE`
still wins, so a CI job can force replay everywhere.

    @pytest.mark.offline_scorer(max_questions=5)            # scorer options; also model=, cassette=
    def test_my_summarizer(summarization_scorer):
        result = summarization_scorer.score_texts(source, my_summarizer(source))
        assert result.score >= 0.5
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from offline_scorer.cassette.judge import CassetteJudge, RecordMode, parse_mode
from offline_scorer.judging.open import JudgeSettings, open_judge, resolve_mode
from offline_scorer.judging.protocol import Judge
from offline_scorer.scorers.summarization.options import ScorerOptions
from offline_scorer.scorers.summarization.scorer import SummarizationScorer

_JUDGE_KEYS = {"model", "cassette"}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("offline-scorer")
    group.addoption(
        "--offline-scorer-record-mode",
        default=None,
        choices=[m.value for m in RecordMode],
        help="record mode for the summarization_scorer fixture (default: replay)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "offline_scorer(model=None, cassette=None, **options): model, cassette path and scorer "
        "options for the summarization_scorer fixture",
    )


def _cassette_path(request: pytest.FixtureRequest) -> Path:
    test_file = Path(str(request.node.path))
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", request.node.name).strip("-")
    return test_file.parent / "cassettes" / test_file.stem / f"{name}.oscas"


def _marker_kwargs(request: pytest.FixtureRequest) -> dict[str, Any]:
    marker = request.node.get_closest_marker("offline_scorer")
    return dict(marker.kwargs) if marker else {}


@pytest.fixture
def offline_scorer_judge(request: pytest.FixtureRequest) -> Iterator[Judge]:
    """A judge replaying (or recording) `cassettes/<test module>/<test name>.oscas`."""
    kwargs = _marker_kwargs(request)
    option = request.config.getoption("--offline-scorer-record-mode")
    requested = parse_mode(option, "--offline-scorer-record-mode") if option else RecordMode.REPLAY
    mode, _ = resolve_mode(requested)
    cassette = Path(kwargs["cassette"]) if "cassette" in kwargs else _cassette_path(request)
    judge, _spec = open_judge(
        JudgeSettings(model=kwargs.get("model"), cassette=cassette, mode=mode)
    )
    try:
        yield judge
    finally:
        if isinstance(judge, CassetteJudge):
            judge.close()


@pytest.fixture
def summarization_scorer(
    offline_scorer_judge: Judge, request: pytest.FixtureRequest
) -> SummarizationScorer:
    """A summarization scorer over `offline_scorer_judge`, with the marker's options."""
    options = {k: v for k, v in _marker_kwargs(request).items() if k not in _JUDGE_KEYS}
    return SummarizationScorer(offline_scorer_judge, ScorerOptions.from_mapping(options))
