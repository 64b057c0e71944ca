"""The one commit path on both stores: the facts a commit produces and hands to its
followers, reads that write nothing the contract does not ask for, and commits that still
apply once the store's epoch of a session has grown (after a failover or a restart)."""

from dataclasses import replace

import redis

from service.hosted.commit import BOT, HUMAN, TIMEOUT, Facts
from service.store import MemoryStore
from service.store.redis_store import session_keys
from tests.service.hosted.core_client import begin, counted, play

VS_BOT = [{"type": "human"}, {"type": "bot", "level": "greedy"}]


def followed(sessions) -> list[Facts]:
    """Every applied commit's facts from now on, as a follower gets them."""
    seen: list[Facts] = []
    sessions.commits.followers.append(seen.append)
    return seen


def test_a_move_and_the_bot_replies_are_one_commit_with_their_facts(sessions, clock):
    facts = followed(sessions)
    session_id, (token,) = begin(sessions, VS_BOT, seed="facts", turn_seconds=30)
    answer = play(sessions, session_id, token)
    created, moved = facts
    assert created.created and created.first_version == 0 and created.moved == ()
    assert (moved.session_id, moved.game, moved.first_version) == (session_id, "basra", 0)
    assert moved.version == answer["version"] == 2
    assert [(m.version, m.seat, m.by, m.level) for m in moved.moved] == [
        (1, 0, HUMAN, None),
        (2, 1, BOT, "greedy"),
    ]
    assert all(event["version"] == m.version for m in moved.moved for event in m.events)
    assert moved.to_move == 0 and moved.outcome is None
    assert moved.deadline == clock.now + 30


def test_a_timeout_is_a_commit_whose_facts_say_the_server_played(sessions, clock):
    facts = followed(sessions)
    begin(sessions, turn_seconds=5, timeout_level="random")
    clock.now += 5
    assert sessions.timers.fire_due() == 1
    (fired,) = [f for f in facts if f.moved]
    ((version, seat, by, level),) = [(m.version, m.seat, m.by, m.level) for m in fired.moved]
    assert (version, seat, by, level) == (1, 0, TIMEOUT, "random")
    assert fired.moved[0].events[0] == {"type": "timeout", "seat": 0, "version": 1}
    assert fired.to_move == 1 and fired.deadline == clock.now + 5


def test_a_move_that_leaves_the_live_record_as_it_was_does_not_write_it_again(sessions, clock):
    untimed, (token,) = begin(sessions, VS_BOT, seed="kept")
    timed, (timed_token,) = begin(sessions, VS_BOT, seed="kept", turn_seconds=30)
    before = sessions.read(untimed, token)
    commits = counted(sessions.store, "commit")
    play(sessions, untimed, token)
    clock.now += 1  # the next turn's deadline is a second later than the last one's
    play(sessions, timed, timed_token)
    (untimed_id, kept), (timed_id, written) = commits
    assert (untimed_id, timed_id) == (untimed, timed)
    # Compared still (a spectator added meanwhile makes the move stale), not written again.
    assert kept.live is None and kept.expected_live is not None
    assert written.live is not None and written.live != written.expected_live
    after = sessions.read(untimed, token)
    assert after["version"] == before["version"] + 2
    assert {key: after[key] for key in ("deadline", "absent", "time_banks")} == {
        key: before[key] for key in ("deadline", "absent", "time_banks")
    }


def test_reads_write_nothing_unless_a_timer_is_due_or_a_seat_comes_back(sessions, clock):
    session_id, tokens = begin(sessions, turn_seconds=10, absent_after=1, spectators=1)
    commits = counted(sessions.store, "commit")

    def writes() -> list[str]:
        return [session for session, _ in commits]

    for token in tokens:
        sessions.read(session_id, token)
        assert sessions.events(session_id, token, 0) == []
    assert writes() == []
    clock.now += 10
    assert sessions.read(session_id, tokens[1])["version"] == 1  # the due timer, fired
    assert writes() == [session_id]
    assert sessions.read(session_id, tokens[0])["absent"] == []  # seat 0 came back
    assert writes() == [session_id, session_id]
    sessions.read(session_id, tokens[0])
    assert len(writes()) == 2


def grow_epoch(sessions, url: str | None, session_id: str) -> None:
    """What the store does when it may have lost writes of the session: Redis sees another
    server's run id on it (a restart from its files, a promoted replica) and raises the
    epoch at the next access; the in-process store is given the next epoch the same way."""
    store = sessions.store
    if isinstance(store, MemoryStore):
        record = store._records[session_id]
        record.session = replace(record.session, epoch=record.session.epoch + 1)
        return
    with redis.Redis.from_url(url) as client:
        client.hset(session_keys(session_id)[0], "incarnation", "a-lost-server")


def test_after_the_epoch_grows_timers_and_live_changes_still_commit(sessions, store_url, clock):
    session_id, tokens = begin(sessions, turn_seconds=10, absent_after=1)
    sessions.read(session_id, tokens[0])  # this process now knows epoch 0
    grow_epoch(sessions, store_url, session_id)
    clock.now += 10
    assert sessions.timers.fire_due() == 1
    seen = sessions.read(session_id, tokens[1])
    assert (seen["version"], seen["epoch"], seen["absent"]) == (1, 1, [0])
    added = sessions.add_spectator(session_id, tokens[1])
    assert sessions.read(session_id, f"Bearer {added['token']}")["seat"] is None
    assert sessions.read(session_id, tokens[0])["absent"] == []  # present: a live change
    moved = play(sessions, session_id, tokens[1])
    assert (moved["version"], moved["epoch"]) == (2, 1)
    grow_epoch(sessions, store_url, session_id)
    clock.now += 10
    assert sessions.read(session_id, tokens[1])["version"] == 3  # a due timer a read fires
