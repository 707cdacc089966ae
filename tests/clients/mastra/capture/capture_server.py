"""Throwaway capture server: answers POST /chat/completions the way an OpenAI-compatible server
does (SSE chunks with a finish_reason and, when asked, a final usage chunk; or one JSON body when
"stream" is false) and saves every request it gets, so we can see exactly what Mastra sends.

Research tool only (stdlib http.server, no limits, no auth). Each request body is written, pretty
printed, to OUT_DIR/NNN.json and its headers to OUT_DIR/NNN.headers.json. The answer for each of
the summarization scorer's three prompts is built from the prompt itself (claims = the summary's
sentences, questions = the source's sentences turned into questions, coverage echoes the
questions, the reason is one sentence), so Mastra goes through all three steps.

    python3 capture_server.py OUT_DIR [PORT]     # prints "listening on http://127.0.0.1:PORT"

With CAPTURE_BAD_FIRST=N in the environment the first N requests get a non-JSON answer, to see
Mastra's structured-output fallback request (a 4th request, schema in the system message).
"""

import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

OUT = Path(sys.argv[1])
PORT = int(sys.argv[2]) if len(sys.argv) > 2 else 0
OUT.mkdir(parents=True, exist_ok=True)
LOCK = threading.Lock()
COUNT = [0]


def text_of(content):
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if part.get("type") == "text")


def between(text, start, end):
    i = text.rfind(start)
    if i < 0:
        return ""
    i += len(start)
    j = text.find(end, i) if end else -1
    return text[i:j] if j >= 0 else text[i:]


def sentences(text):
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s.strip()]


def answer_for(body):
    prompt = "\n".join(text_of(m["content"]) for m in body["messages"] if m["role"] == "user")
    if "Complete two independent parts." in prompt:
        source = between(prompt, "\n\nSource Text:\n", "\n\nSummary:\n")
        summary = between(prompt, "\n\nSummary:\n", "\n\nJSON:\n")
        alignment = [
            {"claim": s, "supported": True, "reason": "The source states this."}
            for s in sentences(summary)
        ]
        questions = [
            f"Does the source state that {s[0].lower()}{s[1:].rstrip('.')}?"
            for s in sentences(source)[:10]
        ]
        return json.dumps({"alignment": alignment, "questions": questions})
    if "Decide whether each question can be answered from the summary below." in prompt:
        block = between(prompt, "\n\nQuestions:\n", '\n\nSet "answered"')
        qs = [re.sub(r"^\[\d+\] ", "", line) for line in block.split("\n") if line]
        coverage = [
            {
                "question": q,
                "answered": i % 2 == 0,
                "reason": "The summary says so."
                if i % 2 == 0
                else "The summary does not mention it.",
            }
            for i, q in enumerate(qs)
        ]
        return json.dumps({"coverage": coverage})
    if "Explain the summarization score for the given summary." in prompt:
        score = between(prompt, "\nScore: ", " out of ")
        return (
            f"The score is {score} because coverage was the weaker axis: the summary leaves "
            "out several facts the source states."
        )
    return json.dumps({"note": "unrecognised prompt"})


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        sys.stderr.write("capture: " + fmt % args + "\n")

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with LOCK:
            COUNT[0] += 1
            n = COUNT[0]
        body = json.loads(raw)
        (OUT / f"{n:03d}.json").write_text(json.dumps(body, indent=2, ensure_ascii=False) + "\n")
        headers = {k.lower(): v for k, v in self.headers.items()}
        (OUT / f"{n:03d}.headers.json").write_text(
            json.dumps({"method": self.command, "path": self.path, "headers": headers}, indent=2)
            + "\n"
        )
        content = answer_for(body)
        if n <= int(os.environ.get("CAPTURE_BAD_FIRST", "0")):
            content = "Sure! Here is my answer: the summary looks fine."
        created = int(time.time())
        rid = f"chatcmpl-capture-{n}"
        model = body.get("model", "capture")
        usage = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
        if not body.get("stream"):
            out = json.dumps(
                {
                    "id": rid,
                    "object": "chat.completion",
                    "created": created,
                    "model": model,
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": content},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": usage,
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()

        def chunk(delta, finish=None, **extra):
            obj = {
                "id": rid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            obj.update(extra)
            self.wfile.write(f"data: {json.dumps(obj)}\n\n".encode())
            self.wfile.flush()

        chunk({"role": "assistant", "content": ""})
        for i in range(0, len(content), 40):
            chunk({"content": content[i : i + 40]})
        chunk({}, "stop")
        if (body.get("stream_options") or {}).get("include_usage"):
            obj = {
                "id": rid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [],
                "usage": usage,
            }
            self.wfile.write(f"data: {json.dumps(obj)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True


server = ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
print(f"listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
server.serve_forever()
