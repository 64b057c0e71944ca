"""A loopback TCP proxy in front of a real Redis that can lose one reply: armed with a
marker (a script's SHA), it relays the next command holding it to Redis as any other, then
drops the client's connection instead of relaying Redis's reply. Redis has run the command;
the client sees only a dropped connection, as after a network fault or a proxy restart."""

import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

CHUNK = 65536


class RedisProxy:
    """Relays every connection made to `address` to Redis at (`host`, `port`)."""

    def __init__(self, host: str, port: int) -> None:
        self.upstream = (host, port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.address = self.listener.getsockname()
        self.lock = threading.Lock()
        self.marker: bytes | None = None  # armed: the next command holding it loses its reply
        self.meanwhile: Callable[[], object] | None = None  # run before a reply is lost
        self.dropped = 0  # how many replies it lost
        self.sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True, name="redis-proxy").start()

    @property
    def url(self) -> str:
        return f"redis://{self.address[0]}:{self.address[1]}"

    def arm(self, marker: str, meanwhile: Callable[[], object] | None = None) -> None:
        """Lose the reply to the next command sent with `marker` in it; with `meanwhile`,
        call it once Redis has replied, before the connection is dropped (what lands
        before the client's retry)."""
        with self.lock:
            self.marker = marker.encode()
            self.meanwhile = meanwhile

    def close(self) -> None:
        self.listener.close()
        for sock in self.sockets:
            sock.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:  # closed
                return
            server = socket.create_connection(self.upstream)
            self.sockets += [client, server]
            losing = threading.Event()  # the reply on its way from Redis is to be lost
            threading.Thread(target=self._requests, args=(client, server, losing),
                             daemon=True).start()  # fmt: skip
            threading.Thread(target=self._replies, args=(server, client, losing),
                             daemon=True).start()  # fmt: skip

    def _requests(self, client: socket.socket, server: socket.socket, losing: threading.Event):
        """Client to Redis, noting a command that carries the armed marker. One chunk is one
        round of commands here (a client sends a round and reads its replies before the
        next), so the replies read after it are that round's."""
        while data := receive(client):
            with self.lock:
                if self.marker is not None and self.marker in data:
                    self.marker = None
                    losing.set()
            server.sendall(data)
        server.close()

    def _replies(self, server: socket.socket, client: socket.socket, losing: threading.Event):
        """Redis to client; a reply to be lost ends the client's connection instead."""
        while data := receive(server):
            if losing.is_set():
                with self.lock:
                    self.dropped += 1
                    meanwhile, self.meanwhile = self.meanwhile, None
                if meanwhile is not None:
                    meanwhile()
                client.shutdown(socket.SHUT_RDWR)
                client.close()
                server.close()
                return
            client.sendall(data)
        client.close()


def receive(sock: socket.socket) -> bytes:
    """The next bytes from `sock`, b'' once it is closed (by either end)."""
    try:
        return sock.recv(CHUNK)
    except OSError:
        return b""


@contextmanager
def proxy_to(host: str, port: int) -> Iterator[RedisProxy]:
    proxy = RedisProxy(host, port)
    try:
        yield proxy
    finally:
        proxy.close()
