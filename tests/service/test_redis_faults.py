"""What a Redis in trouble looks like to clients and in the log, on a real redis-server: out of
memory, demoted to a replica, a pool with no free connection, paused by DEBUG SLEEP — each a
503 with Retry-After, never a 500 — and an outage one line when it starts and one when it
ends for every background loop, however often each retries."""

import logging
import time

import pytest
import redis

from service import create_app
from service.hosted import timers
from service.hosted.deliveries import Deliveries
from service.store.redis_store import OUTBOX_SCHEDULE
from tests.redis_cluster import RedisCluster
from tests.redis_server import RedisServer
from tests.service.webhook_receiver import receiver

WITH_BOT = [{"type": "human"}, {"type": "bot", "level": "random"}]
SESSION = {"game": "basra", "seats": WITH_BOT}
# Bounds on waiting for a background loop to notice (counts of polls, generous for a loaded
# machine: the loops retry every half second).
NOTICE_SECONDS = 20.0


@pytest.fixture
def served(redis_url):
    app = create_app({"REDIS_URL": redis_url, "REDIS_TIMEOUT_SECONDS": 0.5, "LONG_POLL_SECONDS": 0})
    yield app
    app.extensions["sessions"].close()


def seat_header(created: dict) -> dict[str, str]:
    return {"Authorization": f"Bearer {created['seats'][0]['token']}"}


def move_of(client, created: dict) -> dict:
    url = f"/v1/sessions/{created['id']}"
    view = client.get(url, headers=seat_header(created)).get_json()
    return {"move": view["moves"][0], "version": view["version"]}


def every_call(client, created: dict, body: dict) -> list:
    """A creation, a read, a move (with a key), an events read: all a client may call."""
    url = f"/v1/sessions/{created['id']}"
    headers = seat_header(created)
    return [
        client.post("/v1/sessions", json=SESSION),
        client.get(url, headers=headers),
        client.post(f"{url}/moves", json=body, headers={**headers, "Idempotency-Key": "k"}),
        client.get(f"{url}/events?after=0", headers=headers),
    ]


def assert_unavailable(answers: list, allowed: frozenset = frozenset({503})) -> None:
    assert {answer.status_code for answer in answers} <= allowed
    for answer in answers:
        if answer.status_code == 503:
            assert answer.headers["Retry-After"] == "1"
            assert answer.headers["Content-Type"] == "application/problem+json"


def test_redis_out_of_memory_is_a_503_never_a_500(served, redis_url):
    client = served.test_client()
    created = client.post("/v1/sessions", json=SESSION).get_json()
    body = move_of(client, created)
    with redis.Redis.from_url(redis_url) as admin:
        admin.config_set("maxmemory-policy", "noeviction")
        admin.config_set("maxmemory", 1)
        try:
            answers = every_call(client, created, body)
        finally:
            admin.config_set("maxmemory", 0)
    # Reads write nothing that grows memory, so they may still answer; every write is a 503.
    assert_unavailable(answers, frozenset({200, 503}))
    assert answers[0].status_code == 503  # the creation
    assert answers[2].status_code == 503  # the move
    # Nothing was half-written: the move applies once memory is back.
    moved = client.post(f"/v1/sessions/{created['id']}/moves", json=body,
                        headers={**seat_header(created), "Idempotency-Key": "k"})  # fmt: skip
    assert moved.status_code == 200
    assert moved.get_json()["version"] > body["version"]


def test_a_demoted_redis_readonly_is_a_503(served, redis_url, tmp_path):
    client = served.test_client()
    created = client.post("/v1/sessions", json=SESSION).get_json()
    body = move_of(client, created)
    with RedisServer(tmp_path / "primary") as primary, redis.Redis.from_url(redis_url) as admin:
        admin.replicaof("127.0.0.1", primary.port)  # a failover made it a replica
        try:
            answers = every_call(client, created, body)
        finally:
            admin.replicaof("NO", "ONE")
    assert_unavailable(answers, frozenset({200, 404, 503}))
    assert answers[0].status_code == 503


def test_a_primary_without_its_min_replicas_to_write_is_a_503(served, redis_url):
    """A primary run with `min-replicas-to-write` (Redis's own durability setting) refuses
    writes with NOREPLICAS while too few replicas are in reach (one died, or resyncs after a
    failover): a 503 like READONLY, not a 500 (redis-py gives it no class of its own)."""
    client = served.test_client()
    created = client.post("/v1/sessions", json=SESSION).get_json()
    body = move_of(client, created)
    with redis.Redis.from_url(redis_url) as admin:
        admin.config_set("min-replicas-to-write", 1)
        try:
            answers = every_call(client, created, body)
        finally:
            admin.config_set("min-replicas-to-write", 0)
    assert_unavailable(answers, frozenset({200, 503}))
    assert answers[0].status_code == 503  # the creation
    assert answers[2].status_code == 503  # the move
    moved = client.post(f"/v1/sessions/{created['id']}/moves", json=body,
                        headers={**seat_header(created), "Idempotency-Key": "k"})  # fmt: skip
    assert moved.status_code == 200


