"""A write whose reply a dropped connection lost: Redis ran it, the client saw the
connection go, and redis-py's one retry sent it again on a fresh connection. On a real
Redis and a real Redis Cluster, through a proxy that loses one chosen reply: each write (a
commit, a delete, a creation's key claim, a reader's admission) is answered as though the
reply had come, and written once (no 409 for a client's own move)."""

import hashlib
import logging
import time
from collections.abc import Callable

import orjson
import pytest

from service import create_app
from service.store import Change, NewSession, RedisSchedule, RedisStore, redis_store
from service.store.redis_store import ADMIT, CLAIM, COMMIT, DELETE, OUTBOX_SCHEDULE, REMEMBER
from tests.redis_proxy import RedisProxy, proxy_to
from tests.redis_server import free_port

COMMIT_SHA = hashlib.sha1(COMMIT.encode()).hexdigest()  # the script's id in Redis
DELETE_SHA = hashlib.sha1(DELETE.encode()).hexdigest()
REMEMBER_SHA = hashlib.sha1(REMEMBER.encode()).hexdigest()
ADMIT_SHA = hashlib.sha1(ADMIT.encode()).hexdigest()
CLAIM_SHA = hashlib.sha1(CLAIM.encode()).hexdigest()
WITH_BOT = [{"type": "human"}, {"type": "bot", "level": "greedy"}]


@pytest.fixture(params=["redis", "cluster"])
def through_proxy(request, monkeypatch):
    """The app's settings with every connection to Redis through a proxy, and the proxies
    (on a cluster, one a node: its client is told the proxies' addresses for the nodes'
    own, as a client behind NAT is)."""
    if request.param == "redis":
        server = request.getfixturevalue("redis_server")
        request.getfixturevalue("redis_url")  # running and empty
        with proxy_to("127.0.0.1", server.port) as proxy:
            yield {"REDIS_URL": proxy.url}, [proxy]
        return
    cluster = request.getfixturevalue("redis_cluster")
    request.getfixturevalue("redis_cluster_url")  # empty
    proxies = [RedisProxy("127.0.0.1", node.port) for node in cluster.nodes]
    remap = {("127.0.0.1", node.port): proxy.address for node, proxy in zip(cluster.nodes, proxies)}
    options = redis_store.client_options
    monkeypatch.setattr(redis_store, "client_options", lambda timeout: {
        **options(timeout), "address_remap": lambda address: remap.get(address, address)
    })  # fmt: skip
    yield {"REDIS_URL": proxies[0].url, "REDIS_CLUSTER": True}, proxies
    for proxy in proxies:
        proxy.close()


@pytest.fixture
def client(through_proxy):
    settings, _ = through_proxy
    # Webhook messages to a port nobody listens on: each stays in its outbox, to be counted.
    app = create_app({**settings, "LONG_POLL_SECONDS": 0, "WEBHOOK_HOSTS": "127.0.0.1",
                      "WEBHOOK_RETRY_SECONDS": 3600})  # fmt: skip
    yield app.test_client()
    app.extensions["sessions"].close()


def lose_the_next_reply(
    through_proxy, script: str = COMMIT_SHA, meanwhile: Callable[[], object] | None = None
) -> list[RedisProxy]:
    """Arm every proxy: Redis runs the next call of `script` (its SHA), its reply is lost;
    `meanwhile` runs before the connection drops."""
    _, proxies = through_proxy
    for proxy in proxies:
        proxy.arm(script, meanwhile)
    return proxies


def dropped(proxies: list[RedisProxy]) -> int:
    return sum(proxy.dropped for proxy in proxies)


def create(client, key: str | None = None) -> dict:
    hook = {"url": f"http://127.0.0.1:{free_port()}/hook"}
    body = {"game": "basra", "seats": WITH_BOT, "webhook": hook}
    answer = client.post("/v1/sessions", json=body, headers={"Idempotency-Key": key} if key else {})
    assert answer.status_code == 201
    return answer.get_json()


