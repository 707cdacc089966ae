"""A loopback proxy in front of `serve` that keeps every request a client sends, as sent.

The eval frameworks' tests and `benchmarks.serve_clients` put it between the client and the
server, so what a client sends (its fields, response format, streaming, retries) is measured from
its own requests, not read from its source:

    with serving(tmp_path, ...) as server, RequestLog(server.port) as log:
        run_client(log.base_url, ...)
    log.requests  # [Sent(method, path, body, status), ...] in arrival order

The proxy forwards each request to 127.0.0.1:PORT unchanged (headers except hop-by-hop ones)
and sends the server's whole answer back once it has it: a stream arrives at the client in one
piece, which OpenAI clients read like any other stream.
"""

from __future__ import annotations

import http.client
import json
import threading
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "host"}
)
# serve answers a waiting stream with keep-alive comments; a judge answer takes minutes at worst.
UPSTREAM_TIMEOUT_S = 1800


@dataclass(frozen=True)
class Sent:
    """One request as the client sent it, and the status the server gave it."""

    method: str
    path: str
    body: Any  # parsed JSON, or None
    status: int

    def fields(self) -> tuple[str, ...]:
        return tuple(sorted(self.body)) if isinstance(self.body, dict) else ()


@dataclass
class RequestLog:
    """Forwards 127.0.0.1:<own port> to 127.0.0.1:`upstream_port` and logs every request."""

    upstream_port: int
    requests: list[Sent] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> RequestLog:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()

    def chat_requests(self) -> list[Sent]:
        return [r for r in self.requests if r.path.rstrip("/").endswith("/chat/completions")]

    def _keep(self, sent: Sent) -> None:
        with self._lock:
            self.requests.append(sent)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        log = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def _forward(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
                upstream = http.client.HTTPConnection(
                    "127.0.0.1", log.upstream_port, timeout=UPSTREAM_TIMEOUT_S
                )
                try:
                    upstream.request(self.command, self.path, body=raw or None, headers=headers)
                    reply = upstream.getresponse()
                    payload = reply.read()
                    status = reply.status
                    reply_headers = [
                        (k, v) for k, v in reply.getheaders() if k.lower() not in HOP_BY_HOP
                    ]
                finally:
                    upstream.close()
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                log._keep(Sent(self.command, self.path, body, status))
                self.send_response(status)
                for key, value in reply_headers:
                    if key.lower() != "content-length":
                        self.send_header(key, value)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = _forward

        return Handler


def summary(requests: Iterable[Sent]) -> dict[str, Any]:
    """What a client sent, measured: how many chat requests, the fields they carried (and how
    often), response formats, streaming, statuses, and repeats of an identical body (retries)."""
    chats = [r for r in requests if r.path.rstrip("/").endswith("/chat/completions")]
    fields: Counter[str] = Counter()
    formats: Counter[str] = Counter()
    streams: Counter[str] = Counter()
    for sent in chats:
        fields.update(sent.fields())
        body = sent.body if isinstance(sent.body, dict) else {}
        fmt = body.get("response_format")
        formats[fmt.get("type", "?") if isinstance(fmt, dict) else "none"] += 1
        streams[str(bool(body.get("stream")))] += 1
    bodies = Counter(json.dumps(r.body, sort_keys=True) for r in chats)
    return {
        "chat_requests": len(chats),
        "fields": dict(sorted(fields.items())),
        "response_format": dict(sorted(formats.items())),
        "stream": dict(sorted(streams.items())),
        "status": dict(sorted(Counter(str(r.status) for r in chats).items())),
        "repeated_bodies": sum(n - 1 for n in bodies.values()),
        "other_requests": sorted({f"{r.method} {r.path}" for r in requests if r not in chats}),
    }
