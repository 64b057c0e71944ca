"""Failover loses nothing acknowledged, on real processes on loopback: durable
acknowledgements (REDIS_MIN_REPLICAS: WAIT after every call), a Sentinel-managed primary
SIGKILLed mid-play, and a Redis Cluster with a replica per master whose master is SIGKILLed
mid-play.

Concurrent clients play whole hosted games, retrying each move under its Idempotency-Key
through 503s and dropped connections. Afterwards every move a client saw acknowledged is in
its session exactly once at its version, versions run without gap or double, the only error
answer seen is 503 with Retry-After (never the 409 of a grown epoch), and every session is
still at epoch 0. Run with -s to read each test's figures."""

import time
from collections.abc import Callable

import pytest
import requests

from service import create_app
from service.hosted.timers import TIMER_LEASE_SECONDS
from service.hosted.tokens import digest
from service.keys import new_key
from service.store import RedisSchedule
from service.store.redis_store import owner_key
from tests.gunicorn_server import gunicorn
from tests.redis_cluster import RedisCluster
from tests.redis_sentinel import MASTER, SentinelSet
from tests.redis_server import RedisServer
from tests.service.hosted_games import Load, check_history, seat_view
from tests.service.live_client import Stream
from tests.service.sessions_client import serve

pytestmark = pytest.mark.slow

WITH_BOT = [{"type": "human"}, {"type": "bot", "level": "random"}]
SERVICE = {
    "WEB_CONCURRENCY": "2",
    "REDIS_MIN_REPLICAS": "1",
    "LONG_POLL_SECONDS": "5",
    "MAX_WAITERS_PER_TOKEN": "1000",
    "LOG_LEVEL": "warning",
}
READY_SECONDS = 30.0  # a bound on waiting for Redis to settle, not a timing assertion


def survived(load: Load, ended: float, name: str) -> dict:
    """What every failover test checks; returns (and prints) the figures."""
    for game in load.played:
        check_history(game)
        assert game.seen.unavailable_without_retry_after == 0
        assert set(game.seen.statuses) <= {200, 503}, game.seen.statuses
        # Read as a client would, through the 503s of a replica still catching up.
        view = seat_view(game, next(iter(game.tokens)))
        assert view["epoch"] == 0  # nothing acknowledged was lost: the epoch did not grow
    figures = load.report(ended)
    print(f"\n{name}: {figures}")
    # The fault struck mid-play: the games on the dead node waited through 503s.
    assert figures["answers_503"] > 0
    return figures


# -- durable acknowledgements ---------------------------------------------------------------


@pytest.fixture
def replicated(tmp_path):
    """A primary and one replica of it."""
    with RedisServer(tmp_path / "primary") as primary, RedisServer(tmp_path / "replica") as replica:
        with replica.client() as client:
            client.replicaof("127.0.0.1", primary.port)
        wait_in_sync(primary, 1)
        yield primary, replica


def wait_in_sync(primary: RedisServer, replicas: int) -> None:
    deadline = time.monotonic() + READY_SECONDS
    with primary.client() as client:
        while client.info("replication")["connected_slaves"] < replicas:
            assert time.monotonic() < deadline, "the replica did not connect"
            time.sleep(0.1)
        assert client.wait(replicas, int(READY_SECONDS * 1000)) >= replicas


def past_503s(call):
    """`call` again while it answers 503: the replica, new or just back in sync, may still
    miss a WAIT's short timeout now and then on a loaded machine (a CI run saw the first
    creation's WAIT time out); a retry is what the 503 asks for."""
    for _ in range(50):
        answer = call()
        if answer.status_code != 503:
            return answer
        time.sleep(0.1)
    return answer


def test_a_write_to_a_node_turned_replica_is_a_503_not_a_500(tmp_path):
    """WAIT on a node that is a replica now (a failover demoted it between the script and
    WAIT) answers an error of its own, not READONLY: it is a 503 like any failover. A
    writable replica shows it, its script running and its WAIT refused."""
    with (
        RedisServer(tmp_path / "primary") as primary,
        RedisServer(tmp_path / "replica", replica_read_only="no") as replica,
    ):
        with replica.client() as client:
            client.replicaof("127.0.0.1", primary.port)
        app = create_app({"REDIS_URL": replica.url, "REDIS_MIN_REPLICAS": 1,
                          "REDIS_TIMEOUT_SECONDS": 0.5})  # fmt: skip
        try:
            answer = app.test_client().post("/v1/sessions", json={"game": "basra",
                                                                  "seats": WITH_BOT})  # fmt: skip
            assert answer.status_code == 503, answer.get_json()
            assert answer.get_json()["type"].endswith("/unavailable")
        finally:
            app.extensions["sessions"].close()


