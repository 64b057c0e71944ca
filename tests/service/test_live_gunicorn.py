"""Live play on real gunicorn (production config, gevent worker) with real Redis: hundreds
of open event streams on one worker while moves are answered, resumption, and a turn timer
firing with nobody connected."""

import time

import pytest
import redis
import requests

from tests.gunicorn_server import gunicorn
from tests.service.live_client import Stream
from tests.service.sessions_client import Seat
from tests.service.stream_sockets import Streams

HUMANS = [{"type": "human"}, {"type": "human"}]
STREAMS = 500
SESSIONS = 50


@pytest.fixture
def served(redis_url, tmp_path):
    with gunicorn(
        tmp_path / "gunicorn.log",
        REDIS_URL=redis_url,
        WEB_CONCURRENCY="1",
        GUNICORN_WORKER_CLASS="gevent",
        STREAM_PING_SECONDS="5",
        TIMER_SCAN_SECONDS="0.2",
        MAX_WAITERS_PER_TOKEN="1000",  # each token opens many streams here
        CLIENT_SEEDS="true",
        LOG_LEVEL="warning",
    ) as server:
        yield server


def create(base: str, **extra) -> dict:
    body = {"game": "basra", "seats": HUMANS, **extra}
    response = requests.post(f"{base}/v1/sessions", json=body, timeout=30)
    assert response.status_code == 201, response.text
    return response.json()


def first_move(seat: Seat) -> requests.Response:
    seen = seat.get().json()
    move = seen["moves"][0]
    return seat.move({"card": move["card"], "capture": move["capture"]}, seen["version"])


def test_500_open_streams_on_one_worker_while_moves_are_answered(served, redis_url):
    created = [create(served.url, seed=f"many {n}", spectators=1) for n in range(SESSIONS)]
    streams = Streams(served.port)
    try:
        for n in range(STREAMS):
            session = created[n % SESSIONS]
            token = session["spectators"][0]["token"] if n % 2 else session["seats"][1]["token"]
            streams.connect(session["id"], token)
        assert streams.pinged(60)
        assert all(s.received.startswith(b"HTTP/1.1 200") for s in streams.open)
        # One Redis subscription for the whole worker, whatever the number of streams.
        with redis.Redis.from_url(redis_url) as client:
            assert len(client.client_list(_type="pubsub")) == 1
        slowest = 0.0
        for session in created:
            seat = Seat(served.url, session["id"], session["seats"][0]["token"], [])
            started = time.monotonic()
            assert first_move(seat).status_code == 200
            slowest = max(slowest, time.monotonic() - started)
            streams.pump(0)
        # Bounded, not a benchmark: far below a stuck worker's seconds.
        assert slowest < 2.0
        assert streams.until(
            lambda: all(s.has(b"id: 1\nevent: events\ndata: [") for s in streams.open), 60
        )
        assert not any(s.has(b"id: 2\n") for s in streams.open)
    finally:
        streams.close()


def test_a_stream_dropped_and_resumed_with_last_event_id_sees_every_version_once(served):
    session = create(served.url, seed="resume")
    seats = [Seat(served.url, session["id"], entry["token"], []) for entry in session["seats"]]
    with Stream(seats[0].url, seats[0].token, params={"after": 0}) as first:
        for turn in range(4):
            assert first_move(seats[turn % 2]).status_code == 200
        first.until_version(4)
    for turn in range(4, 9):
        assert first_move(seats[turn % 2]).status_code == 200
    resume = {"Last-Event-ID": str(first.versions()[-1])}
    with Stream(seats[0].url, seats[0].token, headers=resume) as second:
        second.until_version(9)
    assert first.versions() + second.versions() == list(range(1, 10))


def test_a_turn_timer_fires_with_nobody_connected(served, redis_url):
    session = create(served.url, seed="nobody", turn_seconds=1, spectators=1)
    key = f"cards:{{{session['id']}}}:session"

    def version() -> int:
        with redis.Redis.from_url(redis_url) as client:
            return int(client.hget(key, "version"))

    # Nobody calls the service meanwhile (Redis is watched directly): only the worker's own
    # scanner can fire the timers, seat 0's and then seat 1's.
    deadline = time.monotonic() + 30
    while version() < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert version() >= 2
    reader = Seat(served.url, session["id"], session["spectators"][0]["token"], [])
    events = reader.events(0).json()
    assert events[0] == {"type": "timeout", "seat": 0, "version": 1}
    assert {"type": "timeout", "seat": 1, "version": 2} in events
    assert reader.get().json()["deadline"] is not None
    metrics = requests.get(f"{served.url}/metrics", timeout=10).text
    assert 'player="timeout"' in metrics  # counted as the server's moves, not a human's