def headers(created: dict) -> dict[str, str]:
    return {"Authorization": f"Bearer {created['seats'][0]['token']}"}


def written(client, session_id: str) -> tuple[int, list, list[str]]:
    """The session's version as stored, its event batches, its webhook messages' ids."""
    store = client.application.extensions["sessions"].store
    version = store.load(session_id).version
    messages = [orjson.loads(message)["id"] for message in store.outbox(session_id)]
    return version, store.events(session_id, 0), messages


def test_a_move_whose_reply_was_lost_answers_200_and_is_written_once(client, through_proxy):
    created = create(client)  # the commit script is loaded: the next one runs at once
    url = f"/v1/sessions/{created['id']}"
    view = client.get(url, headers=headers(created)).get_json()
    _, _, messages_before = written(client, created["id"])

    proxies = lose_the_next_reply(through_proxy)
    body = {"move": view["moves"][0], "version": view["version"]}
    answer = client.post(f"{url}/moves", json=body, headers=headers(created))

    assert dropped(proxies) == 1
    assert answer.status_code == 200, answer.get_json()
    moved = answer.get_json()
    assert moved["version"] == view["version"] + 2  # the move and the bot's reply
    version, batches, messages = written(client, created["id"])
    assert version == moved["version"]
    assert len(batches) == version  # one event batch a version, none twice
    assert len(messages) == len(set(messages)) > len(messages_before)


def test_a_move_whose_reply_was_lost_while_the_next_one_landed_answers_200(client, through_proxy):
    """Before the retry, another client (the player's second device, here another worker)
    makes the next move on the version the lost one made: the retry is still answered as
    the move's first run was, not 409 on its own write."""
    created = create(client)
    url = f"/v1/sessions/{created['id']}"
    view = client.get(url, headers=headers(created)).get_json()
    settings, _ = through_proxy
    other = create_app({**settings, "LONG_POLL_SECONDS": 0})
    next_move = []

    def moved_elsewhere() -> None:
        seen = other.test_client().get(url, headers=headers(created)).get_json()
        body = {"move": seen["moves"][0], "version": seen["version"]}
        next_move.append(other.test_client().post(f"{url}/moves", json=body,
                                                  headers=headers(created)))  # fmt: skip

    proxies = lose_the_next_reply(through_proxy, meanwhile=moved_elsewhere)
    body = {"move": view["moves"][0], "version": view["version"]}
    answer = client.post(f"{url}/moves", json=body, headers=headers(created))
    other.extensions["sessions"].close()

    assert dropped(proxies) == 1
    assert next_move[0].status_code == 200, next_move[0].get_json()
    assert answer.status_code == 200, answer.get_json()
    assert answer.get_json()["version"] == view["version"] + 2  # its own, not the latest
    version, batches, _ = written(client, created["id"])
    assert version == next_move[0].get_json()["version"] == view["version"] + 4
    assert len(batches) == version  # one event batch a version, none twice


def test_a_creation_whose_reply_was_lost_is_created_once(client, through_proxy, caplog):
    create(client)  # loads the script
    proxies = lose_the_next_reply(through_proxy)
    with caplog.at_level(logging.INFO, logger="service.sessions"):
        created = create(client)
    assert dropped(proxies) == 1
    # Applied as far as this process knows too: what follows a commit (the log, the hub,
    # metrics, the webhook's deliverer) had it.
    said = [record.getMessage() for record in caplog.records
            if getattr(record, "session_id", None) == created["id"]]  # fmt: skip
    assert said == ["session created"]
    version, batches, messages = written(client, created["id"])
    assert version == created["version"] and len(batches) == version
    assert len(messages) == len(set(messages)) == 1  # session.turn, once


