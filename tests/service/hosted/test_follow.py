"""A waiting reader whose client went away is freed within 2 s — an event stream between
pings and a long poll alike — on both stores behind a threaded server, and on real gunicorn
(gevent) with Redis, where the metrics count the open streams of every worker."""

import socket
import time

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from tests.gunicorn_server import gunicorn
from tests.service.sessions_client import serving

FREED_WITHIN = 2.0
HUMANS = [{"type": "human"}, {"type": "human"}]


def opened(base: str) -> dict:
    body = {"game": "basra", "seats": HUMANS}
    return requests.post(f"{base}/v1/sessions", json=body, timeout=30).json()


def waiting_reader(port: int, created: dict, path: str) -> socket.socket:
    """A client that asks for `path` of the session with seat 0's token and reads nothing."""
    client = socket.create_connection(("127.0.0.1", port), timeout=10)
    token = created["seats"][0]["token"]
    client.sendall(
        f"GET /v1/sessions/{created['id']}/{path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {token}\r\n\r\n".encode()
    )
    return client


def seconds_until(check, within: float = 30.0) -> float:
    """How long until check() holds (failing the test past `within`)."""
    started = time.monotonic()
    while not check():
        assert time.monotonic() - started < within, "never happened"
        time.sleep(0.02)
    return time.monotonic() - started


# What a client sends after its request before it leaves: nothing, or a pipelined request,
# whose bytes hide the closed connection from a peek (the TCP state still tells).
PIPELINED = b"GET /livez HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


@pytest.mark.parametrize("sent", [b"", PIPELINED], ids=["nothing more", "a pipelined request"])
def test_a_reader_whose_client_left_is_freed_within_2_s(hosted_config, sent):
    config = {**hosted_config, "LONG_POLL_SECONDS": 60.0, "STREAM_PING_SECONDS": 60.0}
    with serving(config) as (base, app):
        hub = app.extensions["sessions"].hub
        created = opened(base)
        port = int(base.rsplit(":", 1)[1])
        for path in ("stream", "events?after=0"):
            client = waiting_reader(port, created, path)
            seconds_until(lambda: hub.waiting() == 1)
            if sent:
                client.sendall(sent)
                time.sleep(0.3)
            client.close()
            assert seconds_until(lambda: hub.waiting() == 0) < FREED_WITHIN, path


def open_streams(base: str) -> float:
    answer = requests.get(f"{base}/metrics", timeout=10).text
    return sum(
        sample.value
        for family in text_string_to_metric_families(answer)
        for sample in family.samples
        if sample.name == "cards_event_streams_open"
    )


def test_on_gunicorn_a_stream_whose_client_left_is_freed_within_2_s(redis_url, tmp_path):
    with gunicorn(
        tmp_path / "gunicorn.log",
        REDIS_URL=redis_url,
        WEB_CONCURRENCY="1",
        STREAM_PING_SECONDS="60",
        PROMETHEUS_MULTIPROC_DIR=str(tmp_path / "metrics"),
        LOG_LEVEL="warning",
    ) as server:
        created = opened(server.url)
        clients = [waiting_reader(server.port, created, "stream") for _ in range(3)]
        seconds_until(lambda: open_streams(server.url) == 3)
        for client in clients:
            client.close()
        assert seconds_until(lambda: open_streams(server.url) == 0) < FREED_WITHIN


def test_a_stream_the_store_fails_under_ends_whole_asking_its_client_back(open_hosted):
    """No traceback and no cut chunk per stream in an outage: the stream's last message
    asks its client to reconnect (with Last-Event-ID), and its reader's place is freed."""
    from service.store import StoreUnavailable

    sessions = open_hosted(STREAM_PING_SECONDS=0.1)
    created = sessions.create({"game": "basra", "seats": HUMANS}, None)
    token = f"Bearer {created['seats'][0]['token']}"
    messages = sessions.stream(created["id"], token, None)
    assert next(messages) == ": ping\n\n"

    def unreachable(*args):
        raise StoreUnavailable("Redis is unavailable: the test's outage")

    sessions.store.exists = unreachable  # the look a quiet stream takes at each ping
    rest = list(messages)
    assert rest[-1] == "retry: 1000\n: the session store is unavailable; reconnect\n\n"
    assert sessions.hub.waiting() == 0


def test_a_stream_of_a_stopping_worker_ends_whole_asking_its_client_back(open_hosted):
    """A worker told to stop (a deploy) drains its hub: a waiting stream ends at once, its
    last message asking its client to reconnect elsewhere, and its reader's place is freed."""
    sessions = open_hosted(STREAM_PING_SECONDS=60)
    created = sessions.create({"game": "basra", "seats": HUMANS}, None)
    messages = sessions.stream(created["id"], f"Bearer {created['seats'][0]['token']}", None)
    assert next(messages) == ": ping\n\n"
    sessions.hub.drain()
    assert list(messages) == ["retry: 1000\n: this server is stopping; reconnect\n\n"]
    assert sessions.hub.waiting() == 0
