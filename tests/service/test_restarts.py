"""Restarts and deploys on real gunicorn (the shipped gunicorn.conf.py) and a real Redis: what
clients see when the service is stopped gracefully with readers waiting, and when a worker
is replaced."""

import os
import signal
import time
from pathlib import Path

import redis
import requests

from tests.gunicorn_server import ROOT, gunicorn
from tests.service.live_client import Stream
from tests.service.stream_sockets import Streams
from tests.service.webhook_receiver import receiver

STREAMS = 1000
DRAINED = b"retry: 1000\n: this server is stopping; reconnect\n\n\r\n0\r\n\r\n"


def exited(pid: int, within: float) -> bool:
    """Whether the process `pid` (a child of this one) exited within `within` seconds: gone,
    or a zombie left for its parent to reap."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state == "Z":
            return True
        time.sleep(0.1)
    return False


def test_a_graceful_stop_ends_1000_idle_streams_whole_within_the_graceful_timeout(
    redis_url, tmp_path
):
    """SIGTERM to the master (a deploy, a scale-down) with 1,000 idle streams open: each
    ends whole (its last chunk, then the end of the chunked body) asking its client to come
    back, its place under MAX_WAITERS_PER_TOKEN is given back, and the workers exit before
    gunicorn's graceful_timeout would cut anything."""
    log = tmp_path / "gunicorn.log"
    with gunicorn(
        log, REDIS_URL=redis_url, WEB_CONCURRENCY="2", MAX_WAITERS_PER_TOKEN=str(STREAMS),
        STREAM_PING_SECONDS="60", LOG_LEVEL="warning",
    ) as server:  # fmt: skip
        body = {"game": "basra", "seats": [{"type": "human"}] * 2, "spectators": 1}
        created = requests.post(f"{server.url}/v1/sessions", json=body, timeout=30).json()
        streams = Streams(server.port)
        try:
            for _ in range(STREAMS):
                streams.connect(created["id"], created["spectators"][0]["token"])
            assert streams.pinged(60)
            os.kill(server.pid, signal.SIGTERM)
            assert streams.until(lambda: all(s.received.endswith(DRAINED) for s in streams.open),
                                 30)  # fmt: skip
        finally:
            streams.close()
        assert exited(server.pid, 30)
    said = log.read_text()
    assert "Worker graceful timeout" not in said
    assert "SIGKILL" not in said
    with redis.Redis.from_url(redis_url) as client:  # every place given back, none left to lapse
        assert not list(client.scan_iter("cards:{readers:*"))


def test_without_redis_a_worker_is_never_recycled_and_the_start_says_sessions_die_with_it(
    tmp_path,
):
    """The in-process store holds every session in the one worker: gunicorn's max_requests
    would replace it, and every session with it, every so many requests. The start says
    where sessions live and that max_requests is off; past that many requests, they stay."""
    log = tmp_path / "gunicorn.log"
    with gunicorn(log, "--max-requests", "5", LOG_LEVEL="info") as server:
        body = {"game": "basra", "seats": [{"type": "human"}] * 2}
        created = requests.post(f"{server.url}/v1/sessions", json=body, timeout=30).json()
        seat = {"Authorization": f"Bearer {created['seats'][0]['token']}"}
        url = f"{server.url}/v1/sessions/{created['id']}"
        reads = [requests.get(url, headers=seat, timeout=30).status_code for _ in range(10)]
        assert reads == [200] * 10
        said = log.read_text()
    assert "Autorestarting worker" not in said
    assert (
        "Hosted sessions live in this process's memory: a restart, a reload (SIGHUP) or a "
        "worker replaced (timeout, out of memory) loses every one of them; set REDIS_URL to "
        "keep them in Redis (max_requests is off: each replacement would lose them)"
    ) in said


