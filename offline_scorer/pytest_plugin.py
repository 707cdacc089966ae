"""pytest integration: scorers bound to a cassette named after the test.

Tests replay by default, so CI needs neither the model nor llama-cpp-python. Record or refresh
with `pytest --offline-scorer-record-mode=auto` (or `record`). `$OFFLINE_SCORER_RECORD_MODE`
still wins, so a CI job can force replay everywhere.

Every registered scorer kind gets a fixture `<kind>_scorer` (dashes become underscores), and
`offline_scorer_scorer` builds the kind the marker names (`kind=`, default: the default kind):

    @pytest.mark.offline_scorer(max_questions=5)            # scorer options; also model=, cassette=
    def test_my_summarizer(summarization_scorer):
        result = summarization_scorer.run({"input": source, "output": my_summarizer(source)})
        assert result.score >= 0.5
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from offline_scorer.assembly.open import JudgeSettings, open_judge, resolve_mode
from offline_scorer.cassette.modes import RecordMode, parse_mode
from offline_scorer.judging.protocol import Judge
from offline_scorer.scorers.protocol import Scorer
from offline_scorer.scorers.registry import DEFAULT_KIND, get_spec, kinds

_JUDGE_KEYS = {"model", "cassette", "kind"}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("offline-scorer")
    group.addoption(
        "--offline-scorer-record-mode",
        default=None,
        choices=[m.value for m in RecordMode],
        help="record mode for the offline-scorer fixtures (default: replay)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "offline_scorer(kind=None, model=None, cassette=None, **options): scorer kind, model, "
        "cassette path and scorer options for the offline-scorer fixtures",
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
    with judge:  # a recording judge closes its cassette; a live one holds nothing to close
        yield judge


def _scorer(kind: str, judge: Judge, request: pytest.FixtureRequest) -> Scorer:
    spec = get_spec(kind)
    options = {k: v for k, v in _marker_kwargs(request).items() if k not in _JUDGE_KEYS}
    return spec.build(judge, spec.make_options(options))


@pytest.fixture
def offline_scorer_scorer(offline_scorer_judge: Judge, request: pytest.FixtureRequest) -> Scorer:
    """A scorer of the marker's `kind` over `offline_scorer_judge`, with its options."""
    return _scorer(
        _marker_kwargs(request).get("kind") or DEFAULT_KIND, offline_scorer_judge, request
    )


def _kind_fixture(kind: str) -> Any:
    def fixture(offline_scorer_judge: Judge, request: pytest.FixtureRequest) -> Scorer:
        return _scorer(kind, offline_scorer_judge, request)

    fixture.__doc__ = f"A {kind} scorer over `offline_scorer_judge`, with the marker's options."
    return pytest.fixture(name=f"{kind.replace('-', '_')}_scorer")(fixture)


for _kind in kinds():
    globals()[f"_{_kind.replace('-', '_')}_scorer"] = _kind_fixture(_kind)
