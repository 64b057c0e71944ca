"""The SessionStore contract, run against the in-process store and a real Redis."""

import threading
import time
from dataclasses import replace

import pytest
import redis
from redis.crc import key_slot

from service.store import (
    Change,
    Commit,
    MemoryStore,
    NewSession,
    Outcome,
    RedisStore,
    Session,
    SessionStore,
    Settle,
    StoreUnavailable,
    redis_store,
)
from service.store.base import RECENT_COMMITS
from service.store.redis_store import outbox_key
from tests.redis_server import RedisServer


def make_store(kind: str, redis_url: str | None, ttl: float = 60.0) -> SessionStore:
    if kind == "memory":
        return MemoryStore(ttl)
    return RedisStore(redis_url, ttl, cluster=kind == "cluster")


# "cluster": a real three-master Redis Cluster, through redis-py's cluster client.
@pytest.fixture(params=["memory", "redis", "cluster"])
def store_kind(request) -> str:
    return request.param


@pytest.fixture
def kind(store_kind) -> str:
    return store_kind


@pytest.fixture
def url(store_url) -> str | None:
    return store_url


@pytest.fixture
def store(kind, url):
    store = make_store(kind, url)
    yield store
    store.close()


def session(session_id: str = "s1", version: int = 0, state: str = '{"n": 0}') -> Session:
    return Session(id=session_id, game="basra", version=version, state=state, seats="[]")


def change(expected: int, *batches: str, key: str | None = None, answer: str | None = None):
    return Change(expected, f'{{"n": {expected + len(batches)}}}', batches, key, answer)


def create(store: SessionStore, session: Session, batches: tuple[str, ...] = ()) -> Commit:
    """A session's first commit: it creates the session at its version."""
    opening = Change(
        session.version - len(batches), session.state, batches, live=session.live,
        new=NewSession(session.game, session.seats),
    )  # fmt: skip
    return store.commit(session.id, opening)


def test_a_created_session_loads_back(store):
    create(store, session(version=2), ('[{"e": 1}]', '[{"e": 2}]'))
    assert store.load("s1") == session(version=2)
    assert store.events("s1", 0) == ['[{"e": 1}]', '[{"e": 2}]']
    assert store.load("nope") is None


def test_a_session_is_created_once(store):
    assert create(store, session(version=1), ('["a"]',)) == Commit(Outcome.APPLIED, 1)
    again = create(store, session(version=1, state='{"n": 9}'), ('["b"]',))
    assert (again.outcome, again.version) == (Outcome.STALE, 1)
    assert store.load("s1") == session(version=1)
    assert store.events("s1", 0) == ['["a"]']


def test_a_commit_on_the_current_version_applies_every_batch(store):
    create(store, session())
    commit = store.commit("s1", change(0, '["a"]', '["b"]'))
    assert (commit.outcome, commit.version) == (Outcome.APPLIED, 2)
    loaded = store.load("s1")
    assert (loaded.version, loaded.state) == (2, '{"n": 2}')
    assert store.events("s1", 1) == ['["b"]']


def test_a_commit_on_a_stale_version_changes_nothing(store):
    create(store, session())
    store.commit("s1", change(0, '["a"]'))
    commit = store.commit("s1", change(0, '["x"]'))
    assert (commit.outcome, commit.version) == (Outcome.STALE, 1)
    assert store.load("s1").state == '{"n": 1}'
    assert store.events("s1", 0) == ['["a"]']


def test_a_commit_on_a_missing_session_is_gone(store):
    assert store.commit("nope", change(0, '["a"]')).outcome is Outcome.GONE
    assert store.load("nope") is None


def test_a_retried_key_gets_the_stored_answer_and_is_not_applied_again(store):
    create(store, session())
    first = store.commit("s1", change(0, '["a"]', key="k", answer="A"))
    assert first.outcome is Outcome.APPLIED
    again = store.commit("s1", change(0, '["a"]', key="k", answer="A"))
    assert (again.outcome, again.version, again.answer) == (Outcome.REPLAY, 1, "A")
    assert store.answer("s1", "k") == "A"
    assert store.answer("s1", "other") is None
    assert store.events("s1", 0) == ['["a"]']


