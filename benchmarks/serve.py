"""`serve` throughput and overhead, each measured alone on this machine.

    python -m benchmarks.serve [--requests 4000] [--clients 16] [--live 8]

1. Replay: a cassette of N distinct chat exchanges (recorded first through the server's own
   translation with a stand-in judge, pinned to the default model's identity); then `serve
   --record-mode replay` pinned to one core and 16 concurrent keep-alive clients (a minimal
   asyncio HTTP/1.1 client) on the other core send the N requests, half of them streamed.
   Reported: requests/s, and requests per second of the server's CPU time (its capacity on one
   core, whatever else runs). Goal: over 1,000 requests/s.
2. Overhead per live request: the same requests answered by the real GGUF through the server
   (record mode off, one kept-alive client, one at a time) and by calling the same judge
   in-process with the same `JudgeRequest`, alternating request by request so both see the
   same machine state; overhead = (server - in-process) / in-process, medians. Goal: < 5%.
   Run alone: two model jobs on two cores slow each other 10-50x.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from benchmarks._common import ROOT, repo_env
from tests.serve_process import free_port


def _body(i: int, stream: bool, max_tokens: int = 16) -> dict[str, Any]:
    return {
        "model": "default",
        "messages": [
            {"role": "system", "content": "You are a careful judge."},
            {"role": "user", "content": f"Is statement {i} supported by the text? Say yes or no."},
        ],
        "max_tokens": max_tokens,
        "stream": stream,
    }


def record_cassette(path: Path, count: int) -> None:
    """N exchanges keyed exactly as the server keys them, answered by a stand-in judge."""
    from offline_scorer.assembly.open import pinned_identity
    from offline_scorer.cassette.judge import CassetteJudge, RecordMode
    from offline_scorer.judging.protocol import Completion, JudgeBase, JudgeRequest, Usage
    from offline_scorer.models.registry import load_registry
    from offline_scorer.serve.translate import prepare
    from offline_scorer.serve.wire import parse_request

    class StandIn(JudgeBase):
        def complete(self, request: JudgeRequest) -> Completion:
            return Completion("Yes, the text supports it.", usage=Usage(40, 8, 0))

    identity = pinned_identity(load_registry().resolve("default"))
    if identity is None:
        raise SystemExit("the default model entry is not pinned; replay needs its pins")
    judge = CassetteJudge(path, mode=RecordMode.RECORD, identity=identity, live=StandIn())
    for i in range(count):
        judge.complete(prepare(parse_request(_body(i, False))).request)
    judge.close()


class Server:
    def __init__(self, *args: str, cpu: int | None = None) -> None:
        self.port = free_port()
        pin = ["taskset", "-c", str(cpu)] if cpu is not None else []
        cmd = [*pin, sys.executable, "-m", "offline_scorer", "serve", "--port", str(self.port)]
        self.process = subprocess.Popen(
            [*cmd, *args],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=repo_env(),
        )
        self.url = f"http://127.0.0.1:{self.port}/v1/chat/completions"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{self.port}/health").status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.1)
        raise SystemExit("serve did not start")

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=60)


async def _exchange(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, port: int, body: bytes
) -> bytes:
    """One HTTP/1.1 request on a kept-alive connection; the response body (chunked or not).

    A minimal client, because httpx costs more CPU per request than the server does, and the
    figure must be the server's."""
    writer.write(
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
        b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (port, len(body), body)
    )
    head = await reader.readuntil(b"\r\n\r\n")
    status = head.split(b" ", 2)[1]
    assert status == b"200", head
    lower = head.lower()
    if b"transfer-encoding: chunked" in lower:
        parts = []
        while True:
            size = int((await reader.readuntil(b"\r\n")).strip(), 16)
            parts.append(await reader.readexactly(size + 2))
            if size == 0:
                return b"".join(parts)
    length = int(lower.split(b"content-length: ", 1)[1].split(b"\r\n", 1)[0])
    return await reader.readexactly(length)


