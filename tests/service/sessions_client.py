"""A thin hosted-session client over real HTTP; the app on a real socket or real gunicorn."""

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import requests
from werkzeug.serving import WSGIRequestHandler, make_server

from service import create_app


class QuietHandler(WSGIRequestHandler):
    def log_request(self, *args: Any) -> None:
        """Thousands of requests per test: no access log."""


@contextmanager
def serve(config: dict[str, Any]) -> Iterator[str]:
    """create_app(config) behind werkzeug's threaded server on a free port; yields its URL."""
    app = create_app(config)
    server = make_server("127.0.0.1", 0, app, threaded=True, request_handler=QuietHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join()
        app.extensions["sessions"].store.close()


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


def create(base: str, seats: list[dict[str, Any]], **extra: Any) -> requests.Response:
    body = {"game": "basra", "rules": {"preset": "levantine"}, "seats": seats, **extra}
    return requests.post(f"{base}/v1/sessions", json=body, timeout=30)


def chosen(moves: list[dict[str, Any]], turn: int) -> dict[str, Any]:
    """A legal move picked from the list the server offers, varied by the turn number."""
    move = moves[turn % len(moves)]
    return {"card": move["card"], "capture": move["capture"]}


ROOT = Path(__file__).resolve().parents[2]
GUNICORN = Path(sys.executable).with_name("gunicorn")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def gunicorn(log: Path, **settings: str) -> Iterator[str]:
    """Real gunicorn with the production gunicorn.conf.py and these environment settings
    (REDIS_URL only when given); yields its URL once /livez answers."""
    port = free_port()
    env = {key: value for key, value in os.environ.items() if key != "REDIS_URL"}
    env.update(HOST="127.0.0.1", PORT=str(port), LOG_LEVEL="warning", **settings)
    with log.open("w") as out:
        server = subprocess.Popen(
            [str(GUNICORN), "-c", "gunicorn.conf.py"], cwd=ROOT, env=env, stdout=out, stderr=out
        )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_live(base, server)
        yield base
    finally:
        server.terminate()
        server.wait(timeout=20)


def wait_until_live(base: str, server: subprocess.Popen, limit: float = 30.0) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"gunicorn exited with status {server.returncode}")
        try:
            if requests.get(f"{base}/livez", timeout=1).status_code == 200:
                return
        except (requests.ConnectionError, requests.Timeout):
            pass  # not listening yet, or the worker is still importing the app
        time.sleep(0.1)
    raise TimeoutError("gunicorn did not come up")