def test_an_answer_waits_for_a_replica_and_a_retry_after_its_503_is_safe(replicated):
    primary, replica = replicated
    app = create_app({"REDIS_URL": primary.url, "REDIS_MIN_REPLICAS": 1,
                      "REDIS_TIMEOUT_SECONDS": 0.5, "LONG_POLL_SECONDS": 0})  # fmt: skip
    try:
        client = app.test_client()
        created = past_503s(
            lambda: client.post("/v1/sessions", json={"game": "basra", "seats": WITH_BOT})
        )
        assert created.status_code == 201
        session = created.get_json()
        url = f"/v1/sessions/{session['id']}"
        headers = {"Authorization": f"Bearer {session['seats'][0]['token']}"}
        view = past_503s(lambda: client.get(url, headers=headers)).get_json()
        body = {"move": view["moves"][0], "version": view["version"]}
        keyed = {**headers, "Idempotency-Key": "durable"}

        replica.stop()  # no replica to acknowledge: every answer is a 503
        refused = [
            client.post(f"{url}/moves", json=body, headers=keyed),
            client.post("/v1/sessions", json={"game": "basra", "seats": WITH_BOT}),
            client.get(url, headers=headers),
        ]
        assert [answer.status_code for answer in refused] == [503] * 3
        assert {answer.headers["Retry-After"] for answer in refused} == {"1"}

        replica.start()
        with replica.client() as admin:
            admin.replicaof("127.0.0.1", primary.port)
        wait_in_sync(primary, 1)
        # The 503'd move was applied on the primary: its retry gets its answer, once.
        again = past_503s(lambda: client.post(f"{url}/moves", json=body, headers=keyed))
        assert again.status_code == 200
        assert again.get_json()["version"] > body["version"]
        read = past_503s(lambda: client.get(f"{url}/events?after=0", headers=headers))
        assert read.status_code == 200, read.get_json()
        events = read.get_json()
        assert [e["version"] for e in events if e["type"] == "move" and e["seat"] == 0] == [1]
        # Without a key the version makes the retry safe: a 409 naming the next version.
        stale = client.post(f"{url}/moves", json=body, headers=headers)
        assert stale.status_code == 409
    finally:
        app.extensions["sessions"].close()


def test_a_durable_primary_back_from_an_older_rdb_file_grows_the_epoch(replicated):
    """A primary restarted from an RDB file saved before its last acknowledged move (a
    crash restarted faster than any failover) takes the file's replication id as its
    previous one, as a promoted replica does; its replica then resyncs from it, and the move
    is lost everywhere. The epoch says so, as for any restart from files: before, durable
    mode took the restart for a failover and kept epoch 0 on the rolled-back session."""
    primary, _ = replicated
    with serve({"REDIS_URL": primary.url, "REDIS_MIN_REPLICAS": 1}) as base:
        created = past_503s(lambda: requests.post(f"{base}/v1/sessions", timeout=10, json={
            "game": "basra", "seats": [{"type": "human"}, {"type": "human"}]})).json()  # fmt: skip
        url = f"{base}/v1/sessions/{created['id']}"
        headers = [{"Authorization": f"Bearer {seat['token']}"} for seat in created["seats"]]
        views = [requests.get(url, headers=h, timeout=10).json() for h in headers]
        (seat,) = [seat for seat, view in enumerate(views) if view["moves"]]
        with primary.client() as client:
            client.save()
        first = {"move": views[seat]["moves"][0], "version": 0}
        moved = requests.post(f"{url}/moves", json=first, headers=headers[seat], timeout=10)
        assert (moved.status_code, moved.json()["epoch"]) == (200, 0)
        reply = requests.get(url, headers=headers[1 - seat], timeout=10).json()["moves"][0]
        primary.kill()
        primary.start()  # from the file: the move is gone
        wait_in_sync(primary, 1)
        after = {"move": reply, "version": 1}
        mover = headers[1 - seat]
        refused = past_503s(
            lambda: requests.post(f"{url}/moves", json=after, headers=mover, timeout=10)
        )
        assert (refused.status_code, refused.json()["version"]) == (409, 0)
        assert "epoch 1" in refused.json()["detail"]
        back = requests.get(url, headers=headers[seat], timeout=10).json()
        assert (back["version"], back["epoch"]) == (0, 1)


