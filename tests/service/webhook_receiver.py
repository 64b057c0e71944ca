"""A webhook receiver on loopback: keeps every request it gets, answers 204, or a failure
for as many requests as it is told to fail."""

import socket
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import orjson
from standardwebhooks.webhooks import Webhook


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes
    arrived: float = field(default_factory=time.time)  # epoch seconds

    @property
    def message(self) -> dict:
        return orjson.loads(self.body)


@dataclass
class Receiver:
    url: str
    received: list[Received] = field(default_factory=list)
    failing: int = 0  # fail this many more requests
    fail_every: int = 0  # and, when set, every request whose count is a multiple of it
    status: int = 204
    failure: int = 500
    delay: float = 0.0  # seconds each request waits for its answer (a slow receiver)
    lock: threading.Lock = field(default_factory=threading.Lock)
    open: set = field(default_factory=set)  # the sockets of the connections it holds open
    connections: int = 0  # how many it accepted in all

    server: Any = None

    def wrap(self, context: ssl.SSLContext) -> None:
        """Serve HTTPS from now on, with `context`'s certificate."""
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)

    def drop_connections(self) -> None:
        """Close every open connection, as a receiver does with idle ones after a while."""
        for connection in list(self.open):
            connection.shutdown(socket.SHUT_RDWR)

    def verified(self, secret: str) -> list[dict]:
        """Every message received, each checked with the Standard Webhooks library."""
        hook = Webhook(secret)
        return [hook.verify(kept.body, kept.headers) for kept in list(self.received)]

    def delivered(self) -> list[dict]:
        """The distinct messages that got a 2xx, in the order their first 2xx came."""
        seen: dict[str, dict] = {}
        for kept in list(self.received):
            if kept.headers.get("answered") == "ok":
                seen.setdefault(kept.headers["webhook-id"], kept.message)
        return list(seen.values())


@contextmanager
def receiver(path: str = "/hooks") -> Iterator[Receiver]:
    """A receiver listening on 127.0.0.1 (a free port) until the block ends."""
    holder: list[Receiver] = []

    class Handler(BaseHTTPRequestHandler):
        # Keep-alive, as a receiver behind any web server answers (its answers all have a
        # Content-Length): deliverers send each message on a connection already open.
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            holder[0].open.add(self.connection)
            holder[0].connections += 1

        def finish(self) -> None:
            holder[0].open.discard(self.connection)
            super().finish()

        def do_POST(self) -> None:
            got = holder[0]
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            time.sleep(got.delay)
            headers = {key.lower(): value for key, value in self.headers.items()}
            with got.lock:
                fail = got.failing > 0
                got.failing -= fail
                fail = fail or bool(got.fail_every and len(got.received) % got.fail_every == 0)
                headers["answered"] = "failed" if fail else "ok"
                got.received.append(Received(headers, body))
            self.send_response(got.failure if fail else got.status)
            if got.failure in (301, 302, 307, 308):
                self.send_header("Location", f"{got.url}/elsewhere")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            """Quiet."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    holder.append(Receiver(f"http://127.0.0.1:{server.server_port}{path}", server=server))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield holder[0]
    finally:
        server.shutdown()
        server.server_close()

