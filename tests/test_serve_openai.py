"""The `openai` Python client against a real `serve`: record on the shipped GGUF, then replay
with the model runtime import-blocked and get the same bytes, streamed and not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import openai
import pytest

from offline_scorer.cassette.store.file import CassetteFile
from tests.serve_process import Server, serving

CITY = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "maxLength": 40},
        "country": {"type": "string", "maxLength": 40},
    },
    "required": ["city", "country"],
    "additionalProperties": False,
}
REQUESTS: list[dict[str, Any]] = [
    {"messages": [{"role": "user", "content": "Name one colour."}], "max_tokens": 12},
    {
        "messages": [
            {"role": "system", "content": "You answer with JSON only."},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Name a large city"},
                    {"type": "text", "text": "and the country it is in."},
                ],
            },
        ],
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "city", "schema": CITY, "strict": True},
        },
        "max_tokens": 64,
    },
    {
        "messages": [{"role": "user", "content": "Describe the sea as a JSON object."}],
        "response_format": {"type": "json_object"},
        "max_tokens": 48,
    },
    {
        # no sampling fields at all: greedy, the default budget
        "messages": [{"role": "user", "content": "Say yes or no: is water wet? One word."}],
    },
]


def _client(server: Server) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="unused", max_retries=0)


def _round(server: Server) -> list[str]:
    """Every request, plain and streamed (with a usage chunk), as the client parsed it."""
    client = _client(server)
    out = []
    for request in REQUESTS:
        whole = client.chat.completions.create(model="default", **request)
        out.append(whole.model_dump_json())
        stream = client.chat.completions.create(
            model="default", stream=True, stream_options={"include_usage": True}, **request
        )
        out.append(json.dumps([chunk.model_dump_json() for chunk in stream]))
    return out


@pytest.mark.live
def test_openai_client_round_trip_records_then_replays_identically(tmp_path: Path) -> None:
    cassette = tmp_path / "openai.oscas"
    args = ("--cassette", str(cassette), "--threads", "2")
    with serving(tmp_path, "--record-mode", "auto", *args) as live:
        recorded = _round(live)
    with serving(tmp_path, "--record-mode", "replay", *args, block_runtime=True) as replay:
        replayed = _round(replay)
        # a request the recording does not hold: the miss names the field that differs
        changed = {**REQUESTS[0], "max_tokens": 13}
        with pytest.raises(openai.NotFoundError) as missed:
            _client(replay).chat.completions.create(model="default", **changed)
        assert "max_tokens recorded 12 vs now 13" in str(missed.value)
    assert replayed == recorded
    with CassetteFile.open(cassette, create=False) as stored:
        assert stored.exchange_count == len(REQUESTS)  # stream or not: one exchange each

    for i in range(0, len(recorded), 2):
        whole = json.loads(recorded[i])
        chunks = [json.loads(c) for c in json.loads(recorded[i + 1])]
        text = "".join(
            c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"]
        )
        choice = whole["choices"][0]
        assert text == choice["message"]["content"]  # the stream carries the same answer
        assert chunks[-1]["usage"] == whole["usage"] and chunks[-1]["choices"] == []
        assert whole["usage"]["prompt_tokens"] > 0
        assert {c["id"] for c in chunks} == {whole["id"]}
        assert choice["finish_reason"] in {"stop", "length"}
    city = json.loads(json.loads(recorded[2])["choices"][0]["message"]["content"])
    jsonschema.validate(city, CITY)  # decoded under the schema the client sent


@pytest.mark.live
def test_headers_come_at_once_while_the_model_is_busy(tmp_path: Path) -> None:
    """A streamed request queued behind a slow one gets its headers (and keep-alives) at once."""
    import threading
    import time

    slow = {
        "model": "default",
        "messages": [{"role": "user", "content": "Tell a long story."}],
        "max_tokens": 200,
    }
    queued = {**slow, "max_tokens": 199, "stream": True}
    with serving(tmp_path, "--record-mode", "off", "--threads", "2") as server:
        worker = threading.Thread(
            target=httpx.post,
            args=(f"{server.base_url}/chat/completions",),
            kwargs={"json": slow, "timeout": 300},
        )
        worker.start()
        time.sleep(0.5)
        started = time.monotonic()
        with httpx.stream(
            "POST", f"{server.base_url}/chat/completions", json=queued, timeout=300
        ) as response:
            waited = time.monotonic() - started
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            lines = list(response.iter_lines())
        worker.join()
    assert waited < 1.0, f"headers took {waited:.2f} s"
    assert [line for line in lines if line][-1] == "data: [DONE]"