def test_a_redis_that_cannot_write_its_snapshot_misconf_is_a_503(tmp_path):
    """Redis's defaults (save points, stop-writes-on-bgsave-error) refuse every write with
    MISCONF once a snapshot failed (a full disk; here its directory is gone): a 503, not a
    500, and the service serves again once a snapshot works."""
    with RedisServer(tmp_path / "redis", save="3600 1", stop_writes_on_bgsave_error="yes",
                     enable_protected_configs="yes") as server:  # fmt: skip
        app = create_app({"REDIS_URL": server.url, "REDIS_TIMEOUT_SECONDS": 0.5,
                          "LONG_POLL_SECONDS": 0})  # fmt: skip
        try:
            client = app.test_client()
            created = client.post("/v1/sessions", json=SESSION).get_json()
            body = move_of(client, created)
            gone = tmp_path / "gone"
            gone.mkdir()
            with redis.Redis.from_url(server.url) as admin:
                admin.config_set("dir", str(gone))
                gone.rmdir()
                admin.bgsave()
                wait_until(lambda: admin.info("persistence")["rdb_last_bgsave_status"] == "err")
                try:
                    answers = every_call(client, created, body)
                finally:
                    admin.config_set("dir", str(server.directory))
                    admin.save()
            assert_unavailable(answers, frozenset({200, 503}))
            assert answers[0].status_code == 503  # the creation
            assert answers[2].status_code == 503  # the move
            headers = {**seat_header(created), "Idempotency-Key": "k"}
            moved = client.post(f"/v1/sessions/{created['id']}/moves", json=body, headers=headers)
            assert moved.status_code == 200
        finally:
            app.extensions["sessions"].close()


def test_a_pool_without_a_free_connection_is_a_503_within_the_timeout(redis_url):
    app = create_app({"REDIS_URL": redis_url, "REDIS_MAX_CONNECTIONS": 1,
                      "REDIS_TIMEOUT_SECONDS": 0.5})  # fmt: skip
    try:
        client = app.test_client()
        created = client.post("/v1/sessions", json=SESSION).get_json()
        body = move_of(client, created)
        pool = app.extensions["sessions"].store.client.connection_pool
        assert pool.max_connections == 1
        held = pool.get_connection()  # another request holds the only connection
        try:
            answers = every_call(client, created, body)
        finally:
            pool.release(held)
        assert_unavailable(answers)
        url = f"/v1/sessions/{created['id']}"
        assert client.get(url, headers=seat_header(created)).status_code == 200
    finally:
        app.extensions["sessions"].close()


def test_a_redis_busy_in_debug_sleep_is_a_503(tmp_path):
    with RedisServer(tmp_path, enable_debug_command="local") as server:
        app = create_app({"REDIS_URL": server.url, "REDIS_TIMEOUT_SECONDS": 0.5})
        try:
            client = app.test_client()
            created = client.post("/v1/sessions", json=SESSION).get_json()
            body = move_of(client, created)
            admin = redis.Redis.from_url(server.url, socket_timeout=10)
            asleep = admin.connection_pool.get_connection()
            asleep.send_command("DEBUG", "SLEEP", "6")  # its answer is read at the end
            with pytest.raises(redis.TimeoutError):  # it sleeps now
                redis.Redis.from_url(server.url, socket_timeout=0.3).ping()
            answers = every_call(client, created, body)  # four 0.5 s timeouts at most
            assert asleep.read_response() in (b"OK", "OK")
            admin.connection_pool.release(asleep)
            admin.close()
            assert_unavailable(answers)
        finally:
            app.extensions["sessions"].close()


def test_an_outage_is_one_line_when_it_starts_and_one_when_it_ends_per_loop(
    redis_server, redis_url, caplog, monkeypatch
):
    # A short lease: the webhook loop says an outage ended only once two of its leases
    # passed without a failure, and the default's 20 s left this wait almost no margin.
    monkeypatch.setattr(Deliveries, "lease", property(lambda _: 1.0))
    app = create_app({"REDIS_URL": redis_url, "REDIS_TIMEOUT_SECONDS": 0.3})
    hosted = app.extensions["sessions"]
    caplog.set_level(logging.INFO, logger="service")
    try:
        hosted.hub.started()  # the pub/sub listener runs
        hosted.timers.start(every=0.05)
        hosted.deliveries.start(every=0.05)
        redis_server.stop()
        # Many failed scans and reconnections, counted, before Redis comes back.
        wait_until(lambda: hosted.timers.outage.failures >= 20 and hosted.hub.outage.failures >= 3
                   and hosted.deliveries.outage.failures >= 20)  # fmt: skip
        redis_server.start()
        wait_until(lambda: len(loops_saying(caplog, "reachable again")) == 3)
    finally:
        hosted.close()
    by_loop: dict[str, list[str]] = {}
    for record in caplog.records:
        if getattr(record, "loop", None):
            by_loop.setdefault(record.loop, []).append(record.getMessage())
    assert set(by_loop) == {"turn timers", "live hub", "webhook deliveries"}
    for loop, messages in by_loop.items():
        assert len(messages) == 2, (loop, messages)
        assert "Redis unreachable" in messages[0]
        assert "Redis reachable again" in messages[1]
    assert not [record for record in caplog.records if record.exc_info]  # no traceback


