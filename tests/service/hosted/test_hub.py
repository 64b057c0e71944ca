"""Waiting readers on both stores: capped per token (429) and per worker (503), each with
Retry-After, a move answered while the worker is full of them, and one events read per
commit in a process whatever the number of readers waiting on the session there."""

import threading
import time

import pytest
import requests

from service.hosted.problems import Busy
from service.store.redis_store import channel
from tests.service.hosted.core_client import begin, counted, play
from tests.service.live_client import Stream
from tests.service.sessions_client import Seat

HOSTED_CONFIG = {"LONG_POLL_SECONDS": 5.0, "MAX_WAITERS_PER_TOKEN": 2, "MAX_WAITERS": 3}
HUMANS = [{"type": "human"}, {"type": "human"}]


def started(base: str, spectators: int = 0) -> tuple[dict, list[Seat]]:
    body = {"game": "basra", "seats": HUMANS, "seed": "hub", "spectators": spectators}
    created = requests.post(f"{base}/v1/sessions", json=body, timeout=30).json()
    tokens = [entry["token"] for entry in created["seats"] + created["spectators"]]
    return created, [Seat(base, created["id"], token, []) for token in tokens]


def waiting(holders: list[Seat]) -> tuple[list[threading.Thread], list[requests.Response]]:
    """A long poll for each holder, in the background, once each is waiting."""
    answers: list[requests.Response] = []
    polls = [threading.Thread(target=lambda h=h: answers.append(h.events(0))) for h in holders]
    for poll in polls:
        poll.start()
    time.sleep(0.5)
    return polls, answers


def assert_busy(response: requests.Response, status: int) -> None:
    assert response.status_code == status, response.text
    assert response.headers["Content-Type"] == "application/problem+json"
    assert int(response.headers["Retry-After"]) >= 1


def test_a_token_has_at_most_its_cap_of_waiting_readers(base):
    _, (zero, one) = started(base)
    with Stream(zero.url, zero.token) as stream:
        assert stream.wait_for(lambda s: s.pings > 0)
        polls, answers = waiting([zero])
        assert_busy(zero.events(0), 429)
        refused = requests.get(
            f"{zero.url}/stream", headers={"Authorization": f"Bearer {zero.token}"}, timeout=10
        )
        assert_busy(refused, 429)
        assert one.events(0).status_code == 200  # another token waits: the cap is per token
    for poll in polls:
        poll.join()
    assert [answer.status_code for answer in answers] == [200]
    assert zero.events(0).status_code == 200  # room again once they ended


def test_a_worker_has_at_most_its_cap_of_waiting_readers_and_still_answers_moves(base):
    _, seats = started(base, spectators=2)
    polls, answers = waiting(seats[:3])
    assert_busy(seats[3].events(0), 503)
    views = [seat.get().json() for seat in seats[:2]]
    mover, view = next((seat, view) for seat, view in zip(seats, views) if view["moves"])
    move = view["moves"][0]
    moved = mover.move({"card": move["card"], "capture": move["capture"]}, view["version"])
    assert moved.status_code == 200
    for poll in polls:
        poll.join()
    assert [answer.status_code for answer in answers] == [200] * 3
    assert all(answer.json() for answer in answers)  # the move woke them


def test_a_commit_costs_one_events_read_in_a_process_whatever_its_readers(store_kind, open_hosted):
    readers = 40
    here = open_hosted(MAX_WAITERS=readers, MAX_WAITERS_PER_TOKEN=readers)
    created = here.create({"game": "basra", "seats": HUMANS, "seed": "fan-out"}, None)
    tokens = [f"Bearer {entry['token']}" for entry in created["seats"]]
    session_id = created["id"]
    answers: list[list[dict]] = []
    polls = [
        threading.Thread(target=lambda t=t: answers.append(here.events(session_id, t, 0)))
        for t in (tokens * readers)[:readers]
    ]
    for poll in polls:
        poll.start()
    while here.hub.waiting() < readers:
        time.sleep(0.01)
    time.sleep(0.2)  # every reader has made its first look
    reads = counted(here.store, "events")
    # On Redis the move comes from another process (its store, hub and cache of its own),
    # so this one learns of it from the store alone; in process memory from the facts.
    mover = open_hosted() if store_kind == "redis" else here
    seen = mover.read(session_id, tokens[0])
    seat = 0 if seen["moves"] else 1
    seen = mover.read(session_id, tokens[seat])
    move = {"card": seen["moves"][0]["card"], "capture": seen["moves"][0]["capture"]}
    mover.move(session_id, tokens[seat], lambda: {"move": move, "version": 0}, None)
    for poll in polls:
        poll.join()
    assert len(answers) == readers and all(
        answer and answer[0]["version"] == 1 for answer in answers
    )
    assert [after for _, after in reads] == ([0] if store_kind == "redis" else [])


@pytest.mark.parametrize("store_kind", ["redis", "cluster"])
def test_a_tokens_cap_holds_over_every_process_and_a_dead_ones_places_lapse(open_hosted):
    """Two processes' hubs on one Redis: a token's readers are counted over both. A process
    that dies leaves its readers counted until their lease lapses; one that ends a reader
    frees its place at once."""
    first, second = open_hosted(), open_hosted()
    first.hub.LEASE_SECONDS = 0.5  # this process will not renew: it "dies" holding two
    readers = [first.hub._admit("token a"), first.hub._admit("token a")]
    with pytest.raises(Busy) as refused:
        second.hub._admit("token a")
    assert refused.value.status == 429 and refused.value.headers["Retry-After"] == "1"
    other = second.hub._admit("token b")  # the cap is per token
    second.hub._leave("token b", other)
    time.sleep(0.8)
    late = second.hub._admit("token a")  # the dead process's places lapsed
    second.hub._admit("token a")
    with pytest.raises(Busy):
        second.hub._admit("token a")
    second.hub._leave("token a", late)  # ended: its place is free at once
    second.hub._admit("token a")
    assert readers and second.hub.waiting() == 2