def test_of_64_concurrent_commits_on_one_version_exactly_one_applies(kind, url):
    stores = [make_store(kind, url) for _ in range(4)] if url else [MemoryStore(60)]
    create(stores[0], session())
    barrier = threading.Barrier(64)
    outcomes: list[Outcome] = []

    def move(index: int) -> None:
        barrier.wait()
        result = stores[index % len(stores)].commit("s1", change(0, f'["{index}"]'))
        outcomes.append(result.outcome)

    threads = [threading.Thread(target=move, args=(i,)) for i in range(64)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert outcomes.count(Outcome.APPLIED) == 1
    assert outcomes.count(Outcome.STALE) == 63
    assert stores[0].load("s1").version == 1
    assert len(stores[0].events("s1", 0)) == 1
    for store in stores:
        store.close()


def test_events_of_a_missing_session_are_none(store):
    assert store.events("nope", 0) is None


def test_delete_ends_the_session(store):
    create(store, session())
    assert store.delete("s1") is True
    assert store.load("s1") is None
    assert store.delete("s1") is False


def test_a_creation_key_is_held_once_then_answers(store):
    assert store.remember_creation("k", "hold:a", 30) is None
    # The same hold again (its reply was lost, the retry sends it again): kept, by itself.
    assert store.remember_creation("k", "hold:a", 30) is None
    assert store.remember_creation("k", "hold:b", 30) == "hold:a"
    store.settle_creation("k", "hold:b", '{"other": 1}')  # not its hold: nothing
    assert store.remember_creation("k", "hold:c", 30) == "hold:a"
    store.settle_creation("k", "hold:a", '{"answer": 1}')
    assert store.remember_creation("k", "hold:d", 30) == '{"answer": 1}'
    store.forget_creation("k")
    assert store.remember_creation("k", "hold:e", 30) is None
    store.settle_creation("k", "hold:e", None)  # nothing was created: the key is free
    assert store.remember_creation("k", "hold:f", 30) is None


def test_a_creation_hold_expires_by_itself_and_an_answer_lives_as_a_session(kind, url):
    store = make_store(kind, url, ttl=60)
    assert store.remember_creation("k", "hold:a", 0.2) is None
    time.sleep(0.4)
    assert store.remember_creation("k", "hold:b", 0.2) is None  # the first hold expired
    store.settle_creation("k", "hold:b", '{"answer": 1}')
    time.sleep(0.4)
    assert store.remember_creation("k", "hold:c", 0.2) == '{"answer": 1}'


def test_an_idle_session_expires_and_activity_keeps_it(kind, url):
    store = make_store(kind, url, ttl=0.6)
    create(store, session("idle"))
    create(store, session("busy"))
    for _ in range(4):
        time.sleep(0.25)
        assert store.load("busy") is not None
    assert store.load("idle") is None
    assert store.commit("idle", change(0, '["a"]')).outcome is Outcome.GONE
    store.close()


def test_every_key_of_a_session_shares_one_hash_tag_and_the_ttl(redis_url):
    store = RedisStore(redis_url, 100)
    create(store, session("abc", version=1), ('["a"]',))
    store.commit("abc", change(1, '["b"]', key="k", answer="A"))
    client = redis.Redis.from_url(redis_url)
    keys = sorted(key.decode() for key in client.keys("*"))
    assert keys == ["cards:{abc}:answers", "cards:{abc}:events", "cards:{abc}:session"]
    assert all(0 < client.pttl(key) <= 100_000 for key in keys)
    assert len({key_slot(key.encode()) for key in keys}) == 1
    client.close()
    store.close()


def test_redis_going_away_is_unavailable_until_it_returns(redis_server, redis_url):
    store = RedisStore(redis_url, 60, ready_grace=0)
    create(store, session())
    assert store.ready()
    redis_server.stop()
    try:
        assert not store.ready()
        with pytest.raises(StoreUnavailable):
            store.load("s1")
        with pytest.raises(StoreUnavailable):
            store.commit("s1", change(0, '["a"]'))
        with pytest.raises(StoreUnavailable):
            store.events("s1", 0)
    finally:
        redis_server.start()
    assert store.ready()
    create(store, session("s2"))
    assert store.commit("s2", change(0, '["a"]')).outcome is Outcome.APPLIED
    store.close()


def test_a_redis_that_lost_its_scripts_is_given_them_on_the_next_call(redis_url):
    """SCRIPT FLUSH, as a restart from its files or a promoted replica leaves it: the
    call that meets NOSCRIPT loads the script and is answered, on the same connection."""
    store = RedisStore(redis_url, 60)
    create(store, session())
    store.client.script_flush()
    assert store.load("s1").version == 0
    store.client.script_flush()
    assert store.commit("s1", change(0, '["a"]')).outcome is Outcome.APPLIED
    assert store.events("s1", 0) == ['["a"]']
    store.close()


def test_a_paused_redis_is_unavailable_and_back_without_reconnecting_by_hand(
    redis_server, redis_url
):
    store = RedisStore(redis_url, 60, timeout=0.5)
    create(store, session())
    redis_server.pause()
    try:
        with pytest.raises(StoreUnavailable):
            store.load("s1")
        with pytest.raises(StoreUnavailable):
            store.commit("s1", change(0, '["a"]'))
        # A blip shorter than the grace does not make the store unready.
        assert store.ready()
    finally:
        redis_server.resume()
    assert store.load("s1") is not None
    store.close()


def test_a_redis_back_from_older_files_raises_the_epoch(tmp_path):
    """A crash after the last save loses what came after it: the session comes back at an
    older version, and its epoch says so; a change made on the lost epoch is stale."""
    with RedisServer(tmp_path / "redis") as server:
        store = RedisStore(server.url, 60)
        create(store, session())
        assert store.load("s1").epoch == 0
        with server.client() as client:
            client.save()
        applied = store.commit("s1", change(0, '["lost"]'))
        assert (applied.outcome, applied.version, applied.epoch) == (Outcome.APPLIED, 1, 0)
        server.kill()
        server.start()
        back = store.load("s1")
        assert (back.version, back.epoch) == (0, 1)
        on_the_lost_epoch = store.commit("s1", change(0, '["again"]'))
        assert (on_the_lost_epoch.outcome, on_the_lost_epoch.epoch) == (Outcome.STALE, 1)
        moved = store.commit("s1", replace(change(0, '["again"]'), expected_epoch=1))
        assert (moved.outcome, moved.version, moved.epoch) == (Outcome.APPLIED, 1, 1)
        assert store.events("s1", 0) == ['["again"]']
        # A restart that lost nothing counts too (the service cannot tell), once.
        with server.client() as client:
            client.save()
        server.stop()
        server.start()
        assert store.load("s1").epoch == 2
        assert store.load("s1").epoch == 2
        store.close()


def test_redis_is_asked_its_run_id_once_a_connection_not_once_a_commit(redis_url):
    """The epoch's run id goes with each script, as its connection learned it when it
    opened (a restart or a failover opens it anew, above): Redis runs no INFO for a commit
    or a load."""
    store = RedisStore(redis_url, 60)
    create(store, session())
    with redis.Redis.from_url(redis_url) as admin:
        admin.config_resetstat()
        for version in range(10):
            assert store.commit("s1", change(version, "[]")).outcome is Outcome.APPLIED
        assert store.load("s1").version == 10
        calls = admin.info("commandstats")
    assert "cmdstat_info" not in calls
    store.close()


def test_the_live_record_is_written_with_a_commit_and_compared_when_named(store):
    create(store, Session("s1", "basra", 0, '{"n": 0}', "[]", live='{"a": 1}'))
    assert store.load("s1").live == '{"a": 1}'
    kept = store.commit("s1", change(0, '[{"e": 1}]'))  # names no live record: leaves it
    assert kept.outcome is Outcome.APPLIED and store.load("s1").live == '{"a": 1}'
    written = Change(1, '{"n": 1}', (), expected_live='{"a": 1}', live='{"a": 2}')
    assert store.commit("s1", written) == Commit(Outcome.APPLIED, 1)  # no batch: same version
    assert store.load("s1").live == '{"a": 2}'
    late = Change(1, '{"n": 9}', ('[{"e": 9}]',), expected_live='{"a": 1}', live='{"a": 3}')
    assert store.commit("s1", late) == Commit(Outcome.STALE, 1)
    loaded = store.load("s1")
    assert (loaded.version, loaded.state, loaded.live) == (1, '{"n": 1}', '{"a": 2}')
    assert store.events("s1", 0) == ['[{"e": 1}]']


def test_a_commit_sent_again_is_answered_as_its_first_run_and_written_once(store):
    """What a client's retry does when a commit's reply was lost (a dropped connection):
    the same change again. A creation, a move with a key and webhook messages, and a live
    change each answer as the first time while they are among the session's latest
    RECENT_COMMITS commits (others may land before the retry)."""
    opening = Change(0, '{"n": 0}', (), live='{"a": 1}', new=NewSession("basra", "[]"))
    assert store.commit("s1", opening) == store.commit("s1", opening) == Commit(Outcome.APPLIED)
    moved = replace(change(0, '["a"]', key="k", answer="A"), messages=('{"m": 1}',), plan=1000.0)
    first = store.commit("s1", moved)
    assert first.outcome is Outcome.APPLIED and first.heads_outbox and first.claimed
    assert store.commit("s1", moved) == first
    live = Change(1, '{"n": 1}', (), expected_live='{"a": 1}', live='{"a": 2}')
    assert store.commit("s1", live) == store.commit("s1", live) == Commit(Outcome.APPLIED, 1)
    assert store.events("s1", 0) == ['["a"]'] and store.outbox("s1") == ['{"m": 1}']
    assert store.commit("s1", change(1, '["b"]')).outcome is Outcome.APPLIED
    assert store.commit("s1", moved) == first  # with its own version, not the latest
    assert store.commit("s1", live) == Commit(Outcome.APPLIED, 1)
    # Once RECENT_COMMITS others came after it, a change is refused as any other on its
    # version.
    for version in range(2, 2 + RECENT_COMMITS):
        assert store.commit("s1", change(version, '["c"]')).outcome is Outcome.APPLIED
    assert store.commit("s1", moved) == Commit(Outcome.REPLAY, 2 + RECENT_COMMITS, "A")
    assert store.commit("s1", live) == Commit(Outcome.STALE, 2 + RECENT_COMMITS)


def test_exists_looks_without_keeping_an_idle_session_alive(kind, url):
    store = make_store(kind, url, ttl=0.5)
    create(store, session())
    assert store.exists("s1") and not store.exists("nope")
    deadline = time.monotonic() + 10
    while store.exists("s1") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not store.exists("s1")
    assert store.load("s1") is None
    store.close()


def test_webhook_messages_are_written_with_their_plan_and_settled_from_the_head(kind, store):
    create(store, session())
    planned = replace(change(0, '["a"]'), messages=('{"m": 1}', '{"m": 2}'), plan=1000.0)
    commit = store.commit("s1", planned)
    assert commit.outcome is Outcome.APPLIED and commit.heads_outbox and commit.claimed
    # Planned with the commit, due at the plan: not claimed before it, claimed at it.
    assert store.outbox_schedule.claim(999.0, 5.0) == []
    assert store.outbox_schedule.claim(1000.0, 5.0) == [("s1", 1005.0)]
    later = replace(change(1, '["b"]'), messages=('{"m": 3}',), plan=2000.0)
    appended = store.commit("s1", later)
    assert not appended.heads_outbox  # two messages were waiting
    # Their deliverer's claim stays (a cluster plans before its script, whatever is there).
    assert appended.claimed is (kind == "cluster")
    if kind != "cluster":
        assert store.outbox_schedule.claim(1005.0, 5.0) == [("s1", 1010.0)]
    assert store.outbox("s1") == ['{"m": 1}', '{"m": 2}', '{"m": 3}']
    # One message done, the next failed and rewritten for its retry; the answer is the
    # outbox after it.
    retried = Settle("s1", 1, '{"m": 1}', '{"m": 2}', '{"m": 2, "retry": 1}')
    assert store.outbox_settle([retried]) == [['{"m": 2, "retry": 1}', '{"m": 3}']]
    # The same pass settled again (a second deliverer that read what the first did): its
    # message is not found among the first ones, its failed one is no longer the head.
    assert store.outbox_settle([retried]) == [['{"m": 2, "retry": 1}', '{"m": 3}']]
    done = Settle("s1", 2, '{"m": 3}')
    assert store.outbox_settle([done]) == [[]]
    assert store.outbox("s1") == []


def test_a_settle_drops_only_through_the_last_message_done(store):
    create(store, session())
    messages = tuple(f'{{"m": {n}}}' for n in range(5))
    store.commit("s1", replace(change(0, '["a"]'), messages=messages, plan=1000.0))
    # Another deliverer settled the first two meanwhile: this one's four done are the first
    # two of the outbox now, and the fifth stays.
    assert store.outbox_settle([Settle("s1", 2, messages[1])]) == [list(messages[2:])]
    assert store.outbox_settle([Settle("s1", 4, messages[3])]) == [[messages[4]]]
    # Nothing done but a failure: only the head is rewritten, and only while it is the one.
    assert store.outbox_settle([Settle("s1", 0, "", messages[4], '{"m": 4, "a": 1}')]) == [
        ['{"m": 4, "a": 1}']
    ]
    assert store.outbox_settle([Settle("s1", 0, "", messages[4], '{"m": 4, "a": 9}')]) == [
        ['{"m": 4, "a": 1}']
    ]


def test_many_sessions_settle_in_one_call_each_answered_with_its_own_outbox(kind, store):
    ids = [f"batched-{n}" for n in range(12)]
    if kind == "cluster":  # over every master: a round trip to each in one call
        nodes = {store.client.get_node_from_key(outbox_key(i)).name for i in ids}
        assert len(nodes) == 3
    for n, session_id in enumerate(ids):
        create(store, session(session_id))
        messages = (f'{{"s": {n}, "m": 1}}', f'{{"s": {n}, "m": 2}}')
        store.commit(session_id, replace(change(0, '["a"]'), messages=messages, plan=1000.0))
    firsts = [Settle(i, 1, f'{{"s": {n}, "m": 1}}') for n, i in enumerate(ids)]
    assert store.outbox_settle(firsts) == [[f'{{"s": {n}, "m": 2}}'] for n in range(12)]
    if kind != "memory":
        # Redis lost its scripts (restarted from its files, a replica promoted): the settles
        # it refused go again once the script is loaded.
        store.client.script_flush()
    seconds = [Settle(i, 1, f'{{"s": {n}, "m": 2}}') for n, i in enumerate(ids)]
    assert store.outbox_settle(seconds) == [[]] * 12
    assert all(store.outbox(i) == [] for i in ids)


def until(condition, seconds: float = 5.0) -> None:
    """Wait for another thread to bring `condition` about."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.005)


def spy_rounds(monkeypatch) -> list[int]:
    """How many calls each round trip of the Redis store carried, in order."""
    rounds: list[int] = []
    exchange = redis_store.Rounds._exchange

    def counted(self, connection, calls):
        rounds.append(len(calls))
        return exchange(self, connection, calls)

    monkeypatch.setattr(redis_store.Rounds, "_exchange", counted)
    return rounds


def test_calls_made_while_a_round_is_out_share_the_next_each_answered_alone(
    redis_server, redis_url, monkeypatch
):
    """Group commit: the calls of a process's requests made while one round trip is out go
    together in the next, each script run alone and each answer its own (an error only
    its call's); a script cache lost meanwhile is reloaded once a script, not once a call."""
    store = RedisStore(redis_url, 60, timeout=10)
    ids = [f"s{n}" for n in range(12)]
    for session_id in ids:
        create(store, session(session_id))
    redis.Redis.from_url(redis_url).set("cards:{bad}:session", "not a hash")
    store.client.script_flush()
    store.client.config_resetstat()
    rounds = spy_rounds(monkeypatch)
    answers: dict[str, object] = {}

    def ask(name: str, call) -> None:
        try:
            answers[name] = call()
        except redis.RedisError as error:
            answers[name] = error

    redis_server.pause()
    try:
        first = threading.Thread(target=ask, args=("first", lambda: store.load("s0")))
        first.start()
        until(lambda: rounds == [1])  # the first call's round is out; Redis answers nothing
        threads = [first]
        for n, session_id in enumerate(ids):
            commit = lambda session_id=session_id, n=n: store.commit(  # noqa: E731
                session_id, change(0, f'["{n}"]')
            )
            threads.append(threading.Thread(target=ask, args=(session_id, commit)))
        threads.append(threading.Thread(target=ask, args=("bad", lambda: store.load("bad"))))
        for thread in threads[1:]:
            thread.start()
        until(lambda: len(store.rounds.waiting) == len(ids) + 1)
    finally:
        redis_server.resume()
    for thread in threads:
        thread.join()
    assert rounds == [1, len(ids) + 1]
    assert answers["first"].version == 0
    assert all(answers[i].outcome is Outcome.APPLIED and answers[i].version == 1 for i in ids)
    assert isinstance(answers["bad"], redis.ResponseError)
    assert "WRONGTYPE" in str(answers["bad"])
    loads = store.client.info("commandstats")["cmdstat_script|load"]["calls"]
    assert loads == 2  # LOAD's and COMMIT's, each once
    assert [store.events(i, 0) for i in ids] == [[f'["{n}"]'] for n in range(len(ids))]
    assert not store.rounds.out and not store.rounds.waiting
    store.close()


def test_a_round_redis_leaves_unanswered_fails_the_calls_queued_behind_it_at_once(
    redis_server, redis_url, monkeypatch
):
    """A hung Redis: the round out times out, and the calls that queued behind it fail with
    it rather than each waiting a timeout more; once Redis answers, calls go through."""
    store = RedisStore(redis_url, 60, timeout=0.5)
    create(store, session())
    rounds = spy_rounds(monkeypatch)
    failed: list[tuple[object, float]] = []

    def load() -> None:
        with pytest.raises(StoreUnavailable) as raised:
            store.load("s1")
        failed.append((raised.value, time.monotonic()))

    redis_server.pause()
    try:
        started = time.monotonic()
        threads = [threading.Thread(target=load) for _ in range(6)]
        threads[0].start()
        until(lambda: rounds == [1])
        for thread in threads[1:]:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        redis_server.resume()
    assert rounds == [1]  # the queued calls were never sent
    assert len(failed) == 6
    assert max(when for _, when in failed) - started < 1.0  # one timeout, not two
    assert store.load("s1").version == 0
    assert rounds == [1, 1]
    store.close()


def test_a_durable_round_ends_with_one_wait_and_its_calls_are_on_the_replica(tmp_path, monkeypatch):
    """REDIS_MIN_REPLICAS: a round's calls are answered after one WAIT for them all, so
    every write they were told of is on the replica already."""
    with RedisServer(tmp_path / "primary") as primary, RedisServer(tmp_path / "replica") as replica:
        with replica.client() as admin:
            admin.replicaof("127.0.0.1", primary.port)
        with primary.client() as admin:
            until(lambda: admin.info("replication")["connected_slaves"] == 1, 30)
            assert admin.wait(1, 30_000) == 1
        store = RedisStore(primary.url, 60, timeout=10, min_replicas=1)
        ids = [f"s{n}" for n in range(8)]
        for session_id in ids:
            create(store, session(session_id))
        store.load("s0")  # its script loaded: no NOSCRIPT round below
        store.client.config_resetstat()
        rounds = spy_rounds(monkeypatch)
        answers: dict[str, object] = {}
        primary.pause()
        try:
            first = threading.Thread(target=lambda: answers.update(first=store.load("s0")))
            first.start()
            until(lambda: rounds == [1])
            threads = [first] + [
                threading.Thread(
                    target=lambda i=i: answers.update({i: store.commit(i, change(0, "[]"))})
                )
                for i in ids
            ]
            for thread in threads[1:]:
                thread.start()
            until(lambda: len(store.rounds.waiting) == len(ids))
        finally:
            primary.resume()
        for thread in threads:
            thread.join()
        assert rounds == [1, len(ids)]
        assert store.client.info("commandstats")["cmdstat_wait"]["calls"] == 2
        assert all(answers[i].outcome is Outcome.APPLIED for i in ids)
        with replica.client() as copy:
            assert [copy.hget(f"cards:{{{i}}}:session", "version") for i in ids] == [b"1"] * 8
        store.close()