def test_timers_that_cannot_fire_are_one_outage_not_one_a_lease(tmp_path, caplog, monkeypatch):
    """A due timer whose commit cannot be acknowledged (durable mode, the replica hung): the
    schedule still answers, so a scan that claimed nothing (the timer's claim still running)
    counted as the outage's end, and the next claim as a new one: two warnings a lease, for
    as long as it lasted. Now one when it starts, one when the timer fires at last."""
    monkeypatch.setattr(timers, "TIMER_LEASE_SECONDS", 1.0)
    with (
        RedisServer(tmp_path / "primary", repl_diskless_sync_delay="0") as primary,
        RedisServer(tmp_path / "replica") as replica,
    ):
        with replica.client() as admin:
            admin.replicaof("127.0.0.1", primary.port)
        app = create_app({"REDIS_URL": primary.url, "REDIS_MIN_REPLICAS": 1,
                          "REDIS_TIMEOUT_SECONDS": 0.3})  # fmt: skip
        hosted = app.extensions["sessions"]
        caplog.set_level(logging.INFO, logger="service")
        try:
            timed = {"game": "basra", "seats": [{"type": "human"}] * 2, "turn_seconds": 1}
            # Once the replica has synced and acknowledges.
            wait_until(lambda: app.test_client().post("/v1/sessions", json=timed).status_code < 300)
            replica.pause()  # acknowledges nothing until it resumes
            hosted.timers.start(every=0.05)
            wait_until(lambda: hosted.timers.outage.failures >= 3)  # three leases at least
            replica.resume()
            wait_until(lambda: loops_saying(caplog, "reachable again"))
        finally:
            hosted.close()
        said = [r.getMessage() for r in caplog.records if getattr(r, "loop", None) == "turn timers"]
        assert len(said) == 2, said
        assert "Redis unreachable" in said[0] and "Redis reachable again" in said[1]


def test_deliveries_that_meet_an_outage_are_one_outage_not_one_a_scan(
    tmp_path, caplog, monkeypatch
):
    """On a cluster, the master of a session with messages to deliver hangs while the
    webhook schedule's master answers: each scan that claimed nothing counted as the
    outage's end, and the session's next claim as a new one, two warnings a lease for as
    long as it lasted. Now one when it starts, one once its deliveries go through again."""
    monkeypatch.setattr(Deliveries, "lease", property(lambda _: 0.5))
    with RedisCluster(tmp_path / "cluster") as cluster, receiver() as hook:
        app = create_app({"REDIS_URL": cluster.url, "REDIS_CLUSTER": True,
                          "REDIS_TIMEOUT_SECONDS": 0.3, "WEBHOOK_HOSTS": "127.0.0.1"})  # fmt: skip
        hosted = app.extensions["sessions"]
        caplog.set_level(logging.INFO, logger="service")
        try:
            schedule = cluster.master_of(OUTBOX_SCHEDULE)
            while True:  # a session on another master than the schedule's
                created = app.test_client().post("/v1/sessions", json={
                    **SESSION, "webhook": {"url": hook.url}}).get_json()  # fmt: skip
                hung = cluster.master_of(f"cards:{{{created['id']}}}:session")
                if hung is not schedule:
                    break
            hung.pause()  # well within the cluster's node timeout: the others answer
            hosted.deliveries.start(every=0.05)
            wait_until(lambda: hosted.deliveries.outage.failures >= 2)
            hung.resume()
            wait_until(lambda: loops_saying(caplog, "reachable again"))
        finally:
            hosted.close()
        said = [r.getMessage() for r in caplog.records
                if getattr(r, "loop", None) == "webhook deliveries"]  # fmt: skip
        assert len(said) == 2, said
        assert "Redis unreachable" in said[0] and "Redis reachable again" in said[1]


def loops_saying(caplog, words: str) -> set[str]:
    return {record.loop for record in caplog.records
            if getattr(record, "loop", None) and words in record.getMessage()}  # fmt: skip


def wait_until(condition) -> None:
    deadline = time.monotonic() + NOTICE_SECONDS
    while not condition():
        assert time.monotonic() < deadline, "the background loops did not get there in time"
        time.sleep(0.05)


def test_the_503s_of_an_outage_are_one_warning_not_one_each(redis_server, redis_url, caplog):
    """Requests answered 503 while Redis is down: each has its answer (and its access log
    line), and the app's log says so once for the spell, not once a request."""
    app = create_app({"REDIS_URL": redis_url, "REDIS_TIMEOUT_SECONDS": 0.3})
    caplog.set_level(logging.INFO)
    client = app.test_client()
    try:
        redis_server.stop()
        answers = [client.post("/v1/sessions", json=SESSION) for _ in range(10)]
        assert_unavailable(answers)
    finally:
        redis_server.start()
        app.extensions["sessions"].close()
    said = [r for r in caplog.records if "session store unavailable" in r.getMessage()]
    assert len(said) == 1 and said[0].levelno == logging.WARNING