# -- Sentinel --------------------------------------------------------------------------------


@pytest.fixture
def sentinels(tmp_path):
    with SentinelSet(tmp_path / "sentinel") as watched:
        yield watched


def test_after_a_paused_primary_every_call_reads_its_own_reply(sentinels):
    """The primary's writes paused (CLIENT PAUSE): calls time out as 503s, and once the pause
    ends every call is answered for itself. redis-py's Sentinel connection keeps itself
    after a timeout by default, and the late reply was then read by the next call on it
    (a script's SHA taken for WAIT's count: a 500)."""
    app = create_app({"REDIS_SENTINELS": sentinels.setting, "REDIS_SENTINEL_MASTER": MASTER,
                      "REDIS_MIN_REPLICAS": 1, "REDIS_TIMEOUT_SECONDS": 0.5,
                      "LONG_POLL_SECONDS": 0})  # fmt: skip
    try:
        client = app.test_client()
        body = {"game": "basra", "seats": WITH_BOT}

        def create():
            return client.post("/v1/sessions", json=body)

        session = past_503s(create).get_json()
        headers = {"Authorization": f"Bearer {session['seats'][0]['token']}"}

        def read():
            return client.get(f"/v1/sessions/{session['id']}", headers=headers)

        with sentinels.primary().client() as admin:
            admin.execute_command("CLIENT", "PAUSE", "2000", "WRITE")
        statuses = []
        for _ in range(12):
            statuses += [create().status_code, read().status_code]
        assert 503 in statuses and set(statuses) <= {200, 201, 503}, statuses
        # The pause is over by then: both calls are answered, once the replica acknowledges.
        assert past_503s(create).status_code == 201
        answer = past_503s(read)
        assert answer.status_code == 200 and answer.get_json()["id"] == session["id"], statuses
    finally:
        app.extensions["sessions"].close()


def test_a_sentinel_managed_primary_killed_mid_play_loses_nothing_acknowledged(sentinels, tmp_path):
    settings = {**SERVICE, "REDIS_SENTINELS": sentinels.setting, "REDIS_SENTINEL_MASTER": MASTER}
    with gunicorn(tmp_path / "gunicorn.log", ready="/readyz", **settings) as served:

        def kill_the_primary() -> float:
            old = sentinels.primary()
            old.kill()
            sentinels.wait_for_failover(old)
            return time.monotonic()

        load = Load(served.url, games=4, log=served.log)
        figures = survived(load, load.run(kill_the_primary), "Sentinel primary SIGKILL")
        assert figures["acknowledged_moves"] > 60


# -- Redis Cluster with replicas --------------------------------------------------------------


@pytest.fixture
def cluster(tmp_path):
    with RedisCluster(tmp_path / "cluster", replicas=1) as replicated_cluster:
        yield replicated_cluster


