"""Load on loopback: 16 concurrent clients, 200 requests recorded on the shipped GGUF, then the
same 200 replayed with no model runtime: every response identical, exactly 200 exchanges in
the cassette; a client that disconnects mid-stream breaks neither the server nor the file."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from offline_scorer.cassette.store.file import CassetteFile
from tests.serve_process import Server, serving

CLIENTS = 16
COUNT = 200


def _request(i: int) -> dict[str, object]:
    return {
        "model": "default",
        "messages": [{"role": "user", "content": f"Repeat the number {i}."}],
        "max_tokens": 3,
        "stream": i % 2 == 1,
    }


def _send(server: Server, i: int) -> str:
    """The response as the client saw it: the body, or the stream's data lines joined."""
    body = _request(i)
    url = f"{server.base_url}/chat/completions"
    if not body["stream"]:
        response = httpx.post(url, json=body, timeout=600)
        assert response.status_code == 200, response.text
        return response.text
    with httpx.stream("POST", url, json=body, timeout=600) as response:
        assert response.status_code == 200
        data = [line for line in response.iter_lines() if line.startswith("data: ")]
    assert data[-1] == "data: [DONE]"
    return "\n".join(data)


def _all(server: Server) -> list[str]:
    with ThreadPoolExecutor(CLIENTS) as pool:
        return list(pool.map(lambda i: _send(server, i), range(COUNT)))


@pytest.mark.live
def test_two_hundred_concurrent_requests_record_then_replay_identically(tmp_path: Path) -> None:
    cassette = tmp_path / "load.oscas"
    with serving(
        tmp_path, "--record-mode", "record", "--cassette", str(cassette), "--threads", "2"
    ) as live:
        recorded = _all(live)
    with CassetteFile.open(cassette, create=False) as stored:
        keys = [key for key, _ in stored.iter_exchanges()]
        assert stored.exchange_count == len(keys) == len(set(keys)) == COUNT
    with serving(
        tmp_path, "--record-mode", "replay", "--cassette", str(cassette), block_runtime=True
    ) as replay:
        replayed = _all(replay)
    assert replayed == recorded
    ids = {json.loads(r.splitlines()[0].removeprefix("data: "))["id"] for r in recorded}
    assert len(ids) == COUNT


@pytest.mark.live
def test_a_client_leaving_mid_stream_breaks_nothing(tmp_path: Path) -> None:
    cassette = tmp_path / "leave.oscas"
    with serving(
        tmp_path, "--record-mode", "auto", "--cassette", str(cassette), "--threads", "2"
    ) as server:
        url = f"{server.base_url}/chat/completions"
        leaving = {
            "model": "default",
            "stream": True,
            "max_tokens": 60,
            "messages": [{"role": "user", "content": "Write a poem about rivers."}],
        }
        with httpx.stream("POST", url, json=leaving, timeout=60) as response:
            assert response.status_code == 200  # headers at once, then the client hangs up
        after = _send(server, 8)  # even: not streamed
        assert server.alive() and json.loads(after)["choices"][0]["message"]["content"]
    with CassetteFile.open(cassette, create=False) as stored:
        exchanges = list(stored.iter_exchanges())  # every record decodes: none half-written
        assert 1 <= stored.exchange_count <= 2 and len(exchanges) == stored.exchange_count


@pytest.mark.live
def test_sigterm_with_a_request_on_the_model_leaves_a_whole_cassette(tmp_path: Path) -> None:
    import threading
    import time

    cassette = tmp_path / "term.oscas"
    outcome: list[object] = []
    with serving(
        tmp_path, "--record-mode", "record", "--cassette", str(cassette), "--threads", "2"
    ) as server:
        body = {
            "model": "default",
            "max_tokens": 120,
            "messages": [{"role": "user", "content": "Describe a long walk by the sea."}],
        }

        def send() -> None:
            try:
                outcome.append(
                    httpx.post(
                        f"{server.base_url}/chat/completions", json=body, timeout=120
                    ).status_code
                )
            except httpx.HTTPError as error:
                outcome.append(error)

        worker = threading.Thread(target=send)
        worker.start()
        time.sleep(1.0)  # the request is on the model now
        assert server.stop() == 0  # graceful: SIGTERM, exit 0
        worker.join()
    with CassetteFile.open(cassette, create=False) as stored:
        records = list(stored.iter_exchanges())  # every record decodes
    assert len(records) == stored.exchange_count <= 1
    if outcome == [200]:
        assert len(records) == 1  # answered means recorded
