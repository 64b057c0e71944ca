"""Many event streams held open at once from one thread: plain sockets and a selector (a
thread per stream would measure the test, not the server). Shared by tests and bench/."""

import contextlib
import selectors
import socket
import time
from dataclasses import dataclass, field


@dataclass
class OpenStream:
    sock: socket.socket
    session_id: str
    token: str
    after: int | None
    received: bytearray = field(default_factory=bytearray)

    def has(self, text: bytes) -> bool:
        return text in self.received

    def refused(self) -> bool:
        """Answered 503 (say no Redis connection was free in time: the pool is bounded)."""
        return self.received.startswith(b"HTTP/1.1 503")


class Streams:
    """`GET /v1/sessions/{id}/stream` on many sockets; `pump` reads whatever arrived."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.selector = selectors.DefaultSelector()
        self.open: list[OpenStream] = []

    def connect(self, session_id: str, token: str, after: int | None = None) -> OpenStream:
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        query = "" if after is None else f"?after={after}"
        request = (
            f"GET /v1/sessions/{session_id}/stream{query} HTTP/1.1\r\n"
            f"Host: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
            "Accept: text/event-stream\r\n\r\n"
        )
        sock.sendall(request.encode())
        sock.setblocking(False)
        stream = OpenStream(sock, session_id, token, after)
        self.selector.register(sock, selectors.EVENT_READ, stream)
        self.open.append(stream)
        return stream

    def pump(self, timeout: float = 0.05) -> None:
        for key, _ in self.selector.select(timeout):
            stream: OpenStream = key.data
            try:
                chunk = stream.sock.recv(65536)
            except BlockingIOError:
                continue
            if chunk:
                stream.received.extend(chunk)
            else:
                self.selector.unregister(stream.sock)

    def until(self, check, within: float) -> bool:
        """Pump until check() holds (bounded); whether it does."""
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            if check():
                return True
            self.pump()
        return check()

    def reopen_refused(self) -> int:
        """Open again every stream answered 503, as a client does after its Retry-After;
        how many."""
        refused = [stream for stream in self.open if stream.refused()]
        for stream in refused:
            with contextlib.suppress(KeyError, ValueError):
                self.selector.unregister(stream.sock)
            stream.sock.close()
            self.open.remove(stream)
            self.connect(stream.session_id, stream.token, stream.after)
        return len(refused)

    def pinged(self, within: float, rounds: int = 5) -> bool:
        """Pump until every stream has its first ping, opening again (up to `rounds` times)
        those answered 503: streams opened at once queue for a worker's bounded Redis pool,
        and one that waited too long is refused, to be opened again as a client would."""
        for _ in range(rounds):
            self.until(lambda: all(s.has(b": ping") or s.refused() for s in self.open), within)
            if not self.reopen_refused():
                break
        return all(stream.has(b": ping") for stream in self.open)

    def close(self) -> None:
        for stream in self.open:
            with contextlib.suppress(KeyError, ValueError):
                self.selector.unregister(stream.sock)
            stream.sock.close()
        self.selector.close()
