"""A real `offline-scorer serve` process on a free loopback port, for the server's tests."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.conftest import ROOT, block_imports_code

RUNTIME = ("llama_cpp", "llguidance")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    def __init__(self, process: subprocess.Popen[str], port: int, log: Path) -> None:
        self.process = process
        self.port = port
        self.log = log
        self.base_url = f"http://127.0.0.1:{port}/v1"

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> int:
        """SIGTERM, as a service manager would; the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise


@contextmanager
def serving(
    tmp_path: Path,
    *args: str,
    block_runtime: bool = False,
    env: Mapping[str, str] | None = None,
    startup_timeout: float = 120,
    port: int | None = None,
) -> Iterator[Server]:
    """`offline-scorer serve ARGS --port P` until the block ends (then SIGTERM, exit 0)."""
    port = port or free_port()
    prefix = block_imports_code(*RUNTIME) if block_runtime else ""
    code = prefix + (
        "import sys\nfrom offline_scorer.cli.app import main\n"
        f"sys.argv = ['offline-scorer', 'serve', '--port', '{port}', *{list(args)!r}]\nmain()\n"
    )
    log = tmp_path / f"serve-{port}.log"
    proc_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    with log.open("w", encoding="utf-8") as out:
        process = subprocess.Popen(
            [sys.executable, "-c", code],
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
            env=proc_env,
            cwd=ROOT,
        )
    server = Server(process, port, log)
    try:
        _wait_ready(server, startup_timeout)
        yield server
    finally:
        code_at_exit = server.stop()
    assert code_at_exit == 0, f"serve exited {code_at_exit}:\n{server.log_text()[-3000:]}"


def _wait_ready(server: Server, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not server.alive():
            raise AssertionError(f"serve exited at start:\n{server.log_text()[-3000:]}")
        try:
            if httpx.get(f"http://127.0.0.1:{server.port}/health", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"serve not ready after {timeout} s:\n{server.log_text()[-3000:]}")


def chat(
    messages: Sequence[Mapping[str, object]], model: str = "default", **fields: object
) -> dict[str, object]:
    return {"model": model, "messages": list(messages), **fields}