async def _hammer(port: int, count: int, clients: int) -> float:
    bodies = [json.dumps(_body(i, bool(i % 2))).encode() for i in range(count)]
    queue: asyncio.Queue[bytes] = asyncio.Queue()
    for body in bodies:
        queue.put_nowait(body)

    async def client() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        while not queue.empty():
            await _exchange(reader, writer, port, queue.get_nowait())
        writer.close()

    start = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    return count / (time.perf_counter() - start)


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def replay(count: int, clients: int, rounds: int) -> dict[str, Any]:
    scratch = "/dev/shm" if Path("/dev/shm").is_dir() else None
    with tempfile.TemporaryDirectory(dir=scratch) as tmp:
        cassette = Path(tmp) / "serve.oscas"
        record_cassette(cassette, count)
        server = Server("--record-mode", "replay", "--cassette", str(cassette), cpu=0)
        try:
            if hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) > 1:
                os.sched_setaffinity(0, {1})  # the clients on the other core
            asyncio.run(_hammer(server.port, min(count, 200), clients))  # warm-up
            rates, capacity = [], []
            for _ in range(rounds):
                cpu = _cpu_seconds(server.process.pid)
                rates.append(asyncio.run(_hammer(server.port, count, clients)))
                capacity.append(count / (_cpu_seconds(server.process.pid) - cpu))
        finally:
            server.stop()
    return {
        "replay_requests": count,
        "replay_clients": clients,
        "replay_requests_per_s_median": round(statistics.median(rates), 1),
        "replay_rounds": [round(r, 1) for r in rates],
        "replay_requests_per_server_cpu_s_median": round(statistics.median(capacity), 1),
    }


def overhead(count: int) -> dict[str, Any]:
    """Median live request time through the server vs in-process, same requests, same model."""
    from offline_scorer.backends.llama_cpp import load_judge
    from offline_scorer.serve.translate import prepare
    from offline_scorer.serve.wire import parse_request

    bodies = [_body(1000 + i, False, max_tokens=48) for i in range(count)]
    judge = load_judge("default", threads=2)
    server = Server("--record-mode", "off", "--threads", "2")
    served, direct = [], []
    try:
        with httpx.Client(timeout=300) as http:
            http.post(server.url, json=_body(0, False))  # load and warm the server's model
            judge.complete(prepare(parse_request(_body(0, False))).request)
            # alternate, so both see the same machine state; never both at once
            for body in bodies:
                start = time.perf_counter()
                response = http.post(server.url, json=body)
                served.append(time.perf_counter() - start)
                assert response.status_code == 200, response.text
                request = prepare(parse_request(body)).request
                start = time.perf_counter()
                judge.complete(request)
                direct.append(time.perf_counter() - start)
    finally:
        server.stop()
        judge.close()
    s, d = statistics.median(served), statistics.median(direct)
    return {
        "live_requests": count,
        "live_served_s_median": round(s, 4),
        "live_in_process_s_median": round(d, 4),
        "live_overhead_ms_median": round((s - d) * 1000, 2),
        "live_overhead_percent": round(100 * (s - d) / d, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=4000)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--live", type=int, default=8, help="live requests (0: skip)")
    args = parser.parse_args()
    figures = replay(args.requests, args.clients, args.rounds)
    print(
        f"replay: {figures['replay_requests_per_s_median']:,.0f} requests/s (median of "
        f"{args.rounds}; {args.requests:,} requests, {args.clients} clients, server on one core; "
        f"{figures['replay_requests_per_server_cpu_s_median']:,.0f} per second of server CPU); "
        "goal > 1,000"
    )
    if args.live:
        figures.update(overhead(args.live))
        print(
            f"live: {figures['live_served_s_median']:.3f} s per request served, "
            f"{figures['live_in_process_s_median']:.3f} s in-process: overhead "
            f"{figures['live_overhead_ms_median']} ms ({figures['live_overhead_percent']}%); "
            "goal < 5%"
        )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