@pytest.mark.parametrize("store_kind", ["redis"])
def test_the_listener_reconnects_when_redis_hangs_instead_of_waiting_on_a_silent_socket(
    redis_server, open_hosted, caplog
):
    """A hung Redis (SIGSTOP: its sockets stay open, nothing comes back) is an outage to the
    pub/sub listener too, logged once at its start and once at its end, so that under
    Sentinel a new connection finds the promoted replica."""
    hub = open_hosted().hub
    hub.started()
    redis_server.pause()
    try:
        time.sleep(hub.SILENT_SECONDS + 2 * hub.PING_SECONDS)
        assert hub.outage.failures >= 1
    finally:
        redis_server.resume()
    started = time.monotonic()
    while hub.outage.failures and time.monotonic() - started < 10:
        hub.started()
        if hub._subscribed.is_set():
            break
        time.sleep(0.1)
    assert hub._subscribed.wait(10)
    lines = [r.getMessage() for r in caplog.records if r.name == "service.live"]
    assert sum("unreachable" in line for line in lines) == 1
    assert sum("reachable again" in line for line in lines) == 1


@pytest.mark.parametrize("store_kind", ["redis"])
def test_the_listener_outlives_an_error_of_its_own_and_subscribes_again(
    redis_server, open_hosted, caplog
):
    """An error that is no outage of Redis (here a message the listener fails to read) is
    logged and the listener subscribes again: it does not end, leaving this process's
    readers to wake only at the end of their waits."""
    hub = open_hosted().hub
    failing = {"left": 1}
    session_of = hub.session_of

    def read_once_badly(name: str) -> str | None:
        if failing["left"]:
            failing["left"] -= 1
            raise ValueError("a message the listener could not read")
        return session_of(name)

    hub.session_of = read_once_badly
    hub.started()
    assert hub._subscribed.wait(5)
    client = redis_server.client()
    # On the one channel the listener hears with no reader waiting: read badly, and the
    # listener subscribes again.
    client.publish(hub.own_channel, "1 ")
    deadline = time.monotonic() + 10
    while not any("listener failed" in r.getMessage() for r in caplog.records):
        assert time.monotonic() < deadline, "the listener never read the message"
        time.sleep(0.05)
    assert hub._listener is not None
    deadline = time.monotonic() + 10
    while not hub._subscribed.is_set() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert hub._subscribed.is_set() and hub._listener.is_alive()


def subscribers(redis_server, session_id: str) -> int:
    """How many connections are subscribed to the session's `changed` channel."""
    with redis_server.client() as client:
        ((_, count),) = client.pubsub_numsub(channel(session_id))
    return count


def polling(sessions, session_id: str, token: str) -> tuple[threading.Thread, list]:
    """A long poll from version 0, in the background, once it waits."""
    answers: list = []
    poll = threading.Thread(target=lambda: answers.append(sessions.events(session_id, token, 0)))
    poll.start()
    deadline = time.monotonic() + 10
    while not sessions.hub.waiting():
        assert time.monotonic() < deadline, "the long poll never waited"
        time.sleep(0.02)
    return poll, answers


@pytest.mark.parametrize("store_kind", ["redis"])
def test_a_process_hears_only_of_the_sessions_its_readers_follow(redis_server, open_hosted):
    """Each commit is announced on its session's channel, and a process subscribes to it
    only while a reader of its own waits on that session: with every channel subscribed,
    every commit of any worker woke every worker, readers or none."""
    mover, reader = open_hosted(), open_hosted(LONG_POLL_SECONDS=30.0)
    session_id, (zero, one) = begin(mover)
    reader.hub.started()
    assert subscribers(redis_server, session_id) == 0
    poll, answers = polling(reader, session_id, one)
    assert subscribers(redis_server, session_id) == 1
    play(mover, session_id, zero)  # another process's commit: heard on the channel
    poll.join(15)
    assert not poll.is_alive() and answers[0]  # woken by the announcement, with its events
    assert subscribers(redis_server, session_id) == 0  # its last reader left


@pytest.mark.parametrize("store_kind", ["redis"])
def test_a_commit_before_the_subscription_holds_reaches_the_waiting_reader(
    redis_server, open_hosted
):
    """A reader reads its session, then waits; a commit announced after that read but
    before its process's subscription holds is heard by nobody there. The subscription's
    confirmation makes the session's readers read it again, so the reader still has it."""
    mover, reader = open_hosted(), open_hosted(LONG_POLL_SECONDS=30.0, STREAM_PING_SECONDS=30.0)
    session_id, (zero, one) = begin(mover)
    tune, held = reader.hub.tune, []
    reader.hub.tune = held.append  # the subscription is sent late, by the test
    poll, answers = polling(reader, session_id, one)
    assert held == [session_id] and subscribers(redis_server, session_id) == 0
    play(mover, session_id, zero)  # announced to nobody
    tune(session_id)
    poll.join(15)
    assert not poll.is_alive() and answers[0]