def test_a_deploy_hands_the_webhook_messages_its_workers_held_to_the_next_ones(
    redis_url, tmp_path
):
    """Every worker stopped gracefully (a deploy) while a slow receiver is still being sent
    a session's messages: the stopping worker finishes the message in flight and hands the
    session back to the schedule, so the new workers send the rest at once, in order, not
    once the old worker's claim has run out (WEBHOOK_TIMEOUT_SECONDS + 5 s, 65 s here). A
    stream open across it ends asking its client back, and resumed with Last-Event-ID it
    misses no version and repeats none."""
    with (
        receiver() as hook,
        gunicorn(
            tmp_path / "gunicorn.log", REDIS_URL=redis_url, WEB_CONCURRENCY="2",
            WEBHOOK_HOSTS="127.0.0.1", WEBHOOK_TIMEOUT_SECONDS="60", LOG_LEVEL="warning",
        ) as server,
    ):  # fmt: skip
        hook.delay = 0.5
        body = {"game": "basra", "seats": [{"type": "human"}] * 2, "webhook": {"url": hook.url}}
        created = requests.post(f"{server.url}/v1/sessions", json=body, timeout=30).json()
        url = f"{server.url}/v1/sessions/{created['id']}"
        seats = [{"Authorization": f"Bearer {seat['token']}"} for seat in created["seats"]]

        def play(turns: range) -> None:
            for turn in turns:
                view = requests.get(url, headers=seats[turn % 2], timeout=30).json()
                move = {"move": view["moves"][0], "version": view["version"]}
                assert requests.post(f"{url}/moves", json=move, headers=seats[turn % 2],
                                     timeout=30).status_code == 200  # fmt: skip

        token = created["seats"][0]["token"]
        with Stream(url, token, params={"after": 0}) as first:
            play(range(6))  # a turn message a version: more than one pass of 0.5 s
            first.until_version(6)
            old = server.workers()
            for worker in old:
                os.kill(worker, signal.SIGTERM)
            assert first.wait_for(lambda stream: stream.closed)
        assert first.raw.endswith(b"retry: 1000\n: this server is stopping; reconnect\n\n")
        play(range(6, 8))
        resume = {"Last-Event-ID": str(first.versions()[-1])}
        with Stream(url, token, headers=resume) as second:
            second.until_version(8)
        assert first.versions() + second.versions() == list(range(1, 9))
        wanted = [("session.turn", version) for version in range(9)]

        def sent() -> list[tuple[str, int]]:
            return [(message["type"], message["data"]["version"]) for message in hook.delivered()]

        deadline = time.monotonic() + 30  # far below the old workers' 65 s claims
        while sent() != wanted and time.monotonic() < deadline:
            time.sleep(0.1)
        assert sent() == wanted
        assert not set(old) & set(server.workers())


def test_turn_timers_fire_once_every_worker_killed_is_replaced(redis_url, tmp_path):
    """Every worker SIGKILLed (the out-of-memory killer, a crash) just before a turn timer
    is due, with nobody connected: the workers gunicorn starts in their place fire it, and
    the next, each once, from the schedule in Redis."""
    with gunicorn(
        tmp_path / "gunicorn.log", REDIS_URL=redis_url, WEB_CONCURRENCY="2",
        TIMER_SCAN_SECONDS="0.2", LOG_LEVEL="warning",
    ) as server:  # fmt: skip
        body = {"game": "basra", "seats": [{"type": "human"}] * 2, "turn_seconds": 1,
                "spectators": 1}  # fmt: skip
        created = requests.post(f"{server.url}/v1/sessions", json=body, timeout=30).json()
        old = server.workers()
        for worker in old:
            os.kill(worker, signal.SIGKILL)
        key = f"cards:{{{created['id']}}}:session"
        with redis.Redis.from_url(redis_url) as client:  # watched in Redis: nobody calls
            deadline = time.monotonic() + 30
            while int(client.hget(key, "version")) < 2 and time.monotonic() < deadline:
                time.sleep(0.1)
        spectator = {"Authorization": f"Bearer {created['spectators'][0]['token']}"}
        url = f"{server.url}/v1/sessions/{created['id']}/events"
        events = requests.get(url, params={"after": 0}, headers=spectator, timeout=30).json()
        timeouts = [event for event in events if event["type"] == "timeout"]
        assert timeouts[:2] == [{"type": "timeout", "seat": 0, "version": 1},
                                {"type": "timeout", "seat": 1, "version": 2}]  # fmt: skip
        assert [event["version"] for event in timeouts] == list(range(1, len(timeouts) + 1))
        assert not set(old) & set(server.workers())


def test_a_worker_told_to_stop_while_it_boots_stops(redis_url, tmp_path):
    """A SIGTERM that reaches a worker gunicorn has just forked (a stop right after a worker
    was replaced), before gunicorn sets the worker's own handlers: the worker stops once
    booted, rather than serve on until the master SIGKILLs it mid-answer. The production
    configuration, with each new worker held half a second right after the fork: the
    SIGTERM lands before any hook of the worker's has run (a loaded machine's timing)."""
    config = tmp_path / "slow_fork.conf.py"
    config.write_text(
        f"exec(open({str(ROOT / 'gunicorn.conf.py')!r}).read())\n"
        "os.register_at_fork(after_in_child=lambda: time.sleep(0.5))\n"
    )
    with gunicorn(tmp_path / "gunicorn.log", config=str(config), REDIS_URL=redis_url,
                  WEB_CONCURRENCY="1", LOG_LEVEL="warning") as server:  # fmt: skip
        old = server.workers()
        os.kill(old[0], signal.SIGKILL)
        deadline = time.monotonic() + 30
        while not (new := set(server.workers()) - set(old)) and time.monotonic() < deadline:
            pass  # no sleep: the new worker is caught as soon as it is forked
        (booting,) = new
        os.kill(booting, signal.SIGTERM)
        deadline = time.monotonic() + 30
        while booting in server.workers() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert booting not in server.workers()
