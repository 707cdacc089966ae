"""`eval --executor ray` on a real Ray cluster of two nodes started on this machine.

Each live test scores the 12 fixture pairs on two actors (one per node, one thread each) and
compares the results file and the cassette with the committed serial recording, byte for byte,
after a fault in mid-run: an actor's process killed, a node removed, the driver interrupted.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, ROOT, replay_env
from tests.helpers import assert_same_recording, recorded_flags

ray = pytest.importorskip("ray", reason="the ray extra is not installed")

GOLDEN_RESULTS = FIXTURES / "golden" / "results.jsonl"
GOLDEN_CASSETTE = FIXTURES / "cassettes" / "fixtures.oscas"
PAIRS = FIXTURES / "pairs.jsonl"


@pytest.fixture
def cluster() -> Iterator[object]:
    """A head node and a worker node, one CPU each (so one actor lands on each)."""
    from ray.cluster_utils import Cluster

    store = 80 << 20
    cluster = Cluster(
        initialize_head=True, head_node_args={"num_cpus": 1, "object_store_memory": store}
    )
    cluster.add_node(num_cpus=1, object_store_memory=store)
    try:
        yield cluster
    finally:
        cluster.shutdown()


LIVE_ITEMS = 4
"""How many fixture pairs a live cluster run scores: after the first line, both actors are
mid-item when a fault strikes, and after the second, Ctrl-C lands before the end. Every live
run here is a run on two nodes that must give the serial bytes; each also meets a fault."""


def eval_args(out: Path, cassette: Path, *extra: str, data: Path = PAIRS) -> list[str]:
    return [
        sys.executable,
        "-m",
        "offline_scorer",
        "eval",
        str(data),
        "--out",
        str(out),
        "--cassette",
        str(cassette),
        "--executor",
        "ray",
        "--quiet",
        *recorded_flags(),  # the golden recording's options: a live run asks what it asked
        *extra,
    ]


def actor_pids() -> list[int]:
    """Processes whose title Ray set to the scoring actor's (`ray::ItemScorer...`)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cmdline").read_bytes().startswith(b"ray::ItemScorer"):
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def wait_for_lines(child: subprocess.Popen[bytes], out: Path, lines: int) -> None:
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and child.poll() is None:
        if out.exists() and out.read_bytes().count(b"\n") >= lines:
            return
        time.sleep(0.05)
    raise AssertionError(f"the run ended or stalled before writing {lines} line(s)")


def finish(child: subprocess.Popen[bytes]) -> str:
    _out, err = child.communicate(timeout=900)
    assert child.returncode == 0, err.decode()[-3000:]
    return err.decode()


def live_data(tmp_path: Path) -> Path:
    """The first `LIVE_ITEMS` fixture pairs, as a data file."""
    data = tmp_path / "pairs.jsonl"
    lines = PAIRS.read_text(encoding="utf-8").splitlines(keepends=True)
    data.write_text("".join(lines[:LIVE_ITEMS]), encoding="utf-8")
    return data


def assert_golden(out: Path, cassette: Path, items: int = 12) -> None:
    """The results and the recording are the serial run's: the golden's header and first
    `items` lines, and the golden recording's exchanges of those items (three each)."""
    golden = GOLDEN_RESULTS.read_bytes().splitlines(keepends=True)
    assert out.read_bytes() == b"".join(golden[: items + 1])
    assert_same_recording(cassette, GOLDEN_CASSETTE, None if items == 12 else 3 * items)


def test_replay_on_a_local_ray_instance_needs_no_model(tmp_path: Path) -> None:
    """No address: the command starts Ray on this machine; replay loads no model anywhere."""
    out = tmp_path / "results.jsonl"
    args = eval_args(out, GOLDEN_CASSETTE, "--record-mode", "replay", "--workers", "2")
    proc = subprocess.run(args, capture_output=True, env=replay_env(tmp_path), timeout=600)
    assert proc.returncode == 0, proc.stderr.decode()[-3000:]
    assert out.read_bytes() == GOLDEN_RESULTS.read_bytes()


def test_a_missing_model_on_a_node_is_one_line_naming_the_node_and_digest(
    tmp_path: Path,
) -> None:
    from offline_scorer.models.registry import load_registry

    out = tmp_path / "results.jsonl"
    args = eval_args(out, tmp_path / "c.oscas", "--record-mode", "record")
    proc = subprocess.run(args, capture_output=True, env=replay_env(tmp_path), timeout=600)
    err = proc.stderr.decode().strip()
    assert proc.returncode == 3, err
    assert len(err.splitlines()) == 1, err
    assert err.startswith("error: node ") and "GGUF file not found" in err
    sha256 = load_registry().resolve("default").sha256
    assert sha256 is not None and sha256 in err
    assert not out.exists()