def test_a_creation_whose_key_claim_lost_its_reply_is_not_in_progress(client, through_proxy):
    """With an Idempotency-Key the creation first claims the key: that claim's reply lost,
    its retry finds the claim, which is its own."""
    create(client, key="first")  # loads the script
    proxies = lose_the_next_reply(through_proxy, REMEMBER_SHA)
    created = create(client, key="second")  # 201, not 409 idempotency-key-in-use
    assert dropped(proxies) == 1
    url = f"/v1/sessions/{created['id']}"
    assert client.get(url, headers=headers(created)).status_code == 200


def test_a_spectator_whose_reply_was_lost_is_added_once(client, through_proxy):
    created = create(client)
    proxies = lose_the_next_reply(through_proxy)
    answer = client.post(f"/v1/sessions/{created['id']}/spectators", headers=headers(created))
    assert dropped(proxies) == 1
    assert answer.status_code == 201
    store = client.application.extensions["sessions"].store
    assert len(orjson.loads(store.load(created["id"]).live)["spectators"]) == 1


def test_a_delete_whose_reply_was_lost_answers_204(client, through_proxy):
    created, other = create(client), create(client)
    client.delete(f"/v1/sessions/{other['id']}", headers=headers(other))  # loads the script
    proxies = lose_the_next_reply(through_proxy, DELETE_SHA)
    answer = client.delete(f"/v1/sessions/{created['id']}", headers=headers(created))
    assert dropped(proxies) == 1
    assert answer.status_code == 204
    assert client.get(f"/v1/sessions/{created['id']}", headers=headers(created)).status_code == 404


def test_a_finished_match_keeps_its_record_through_a_delete_whose_reply_was_lost(through_proxy):
    """The retry finds no session: it must not take the record for one that never ended."""
    settings, _ = through_proxy
    store = RedisStore(settings["REDIS_URL"], 60, cluster=bool(settings.get("REDIS_CLUSTER")))
    ended = Change(0, "{}", (), new=NewSession("basra", "[]"), record=('{"head": 1}',),
                   ended='{"head": "final"}')  # fmt: skip
    for session_id in ("other", "ended"):
        store.commit(session_id, ended)
    store.delete("other")  # loads the script
    proxies = lose_the_next_reply(through_proxy, DELETE_SHA)
    assert store.delete("ended")
    assert dropped(proxies) == 1
    assert store.record("ended") == ['{"head": "final"}']
    store.close()


def test_a_reader_whose_admission_lost_its_reply_is_admitted(through_proxy):
    """Its retry finds it counted already, in the token's last place: its own."""
    settings, _ = through_proxy
    store = RedisStore(settings["REDIS_URL"], 60, cluster=bool(settings.get("REDIS_CLUSTER")))
    assert store.admit_reader("other", "loader", 1, 10.0)  # loads the script
    proxies = lose_the_next_reply(through_proxy, ADMIT_SHA)
    assert store.admit_reader("holder", "reader", 1, 10.0)
    assert dropped(proxies) == 1
    assert not store.admit_reader("holder", "another", 1, 10.0)  # the place is taken, once
    store.close()


@pytest.mark.parametrize("key", [RedisSchedule.KEY, OUTBOX_SCHEDULE])
def test_a_schedule_claim_whose_reply_was_lost_claims_its_sessions(through_proxy, key):
    """Its retry is answered with the sessions it claimed: they are not left claimed by
    nobody until the lease runs out (a turn's timer that late after a failover)."""
    settings, _ = through_proxy
    store = RedisStore(settings["REDIS_URL"], 60, cluster=bool(settings.get("REDIS_CLUSTER")))
    schedule = store.schedule(key)
    now = time.time()
    assert schedule.claim(now, 5.0) == []  # loads the script
    schedule.plan("due", now - 1)
    proxies = lose_the_next_reply(through_proxy, CLAIM_SHA)
    claimed = schedule.claim(now, 5.0)
    assert dropped(proxies) == 1
    assert [session_id for session_id, _ in claimed] == ["due"]
    schedule.settle("due", claimed[0][1], None)  # the claim's mark is the one Redis holds
    assert schedule.claim(now + 10, 5.0) == []
    store.close()