def test_a_cluster_master_killed_mid_play_is_replaced_and_loses_nothing_acknowledged(
    cluster, tmp_path
):
    settings = {**SERVICE, "REDIS_URL": cluster.url, "REDIS_CLUSTER": "true"}
    with gunicorn(tmp_path / "gunicorn.log", ready="/readyz", **settings) as served:
        load = Load(served.url, games=6, log=served.log)
        # A timed session on each master followed by a stream, its turn timers firing all
        # along, before play starts: the fault then strikes while the games play (made in
        # the fault, they took seconds, and the games had all ended by the kill).
        timed = timed_sessions_on_every_master(served.url, cluster)
        watched: list = []

        def kill_a_master() -> float:
            # The master of the first game's session (at least one game is on it).
            victim = cluster.master_of(f"cards:{{{load.played[0].id}}}:session")
            watched.append(timed.pop(victim.port))
            for _, stream, _ in timed.values():
                stream.stop()
            victim.kill()
            cluster.wait_for_failover(victim)
            victim.start()  # back as a replica of the master that took over: WAIT is met
            cluster.wait_until_replicated()
            return time.monotonic()

        figures = survived(load, load.run(kill_a_master), "cluster master SIGKILL")
        assert figures["acknowledged_moves"] > 60
        (session, stream, token) = watched[0]
        chain = [stream]
        try:
            # Timers fire again, the stream goes on (a dropped one resumes with
            # Last-Event-ID), and a long poll answers the next timeout.
            versions = followed(chain, served.url, session, token)
            print(f"stream resumed {len(chain) - 1} times, versions {versions[0]}-{versions[-1]}")
            assert versions == list(range(versions[0], versions[-1] + 1)), versions
            url = f"{served.url}/v1/sessions/{session}/events"
            headers = {"Authorization": f"Bearer {token}"}
            for _ in range(5):  # each poll waits up to LONG_POLL_SECONDS for a timeout
                polled = requests.get(url, params={"after": versions[-1]}, headers=headers,
                                      timeout=30)  # fmt: skip
                assert polled.status_code == 200
                if polled.json():
                    break
            assert polled.json() and polled.json()[0]["version"] > versions[-1]
        finally:
            for opened in chain:
                opened.stop()


def test_a_turn_timer_acknowledged_on_a_cluster_fires_after_its_schedule_fails_over(
    cluster, tmp_path
):
    """The turn timers' schedule is a key of its own on a cluster, on a master of its own:
    a timed session's plan there was written without WAIT, so a creation was acknowledged
    while the schedule's replica did not have its plan, and once that master died the
    timer never fired with nobody reading. Now the plan waits for the replica as the
    commit does: a 503 while it cannot, and every acknowledged timer fires."""
    schedule = cluster.master_of(RedisSchedule.KEY)
    with gunicorn(tmp_path / "gunicorn.log", ready="/readyz", **SERVICE, REDIS_URL=cluster.url,
                  REDIS_CLUSTER="true", REDIS_TIMEOUT_SECONDS="0.5") as served:  # fmt: skip

        def create() -> requests.Response:
            return requests.post(f"{served.url}/v1/sessions", timeout=10, json={
                "game": "basra", "seats": [{"type": "human"}] * 2, "turn_seconds": 1,
            })  # fmt: skip

        answers = created_across_a_failover(cluster, schedule, create)
        acknowledged = [answer.json()["id"] for answer in answers if answer.status_code == 201]
        # Nobody reads them: only the schedule makes their timers fire. A scan's claim whose
        # reply the failover cut is sent again by redis-py's retry and finds those sessions
        # claimed (by itself): they fire once that claim's lease has run out.
        deadline = time.monotonic() + 4 + TIMER_LEASE_SECONDS + 5
        for session_id in acknowledged:
            key = f"cards:{{{session_id}}}:session"
            with cluster.master_of(key).client() as client:
                while int(client.hget(key, "version")) == 0:
                    assert time.monotonic() < deadline, session_id
                    time.sleep(0.1)


def test_a_session_acknowledged_on_a_cluster_stays_listed_after_its_owners_list_fails_over(
    cluster, tmp_path
):
    """An integrator's list of sessions is a key of its own on a cluster, on a master that
    may not be the session's: its entry was written without WAIT, so a creation was
    acknowledged while the list's replica did not have it, and once that master died the
    session was missing from its owner's list. Now the entry waits for the replica as the
    commit does: a 503 while it cannot, and every acknowledged session stays listed."""
    key = new_key()
    owner = "acme"
    listed = cluster.master_of(owner_key(owner))
    headers = {"Authorization": f"Bearer {key}"}
    with gunicorn(tmp_path / "gunicorn.log", ready="/readyz", **SERVICE, REDIS_URL=cluster.url,
                  REDIS_CLUSTER="true", REDIS_TIMEOUT_SECONDS="0.5",
                  API_KEYS=f"{owner}:{digest(key)}") as served:  # fmt: skip

        def create() -> requests.Response:
            body = {"game": "basra", "seats": [{"type": "human"}] * 2}
            return requests.post(f"{served.url}/v1/sessions", json=body, headers=headers,
                                 timeout=10)  # fmt: skip

        def listing() -> requests.Response:
            return requests.get(f"{served.url}/v1/sessions", params={"limit": 100},
                                headers=headers, timeout=10)  # fmt: skip

        answers = created_across_a_failover(cluster, listed, create)
        acknowledged = {answer.json()["id"] for answer in answers if answer.status_code == 201}
        assert acknowledged
        listed_now = past_503s(listing)
        assert listed_now.status_code == 200, listed_now.text
        assert acknowledged <= {entry["id"] for entry in listed_now.json()["sessions"]}


