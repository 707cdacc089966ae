"""`cassette verify --live`: comparing a live answer with its record, sampling, and item drift."""

from __future__ import annotations

from dataclasses import replace

import pytest

from offline_scorer.assembly.rerun import Comparison, RerunReport, compare, sample, verdicts
from offline_scorer.cassette.records import Exchange, from_payload
from offline_scorer.cassette.store.container import CassetteFile
from tests.conftest import FIXTURES, ROOT
from tests.test_cli import assert_clean_error, run_cli

CASSETTE = FIXTURES / "cassettes" / "fixtures.oscas"


def _exchanges() -> list[Exchange]:
    with CassetteFile(CASSETTE, create=False) as cas:
        return [from_payload(cas, key, payload) for key, payload in cas.iter_exchanges()]


def _with_probabilities() -> Exchange:
    return next(ex for ex in _exchanges() if ex.completion.verdict_probabilities)


def test_verdicts_are_the_answers_booleans_in_order():
    assert verdicts('{"a":[{"x":true,"n":1},{"x":false}],"b":true}') == (True, False, True)
    assert verdicts("The summary is faithful.") == ()


def test_the_recorded_answer_compares_identical():
    exchange = _with_probabilities()
    same = compare(exchange, exchange.completion)
    assert same == Comparison(
        same_text=True, same_verdicts=True, probability_change=0.0, problem=None
    )


def test_a_moved_probability_with_the_same_text_is_reported():
    exchange = _with_probabilities()
    first, *rest = exchange.completion.verdict_probabilities
    moved = replace(exchange.completion, verdict_probabilities=(first + 0.01, *rest))
    found = compare(exchange, moved)
    assert found.same_text and found.same_verdicts
    assert found.probability_change == pytest.approx(0.01)
    assert found.problem == "same text, different verdict probabilities"


def test_a_flipped_verdict_is_a_changed_verdict_and_a_changed_text():
    exchange = next(ex for ex in _exchanges() if '"supported":true' in ex.text)
    flipped = exchange.text.replace('"supported":true', '"supported":false', 1)
    found = compare(exchange, replace(exchange.completion, text=flipped))
    assert not found.same_text and not found.same_verdicts
    assert found.problem == f"differs from character {exchange.text.index('true')}"
    report = RerunReport()
    report.add("k step", found)
    report.add("k2 step", compare(exchange, exchange.completion))
    assert (report.compared, report.same, report.same_text, report.same_verdicts) == (2, 1, 1, 1)
    assert report.drifted == [f"k step: {found.problem}"]


def test_a_sample_is_spread_evenly_and_deterministic():
    assert sample(list(range(10)), 3) == [0, 3, 6]
    assert sample(list(range(4)), None) == sample(list(range(4)), 9) == [0, 1, 2, 3]


def test_sample_and_data_need_live():
    proc = run_cli("cassette", "verify", str(CASSETTE), "--sample", "2")
    assert_clean_error(proc, 2, "go with --live")


@pytest.mark.live
def test_live_item_drift_on_one_fixture_item():
    """The real model re-scores one sampled item; on the machine that recorded it, nothing
    moves."""
    pytest.importorskip("llama_cpp")
    proc = run_cli(
        "cassette", "verify", str(CASSETTE), "--live", "--sample", "1", "--data",
        str(FIXTURES / "pairs.jsonl"),
    )  # fmt: skip
    out = proc.stdout.decode()
    assert proc.returncode == 0, (out, proc.stderr.decode())
    assert "live: 3 of 3 responses identical, 3 of 3 with identical verdicts" in out
    assert "item 01-harbor-bridge: recorded 1.0, live 1.0, change +0.0000" in out
    assert "live: 1 of 1 item scores unchanged" in out


@pytest.mark.live
def test_live_rerun_of_a_former_decoders_records():
    """The fixture run as the llama_cpp decoder /2 recorded it: its prompts hold no
    control-token text, so the current decoder sees the same tokens and re-runs them; on the
    machine that recorded them, every answer comes back the same."""
    pytest.importorskip("llama_cpp")
    cassette = ROOT / "tests/data/decoder2-fixtures.oscas"
    proc = run_cli("cassette", "verify", str(cassette), "--live", "--sample", "3")
    out = proc.stdout.decode()
    assert proc.returncode == 0, (out, proc.stderr.decode())
    assert "live: 3 of 3 responses identical, 3 of 3 with identical verdicts" in out
