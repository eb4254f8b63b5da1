"""A real OpenAI-compatible HTTP server for judge tests: ``POST /v1/chat/completions`` on 127.0.0.1.

Reusable: ``from tests.judgeserver import judge_server, dead_url, litellm`` (e.g. in a conftest.py) gives the
fixtures. ``litellm`` skips a test when the ``judge`` extra is missing and otherwise imports litellm the way the
plugin does (offline, quiet) before the test: never ``pytest.importorskip("litellm")`` (that imports it with its
network price-map fetch), and an inline ``pytester.runpytest`` then reuses the import instead of paying ~5 s.

    server.script = [ok({"bucket": "hard", "reason": "..."}), http(500), text("not json"), slow(5, ok({...}))]
    server.responder = lambda req: ok({...})   # req: {"model", "messages", "system", "prompt", "purpose", ...}

Replies come from ``script`` (consumed in order) while it lasts, then from ``responder``, else a 500 saying no
reply was scripted. The server counts ``calls`` (every POST), keeps the parsed ``requests`` and the highest
number of requests in flight at once (``max_in_flight``); ``hold`` makes the first requests wait until that many
are in flight (or ``hold_timeout`` passes; once only), so a concurrency test needs no timing assumptions.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass
class Reply:
    status: int = 200
    content: str | None = None  # the assistant message content (HTTP 200)
    delay: float = 0.0  # seconds to wait before answering
    usage: tuple[int, int] = (100, 20)  # prompt_tokens, completion_tokens
    raw: bytes | None = None  # a raw body instead of a chat completion
    trickle: float = 0.0  # > 0: the whole response (status line, headers, body) sent one byte per this many seconds


def ok(obj: Any, **kw: Any) -> Reply:
    """A valid chat completion whose content is ``obj`` as JSON."""
    return Reply(content=json.dumps(obj), **kw)


def text(s: str, **kw: Any) -> Reply:
    """A chat completion whose content is ``s`` as given (garbage, fenced JSON, prose ...)."""
    return Reply(content=s, **kw)


def http(status: int, message: str = "scripted error") -> Reply:
    return Reply(status=status, raw=json.dumps({"error": {"message": message, "type": "server_error",
                                                          "code": status}}).encode())


def slow(seconds: float, reply: Reply) -> Reply:
    return Reply(status=reply.status, content=reply.content, delay=seconds, usage=reply.usage, raw=reply.raw)


def trickle(interval: float, reply: Reply) -> Reply:
    """``reply`` sent one byte every ``interval`` seconds, from the status line on: never idle long enough for an
    inactivity (read) timeout, so only a total deadline ends it."""
    return Reply(status=reply.status, content=reply.content, usage=reply.usage, raw=reply.raw, trickle=interval)


class JudgeServer:
    def __init__(self) -> None:
        self.script: list[Reply] = []
        self.responder: Callable[[dict[str, Any]], Reply] | None = None
        self.requests: list[dict[str, Any]] = []
        self.calls = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.hold = 0
        self.hold_timeout = 10.0
        self._released = False
        self._cond = threading.Condition()
        self._stop = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                server._handle(self)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def start(self) -> JudgeServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        self.httpd.shutdown()
        self.httpd.server_close()

    def purposes(self) -> list[str]:
        return [r["purpose"] for r in self.requests]

    def _next(self, req: dict[str, Any]) -> Reply:
        with self._cond:
            if self.script:
                return self.script.pop(0)
        if self.responder is not None:
            return self.responder(req)
        return http(500, "no reply scripted")

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        length = int(h.headers.get("Content-Length") or 0)
        body = h.rfile.read(length)
        try:
            doc = json.loads(body)
        except ValueError:
            doc = {}
        msgs = doc.get("messages") or []
        req = {"path": h.path, "model": doc.get("model"), "messages": msgs,
               "system": next((m.get("content") for m in msgs if m.get("role") == "system"), ""),
               "prompt": next((m.get("content") for m in msgs if m.get("role") == "user"), ""),
               "purpose": h.headers.get("X-Trajaudit-Purpose"), "authorization": h.headers.get("Authorization"),
               "response_format": doc.get("response_format"), "temperature": doc.get("temperature")}
        with self._cond:
            self.calls += 1
            self.requests.append(req)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self._cond.notify_all()
            if self.hold and not self._released:
                if self.in_flight >= self.hold:
                    self._released = True  # one-shot: the waiting requests go, later ones are not held
                    self._cond.notify_all()
                self._cond.wait_for(lambda: self._released or self._stop.is_set(), self.hold_timeout)
                self._released = True
        try:
            if not h.path.rstrip("/").endswith("/chat/completions"):
                reply = http(404, f"no route {h.path}")
            else:
                reply = self._next(req)
            if reply.delay:
                self._stop.wait(reply.delay)
            if reply.raw is not None:
                payload = reply.raw
            else:
                payload = json.dumps({
                    "id": f"chatcmpl-{self.calls}", "object": "chat.completion", "created": 0,
                    "model": req["model"] or "unknown",
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": reply.content}}],
                    "usage": {"prompt_tokens": reply.usage[0], "completion_tokens": reply.usage[1],
                              "total_tokens": sum(reply.usage)}}).encode()
            if reply.trickle:
                head = (f"HTTP/1.1 {reply.status} OK\r\nContent-Type: application/json\r\n"
                        f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n").encode()
                for i in range(len(head) + len(payload)):
                    if self._stop.wait(reply.trickle):
                        break
                    h.wfile.write((head + payload)[i:i + 1])
                    h.wfile.flush()
                h.close_connection = True
                return
            h.send_response(reply.status)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(payload)))
            h.end_headers()
            h.wfile.write(payload)
        except OSError:  # the client gave up (timeout): nothing to answer
            pass
        finally:
            with self._cond:
                self.in_flight -= 1


@pytest.fixture
def litellm() -> None:
    import importlib.util

    if importlib.util.find_spec("litellm") is None:
        pytest.skip("litellm (the 'judge' extra) is not installed")
    from pytest_trajaudit.judges.call import _lib

    _lib()


@pytest.fixture
def judge_server() -> Iterator[JudgeServer]:
    server = JudgeServer().start()
    try:
        yield server
    finally:
        server.stop()


def free_port() -> int:
    """A port nobody listens on (bound, then closed)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def dead_url() -> str:
    """The base URL of a dead port on 127.0.0.1 (connection refused)."""
    return f"http://127.0.0.1:{free_port()}/v1"