def test_ray_address_needs_the_ray_executor(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "offline_scorer", "eval", str(PAIRS)]
    proc = subprocess.run(
        [*command, "--out", str(tmp_path / "r.jsonl"), "--ray-address", "auto"],
        capture_output=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr.decode().strip() == "error: --ray-address needs --executor ray"


def run_with_a_fault(cluster, tmp_path: Path, fault: Callable[[], None]) -> None:
    """A live recording run on the cluster; `fault` strikes once two lines are written and
    both actors are inside an item's model calls; the bytes must still be the serial run's."""
    out, cassette = tmp_path / "results.jsonl", tmp_path / "c.oscas"
    args = eval_args(
        out, cassette, "--record-mode", "record", "--ray-address", cluster.address,
        data=live_data(tmp_path),
    )  # fmt: skip
    child = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_for_lines(child, out, 2)
    time.sleep(2)
    fault()
    finish(child)
    assert_golden(out, cassette, LIVE_ITEMS)


@pytest.mark.live
def test_killing_an_actor_mid_run_still_gives_the_serial_bytes(cluster, tmp_path: Path) -> None:
    def kill_one_actor() -> None:
        pids = actor_pids()
        assert len(pids) == 2, pids
        os.kill(pids[0], signal.SIGKILL)

    run_with_a_fault(cluster, tmp_path, kill_one_actor)


@pytest.mark.live
def test_removing_a_node_mid_run_still_gives_the_serial_bytes(cluster, tmp_path: Path) -> None:
    run_with_a_fault(
        cluster, tmp_path, lambda: cluster.remove_node(next(iter(cluster.worker_nodes)))
    )


@pytest.mark.live
def test_an_interrupted_and_resumed_run_gives_the_serial_bytes(cluster, tmp_path: Path) -> None:
    """Ctrl-C (SIGINT to the driver) mid-run, then --resume: Ctrl-C is taken between items, so
    the cassette holds the exchanges of exactly the items whose lines were written."""
    out, cassette = tmp_path / "results.jsonl", tmp_path / "c.oscas"
    args = eval_args(
        out, cassette, "--record-mode", "record", "--ray-address", cluster.address,
        data=live_data(tmp_path),
    )  # fmt: skip
    child = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_for_lines(child, out, 3)
    child.send_signal(signal.SIGINT)
    _out, err = child.communicate(timeout=120)
    assert child.returncode == 130, err.decode()[-3000:]
    assert "continue with --resume" in err.decode()
    kept = out.read_bytes()
    assert kept.endswith(b"\n") and GOLDEN_RESULTS.read_bytes().startswith(kept)
    assert 3 <= kept.count(b"\n") <= LIVE_ITEMS  # the header and some, not all, items
    assert actor_pids() == []  # the interrupted run stopped its actors
    finish(subprocess.Popen([*args, "--resume"], stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    assert_golden(out, cassette, LIVE_ITEMS)


@pytest.mark.live
def test_auto_mode_replays_on_the_actors_and_writes_nothing_new(cluster, tmp_path: Path) -> None:
    """The cassette travels to the nodes as a snapshot; every exchange is a hit there."""
    out, cassette = tmp_path / "results.jsonl", tmp_path / "c.oscas"
    cassette.write_bytes(GOLDEN_CASSETTE.read_bytes())
    args = eval_args(out, cassette, "--record-mode", "auto", "--ray-address", cluster.address)
    err = finish(subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    assert "replayed 36 exchange(s)" in err and "recorded" not in err
    assert_golden(out, cassette)


def test_the_core_eval_never_imports_ray(tmp_path: Path) -> None:
    code = (
        "import sys, runpy\n"
        "sys.argv = ['offline-scorer', 'eval', sys.argv[1], '--out', sys.argv[2], "
        "'--record-mode', 'replay', '--cassette', sys.argv[3], '--quiet']\n"
        "try:\n"
        "    runpy.run_module('offline_scorer', run_name='__main__')\n"
        "except SystemExit as done:\n"
        "    assert not done.code, done.code\n"
        "assert 'ray' not in sys.modules, 'ray was imported'\n"
    )
    out = tmp_path / "r.jsonl"
    proc = subprocess.run(
        [sys.executable, "-c", code, str(PAIRS), str(out), str(GOLDEN_CASSETTE)],
        capture_output=True,
        env=replay_env(tmp_path),
        cwd=ROOT,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr.decode()[-3000:]
    assert out.read_bytes() == GOLDEN_RESULTS.read_bytes()
