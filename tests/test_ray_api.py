"""`RayExecutor` from Python, on a local Ray instance this module starts: replay only, no model."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from offline_scorer.assembly.open import JudgeSettings
from offline_scorer.assembly.run_spec import RunSpec
from offline_scorer.batch.datasets import count_rows
from offline_scorer.batch.run import run_evals
from offline_scorer.cassette.judge import RecordMode
from offline_scorer.errors import ClusterError
from tests.conftest import FIXTURES
from tests.helpers import recorded_options

ray = pytest.importorskip("ray", reason="the ray extra is not installed")

CASSETTE = FIXTURES / "cassettes" / "fixtures.oscas"
REPLAY = JudgeSettings(cassette=CASSETTE, mode=RecordMode.REPLAY)


@pytest.fixture(scope="module", autouse=True)
def local_ray() -> Iterator[None]:
    # "local": a fresh instance even when another cluster on this machine is the latest one
    ray.init(address="local", num_cpus=2, include_dashboard=False, object_store_memory=80 << 20)
    try:
        yield
    finally:
        ray.shutdown()


def golden() -> list[dict]:
    """The golden file's item lines (its recipe header left out)."""
    lines = (FIXTURES / "golden" / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines[1:]]


def test_run_evals_with_a_ray_executor_gives_the_golden_results(fixture_pairs) -> None:
    from offline_scorer.batch.cluster import RayExecutor

    with RayExecutor(RunSpec.of("summarization", recorded_options(), REPLAY), actors=2) as executor:
        run = run_evals(data=fixture_pairs, scorers=[executor.scorer], executor=executor)
        assert executor.judge.hits == 36 and executor.judge.recorded == 0
    assert [item.id for item in run.items] == [pair["id"] for pair in fixture_pairs]
    expected = golden()
    for item, line in zip(run.items, expected, strict=True):
        assert item.results["summarization"].to_dict() == line["result"]
    assert run.summary == {"totalItems": 12, "failed": 0}


def test_a_target_runs_on_the_actors(fixture_pairs) -> None:
    """Mastra's shape: rows carry only the input; the target (shipped to each actor) writes
    the summary there."""
    from offline_scorer.batch.cluster import RayExecutor

    summaries = {pair["source"]: pair["summary"] for pair in fixture_pairs}
    rows = [{"id": pair["id"], "input": pair["source"]} for pair in fixture_pairs[:4]]
    with RayExecutor(RunSpec.of("summarization", recorded_options(), REPLAY), actors=2) as executor:
        run = run_evals(
            data=rows, scorers=[executor.scorer], executor=executor, target=summaries.__getitem__
        )
    for item, line in zip(run.items, golden()[:4], strict=True):
        assert item.results["summarization"].to_dict() == line["result"]


def test_a_cluster_too_small_for_the_slots_is_refused_before_anything_starts() -> None:
    from offline_scorer.batch.cluster import RayExecutor

    with (
        pytest.raises(ClusterError, match=r"5 actor\(s\) x 1 thread\(s\) need 5 CPUs"),
        RayExecutor(RunSpec.of("summarization", recorded_options(), REPLAY), actors=5),
    ):
        pass


def test_a_run_stopped_early_leaves_the_executor_usable(fixture_pairs) -> None:
    """fail_fast ends the stream with items still in flight; the next run on the same actors
    still gives every result, in order."""
    from offline_scorer.batch.cluster import RayExecutor

    rows = [{"id": "bad", "source": 3, "summary": "x"}, *fixture_pairs]
    with RayExecutor(RunSpec.of("summarization", recorded_options(), REPLAY), actors=2) as executor:
        first = run_evals(data=rows, scorers=[executor.scorer], executor=executor, fail_fast=True)
        assert [item.ok for item in first.items] == [False]
        again = run_evals(data=fixture_pairs, scorers=[executor.scorer], executor=executor)
    assert [item.id for item in again.items] == [pair["id"] for pair in fixture_pairs]
    assert [i.results["summarization"].to_dict() for i in again.items] == [
        line["result"] for line in golden()
    ]


def test_count_rows_matches_what_the_stream_yields(tmp_path: Path) -> None:
    from offline_scorer.batch.datasets import iter_dataset

    data = tmp_path / "d.jsonl"
    data.write_bytes(b'{"id": "a", "source": "s", "summary": "t"}\n\n  \n{bad\n"x"')
    assert count_rows(data) == 3 == len(list(iter_dataset(data)))


def test_a_slow_item_at_the_head_holds_only_its_own_line(fixture_pairs) -> None:
    """The first item takes seconds while the others race ahead and fill the reorder window;
    the run waits for it, writes everything in order and goes on (a regression: it once
    stopped with 'every actor was lost' when the window emptied)."""
    import time

    from offline_scorer.batch.cluster import RayExecutor

    slow = fixture_pairs[0]["source"]
    summaries = {pair["source"]: pair["summary"] for pair in fixture_pairs}

    def target(source: str) -> str:
        if source == slow:
            time.sleep(2)
        return summaries[source]

    picks = [0, *(1 + n % 11 for n in range(29))]  # only the first row is the slow pair
    rows = [{"id": f"row-{i}", "input": fixture_pairs[k]["source"]} for i, k in enumerate(picks)]
    options = recorded_options()
    with RayExecutor(RunSpec.of("summarization", options, REPLAY), actors=2, depth=1) as executor:
        run = run_evals(data=rows, scorers=[executor.scorer], executor=executor, target=target)
    assert [item.id for item in run.items] == [row["id"] for row in rows]
    expected = golden()
    assert [i.results["summarization"].to_dict() for i in run.items] == [
        expected[k]["result"] for k in picks
    ]
