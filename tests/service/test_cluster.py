"""Hosted sessions on a real three-master Redis Cluster (REDIS_CLUSTER=true, REDIS_URL naming
one node): every key and script of a session on one slot, whole games through real gunicorn
with two workers, and the concurrent-movers race deciding exactly one winner."""

import threading
from collections import Counter

import pytest
import redis
import requests

from service.store import Change, NewSession, Outcome, RedisStore
from service.store.redis_store import (
    COMMIT,
    DELETE,
    EVENTS,
    LOAD,
    channel,
    creation_key,
    session_keys,
)
from tests.gunicorn_server import gunicorn
from tests.redis_cluster import slot_of
from tests.service.hosted_games import check_history, play_out, start

HUMANS = [{"type": "human"}, {"type": "human"}]
WITH_BOT = [{"type": "human"}, {"type": "bot", "level": "greedy"}]


def test_every_key_and_channel_of_a_session_is_on_one_slot(redis_cluster_url):
    with redis.Redis.from_url(redis_cluster_url) as node:
        for session_id in ["a", "0123456789abefgijklmnopqrt", "zz{}x", "x}y{"]:
            names = [*session_keys(session_id), channel(session_id)]
            assert len({slot_of(node, name) for name in names}) == 1, session_id


def test_scripts_touch_only_the_keys_they_are_given():
    """A script naming a key of its own could reach another slot: none does."""
    for script in (LOAD, COMMIT, EVENTS, DELETE):
        assert "cards:" not in script
        assert "KEYS[" in script or "unpack(KEYS)" in script


def test_sessions_spread_over_the_masters_each_whole_on_one(redis_cluster, redis_cluster_url):
    store = RedisStore(redis_cluster_url, 60, cluster=True)
    ids = [f"session{n:03d}" for n in range(30)]
    for session_id in ids:
        opening = Change(0, "{}", ('["dealt"]',), new=NewSession("basra", "[]"))
        assert store.commit(session_id, opening).outcome is Outcome.APPLIED
        change = Change(1, "{}", ('["a"]',), key="k", answer="answer")
        assert store.commit(session_id, change).outcome is Outcome.APPLIED
    assert store.remember_creation("creation digest", "hold:1", 30) is None
    holders: dict[str, list[int]] = {}
    for index, node in enumerate(redis_cluster.nodes):
        with node.client() as client:
            for key in client.keys("cards:*"):
                holders.setdefault(key.decode(), []).append(index)
    for session_id in ids:
        nodes = {tuple(holders[key]) for key in session_keys(session_id)}
        assert len(nodes) == 1 and len(next(iter(nodes))) == 1, session_id
    assert len({holders[session_keys(session_id)[0]][0] for session_id in ids}) == 3
    assert creation_key("creation digest") in holders
    store.close()


@pytest.fixture(scope="module")
def served(redis_cluster, tmp_path_factory):
    redis_cluster.flush()
    with gunicorn(
        tmp_path_factory.mktemp("gunicorn") / "gunicorn.log",
        REDIS_URL=redis_cluster.url,
        REDIS_CLUSTER="true",
        WEB_CONCURRENCY="2",
        LONG_POLL_SECONDS="5",
        LOG_LEVEL="warning",
    ) as server:
        yield server


def test_whole_hosted_games_on_the_cluster_through_gunicorn(served):
    games = [play_out(start(served.url, seats)) for seats in [HUMANS, WITH_BOT]]
    for game in games:
        moves = check_history(game)
        assert moves
        assert set(game.seen.statuses) == {200}
    assert requests.get(f"{served.url}/readyz", timeout=10).status_code == 200


def test_a_long_poll_on_the_cluster_wakes_when_a_move_is_made(served):
    hosted = start(served.url, HUMANS)
    woken: list[requests.Response] = []
    seat = 1
    poller = threading.Thread(
        target=lambda: woken.append(
            requests.get(
                f"{served.url}/v1/sessions/{hosted.id}/events",
                params={"after": hosted.version},
                headers=hosted.headers(seat),
                timeout=30,
            )
        )
    )
    poller.start()
    play_out(hosted, turns=1)
    poller.join()
    (answer,) = woken
    assert answer.status_code == 200
    assert [event["version"] for event in answer.json() if event["type"] == "move"] == [1]


def test_of_32_concurrent_movers_on_the_cluster_exactly_one_is_applied(served):
    hosted = start(served.url, HUMANS)
    url = f"{served.url}/v1/sessions/{hosted.id}"
    views = {seat: requests.get(url, headers=hosted.headers(seat), timeout=10).json()
             for seat in hosted.tokens}  # fmt: skip
    (seat,) = [seat for seat, view in views.items() if view["moves"]]
    body = {"move": views[seat]["moves"][0], "version": views[seat]["version"]}
    barrier = threading.Barrier(32)
    results: list[requests.Response] = []

    def submit() -> None:
        barrier.wait()
        results.append(
            requests.post(f"{url}/moves", json=body, headers=hosted.headers(seat), timeout=30)
        )

    threads = [threading.Thread(target=submit) for _ in range(32)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert Counter(result.status_code for result in results) == {200: 1, 409: 31}
    hosted.version = body["version"] + 1
    assert len(check_history(hosted)) == hosted.version


def test_the_listener_subscribes_on_each_node_in_turn_not_only_the_one_named(redis_cluster_url):
    """PUBLISH reaches every node: a listener whose node died takes the next one."""
    store = RedisStore(redis_cluster_url, 60, cluster=True)
    ports = []
    for _ in range(len(store.client.get_nodes())):
        client = store.subscriber()
        assert client.ping()
        ports.append(client.connection_pool.connection_kwargs["port"])
        client.close()
    assert len(set(ports)) == len(ports) > 1
