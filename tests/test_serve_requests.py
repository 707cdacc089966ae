"""Bad requests to a real `serve` on loopback: each gets its 4xx, OpenAI's error shape and one
clear message, and the server keeps serving after every one.

One server runs in auto mode with an API key (the model loads only for the request that needs
it: the prompt over the context); a second one replays with the model runtime import-blocked.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from tests.serve_process import Server, chat, serving

KEY = "test-key-0123"
AUTH = {"Authorization": f"Bearer {KEY}"}
HELLO = [{"role": "user", "content": "Say hello."}]
TOO_LONG = [{"role": "user", "content": "word " * 9000}]

# (name, body (dict: sent as JSON; bytes: sent as is), extra headers, status, code, words in
# the message)
CASES: list[tuple[str, object, dict[str, str], int, str | None, str]] = [
    ("malformed JSON", b'{"model": "default", "messages": [', {}, 400, None, "not valid JSON"),
    ("NaN is not JSON", b'{"model": "default", "temperature": NaN}', {}, 400, None, "NaN"),
    ("body not an object", b"[1, 2]", {}, 400, None, "must be a JSON object"),
    ("no messages field", {"model": "default"}, {}, 400, None, "missing required field"),
    ("empty messages", chat([]), {}, 400, None, "at least 1 item"),
    ("unknown role", chat([{"role": "wizard", "content": "x"}]), {}, 400, None, "role"),
    ("content of the wrong type", chat([{"role": "user", "content": 5}]), {}, 400, None, "content"),
    (
        "image part",
        chat([{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]),
        {},
        400,
        None,
        "'text'",
    ),
    (
        "no user text",
        chat([{"role": "system", "content": "Be brief."}]),
        {},
        400,
        None,
        "no user text",
    ),
    ("unknown field", chat(HELLO, foo=1), {}, 400, "unknown_parameter", "'foo'"),
    ("temperature of the wrong type", chat(HELLO, temperature="hot"), {}, 400, None, "temperature"),
    ("temperature above 0", chat(HELLO, temperature=0.7), {}, 400, None, "greedily"),
    ("n above 1", chat(HELLO, n=2), {}, 400, "unsupported_parameter", "one choice"),
    ("stop sequences", chat(HELLO, stop=["\n"]), {}, 400, "unsupported_parameter", "stop"),
    ("tools", chat(HELLO, tools=[{"type": "function"}]), {}, 400, "unsupported_parameter", "tools"),
    ("max_tokens 0", chat(HELLO, max_tokens=0), {}, 400, None, "max_tokens"),
    ("unknown model", chat(HELLO, model="gpt-4o"), {}, 404, "model_not_found", "gpt-4o"),
    (
        "json_schema without a schema",
        chat(HELLO, response_format={"type": "json_schema", "json_schema": {"name": "x"}}),
        {},
        400,
        None,
        "json_schema.schema",
    ),
    (
        "schema the compiler cannot run",
        chat(
            HELLO,
            response_format={
                "type": "json_schema",
                "json_schema": {
                    "name": "x",
                    "schema": {"type": "object", "if": {"type": "string"}},
                },
            },
        ),
        {},
        400,
        "invalid_schema",
        '"if"',
    ),
    (
        "unknown response_format type",
        chat(HELLO, response_format={"type": "xml"}),
        {},
        400,
        None,
        "response_format.type",
    ),
    (
        "stream_options without stream",
        chat(HELLO, stream_options={"include_usage": True}),
        {},
        400,
        None,
        "stream_options",
    ),
    ("too many messages", chat(HELLO * 300), {}, 400, None, "over this server's limit"),
    (
        "body too large",
        chat([{"role": "user", "content": "x" * (9 * 2**20)}]),
        {},
        413,
        None,
        "limit",
    ),
    ("not JSON content type", chat(HELLO), {"Content-Type": "text/plain"}, 415, None, "not JSON"),
    ("no API key", chat(HELLO), {"Authorization": ""}, 401, "invalid_api_key", "API key"),
    (
        "wrong API key",
        chat(HELLO),
        {"Authorization": "Bearer nope"},
        401,
        "invalid_api_key",
        "API key",
    ),
    ("prompt over the context", chat(TOO_LONG), {}, 400, "context_length_exceeded", "context"),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("serve-requests")
    with serving(
        tmp,
        "--record-mode",
        "auto",
        "--cassette",
        str(tmp / "c.oscas"),
        "--api-key",
        KEY,
        "--threads",
        "2",
    ) as running:
        yield running


def _post(server: Server, body: object, headers: dict[str, str]) -> httpx.Response:
    merged = {"Content-Type": "application/json", **AUTH, **headers}
    merged = {k: v for k, v in merged.items() if v}
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx.post(
        f"{server.base_url}/chat/completions", content=content, headers=merged, timeout=120
    )


def _assert_openai_error(response: httpx.Response, status: int, code: str | None, words: str):
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"}
    error = body["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert isinstance(error["message"], str) and "\n" not in error["message"]
    assert words in error["message"], error["message"]
    assert error["type"] in {"invalid_request_error", "authentication_error"}
    if code is not None:
        assert error["code"] == code


@pytest.mark.live
@pytest.mark.parametrize(
    ("body", "headers", "status", "code", "words"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_a_bad_request_gets_its_4xx_and_the_server_keeps_serving(
    server: Server,
    body: object,
    headers: dict[str, str],
    status: int,
    code: str | None,
    words: str,
) -> None:
    _assert_openai_error(_post(server, body, headers), status, code, words)
    assert server.alive()
    assert httpx.get(f"http://127.0.0.1:{server.port}/health", timeout=10).status_code == 200


def test_at_least_fifteen_kinds_of_bad_request_are_listed() -> None:
    assert len({case[0] for case in CASES}) == len(CASES) >= 15


@pytest.mark.live
def test_routing_errors_use_the_same_shape(server: Server) -> None:
    root = f"http://127.0.0.1:{server.port}"
    _assert_openai_error(httpx.get(f"{root}/v1/nothing", headers=AUTH), 404, None, "no such")
    _assert_openai_error(
        httpx.get(f"{root}/v1/chat/completions", headers=AUTH), 405, None, "not allowed"
    )


@pytest.mark.live
def test_an_error_after_the_headers_of_a_stream_is_one_error_event(server: Server) -> None:
    """Streams send headers at once, so a prompt over the context is reported in the stream."""
    with httpx.stream(
        "POST",
        f"{server.base_url}/chat/completions",
        json=chat(TOO_LONG, stream=True),
        headers=AUTH,
        timeout=120,
    ) as response:
        assert response.status_code == 200
        events = [line for line in response.iter_lines() if line.startswith("data: ")]
    assert len(events) == 1
    error = json.loads(events[0].removeprefix("data: "))["error"]
    assert error["code"] == "context_length_exceeded"


def test_a_replay_miss_names_what_differed(tmp_path) -> None:
    """No model runtime at all; the request is not in the cassette: a 404 saying so."""
    from tests.conftest import FIXTURES

    with serving(
        tmp_path,
        "--record-mode",
        "replay",
        "--cassette",
        str(FIXTURES / "cassettes/fixtures.oscas"),
        block_runtime=True,
    ) as running:
        for stream in (False, True):
            response = httpx.post(
                f"{running.base_url}/chat/completions",
                json=chat(HELLO, stream=stream),
                timeout=30,
            )
            _assert_openai_error(response, 404, "cassette_miss", "no recorded answer")
            assert "holds no 'chat' exchange" in response.json()["error"]["message"]
        assert running.alive()


def test_a_non_loopback_host_needs_a_key() -> None:
    import subprocess
    import sys

    from tests.conftest import ROOT

    done = subprocess.run(
        [sys.executable, "-m", "offline_scorer", "serve", "--host", "0.0.0.0", "--port", "1"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "--api-key" in done.stderr
