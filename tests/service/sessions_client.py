"""A thin hosted-session client over real HTTP; the app on a real socket."""

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import requests
from flask import Flask
from werkzeug.serving import WSGIRequestHandler, make_server

from service import create_app


class QuietHandler(WSGIRequestHandler):
    def log_request(self, *args: Any) -> None:
        """Thousands of requests per test: no access log."""


@contextmanager
def serving(config: dict[str, Any]) -> Iterator[tuple[str, Flask]]:
    """create_app(config) behind werkzeug's threaded server on a free port; yields its URL
    and the app. Client seeds are allowed: these tests replay seeded games between human
    seats."""
    app = create_app({"CLIENT_SEEDS": True, **config})
    server = make_server("127.0.0.1", 0, app, threaded=True, request_handler=QuietHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", app
    finally:
        server.shutdown()
        thread.join()
        app.extensions["sessions"].close()


@contextmanager
def serve(config: dict[str, Any]) -> Iterator[str]:
    """`serving`, its URL only."""
    with serving(config) as (url, _):
        yield url


class Seat:
    """One token holder: sends its token with every call and records every byte it gets."""

    def __init__(self, base: str, session_id: str, token: str, received: list[bytes]) -> None:
        self.base = base
        self.url = f"{base}/v1/sessions/{session_id}"
        self.token = token
        self.received = received
        self.http = requests.Session()
        self.http.headers["Authorization"] = f"Bearer {token}"

    def _keep(self, response: requests.Response) -> requests.Response:
        self.received.append(response.content)
        return response

    def get(self) -> requests.Response:
        return self._keep(self.http.get(self.url, timeout=30))

    def move(self, move: object, version: int, key: str | None = None) -> requests.Response:
        headers = {"Idempotency-Key": key} if key else {}
        body = {"move": move, "version": version}
        return self._keep(
            self.http.post(f"{self.url}/moves", json=body, headers=headers, timeout=30)
        )

    def events(self, after: int) -> requests.Response:
        return self._keep(self.http.get(f"{self.url}/events", params={"after": after}, timeout=60))

    def delete(self) -> requests.Response:
        return self._keep(self.http.delete(self.url, timeout=30))


def create(
    base: str, seats: list[dict[str, Any]], headers: dict[str, str] | None = None, **extra: Any
) -> requests.Response:
    body = {"game": "basra", "rules": {"preset": "levantine"}, "seats": seats, **extra}
    return requests.post(f"{base}/v1/sessions", json=body, headers=headers, timeout=30)


def chosen(moves: list[dict[str, Any]], turn: int) -> dict[str, Any]:
    """A legal move picked from the list the server offers, varied by the turn number."""
    move = moves[turn % len(moves)]
    return {"card": move["card"], "capture": move["capture"]}
