"""Record a real client's run through `serve`, then replay it with the model runtime blocked.

The eval-framework tests (DeepEval, promptfoo, Inspect) all ask the same question of `serve`:
does the client get the same bytes from a replay server, which cannot load a model, as from the
recording one? This runs both halves on the small judge and hands back what each saw, so each
test states only what is particular to its client.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from offline_scorer.cassette.store.file import CassetteFile
from tests.request_log import RequestLog, Sent
from tests.serve_process import serving

Run = TypeVar("Run")
Client = Callable[[str, Path], Run]
"""A client run: (base URL of the server, a working directory) -> what the client printed."""


@dataclass(frozen=True)
class RoundTrip(Generic[Run]):
    recording: Run
    replay: Run
    recorded: list[Sent]  # the chat requests the recording server answered
    replayed: list[Sent]  # the chat requests the replay server answered
    exchanges: int  # the exchanges the cassette holds after recording

    @property
    def statuses(self) -> set[int]:
        return {sent.status for sent in self.recorded + self.replayed}


def record_then_replay(tmp_path: Path, name: str, client: Client[Run]) -> RoundTrip[Run]:
    """`client` against `serve --record-mode record` on smollm2-135m, then against `serve
    --record-mode replay` on the same cassette with llama_cpp import-blocked."""
    cassette = tmp_path / f"{name}.oscas"
    args = ("--model", "smollm2-135m", "--cassette", str(cassette), "--threads", "2")
    with serving(tmp_path, "--record-mode", "record", *args) as live, RequestLog(live.port) as log:
        recording = client(log.base_url, tmp_path / "record")
    with CassetteFile.open(cassette, create=False) as stored:
        exchanges = stored.exchange_count
    with (
        serving(tmp_path, "--record-mode", "replay", *args, block_runtime=True) as server,
        RequestLog(server.port) as replay_log,
    ):
        replay = client(replay_log.base_url, tmp_path / "replay")
    return RoundTrip(recording, replay, log.chat_requests(), replay_log.chat_requests(), exchanges)