def created_across_a_failover(
    cluster: RedisCluster, master: RedisServer, create: Callable[[], requests.Response]
) -> list[requests.Response]:
    """Creations while `master`'s replica is cut off (each a 201 only once the replica has
    what it wrote, else a 503), then `master` killed and replaced by that replica, then one
    more creation past the 503s of the switch: every answer."""
    (replica,) = [node for node in cluster.nodes if replica_of(node, master)]
    replica.pause()  # cut off from its master: the writes there stop reaching it
    with master.client() as admin:
        admin.client_kill_filter(_type="slave")
    answers = [create() for _ in range(6)]
    assert {answer.status_code for answer in answers} <= {201, 503}
    master.kill()
    replica.resume()
    cluster.wait_for_failover(master)
    master.start()  # back as a replica of the master that took over: WAIT is met
    cluster.wait_until_replicated()
    answers.append(past_503s(create))
    return answers


def replica_of(node: RedisServer, master: RedisServer) -> bool:
    with node.client() as client:
        info = client.info("replication")
    return info["role"] == "slave" and int(info["master_port"]) == master.port


def timed_sessions_on_every_master(
    base: str, cluster: RedisCluster
) -> dict[int, tuple[str, Stream, str]]:
    """By master's port: a session of two human seats on its slots whose turn timers play
    for them every second, with a stream following it that has seen two versions:
    (id, stream, token)."""
    masters = len(cluster.nodes) // (1 + cluster.replicas)
    timed: dict[int, tuple[str, Stream, str]] = {}
    for _ in range(64 * masters):  # a share of the sessions lands on each master
        if len(timed) == masters:
            break
        created = requests.post(f"{base}/v1/sessions", timeout=10, json={
            "game": "basra", "seats": [{"type": "human"}] * 2, "turn_seconds": 1,
        }).json()  # fmt: skip
        port = cluster.master_of(f"cards:{{{created['id']}}}:session").port
        if port not in timed:
            token = created["seats"][0]["token"]
            stream = Stream(f"{base}/v1/sessions/{created['id']}", token, params={"after": 0})
            timed[port] = (created["id"], stream.__enter__(), token)
    assert len(timed) == masters, "no session landed on a master"
    for _, stream, _ in timed.values():
        assert stream.wait_for(lambda s: len(s.versions()) >= 2, within=READY_SECONDS)
    return timed


def followed(chain: list[Stream], base: str, session: str, token: str) -> list[int]:
    """The versions the streams of `chain` delivered, over the failover, until five more
    than the first had when play ended; a stream that ended is resumed with Last-Event-ID
    (appended to `chain`)."""
    target = max(chain[0].versions()) + 5

    def there(stream: Stream) -> bool:
        return (bool(stream.versions()) and max(stream.versions()) >= target) or stream.closed

    for _ in range(10):
        chain[-1].wait_for(there, within=READY_SECONDS)
        seen = [version for opened in chain for version in opened.versions()]
        if max(seen) >= target:
            break
        resumed = Stream(f"{base}/v1/sessions/{session}", token,
                         headers={"Last-Event-ID": str(max(seen))})  # fmt: skip
        chain.append(resumed.__enter__())
    return [version for opened in chain for version in opened.versions()]


# -- settings ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "says"),
    [
        ({"REDIS_SENTINELS": "127.0.0.1:26379"}, "needs REDIS_SENTINEL_MASTER"),
        ({"REDIS_SENTINELS": "nowhere", "REDIS_SENTINEL_MASTER": "m"}, "is not host:port"),
    ],
)
def test_sentinel_settings_that_name_no_sentinel_stop_the_start(settings, says):
    with pytest.raises(ValueError, match=says):
        create_app(settings)
