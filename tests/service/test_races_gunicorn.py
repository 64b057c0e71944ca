"""Floods on one session through real gunicorn (two gevent workers, the shipped config) on
real Redis and on a real Redis Cluster: many clients at once, each answer checked against
invariants (how many writes applied, every version once, no 500) rather than one expected
answer."""

import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
import requests

from tests.gunicorn_server import gunicorn
from tests.service.live_client import Stream
from tests.service.sessions_client import Seat, chosen, create

HUMANS = [{"type": "human"}, {"type": "human"}]
RACERS = 40


@pytest.fixture(scope="module", params=["redis", "cluster"])
def served(request, tmp_path_factory):
    """Two gevent workers on one Redis, then on a three-master Redis Cluster."""
    if request.param == "redis":
        server = request.getfixturevalue("redis_server")
        server.start()  # a no-op unless an earlier test left it stopped
        url, cluster = server.url, "false"
    else:
        url, cluster = request.getfixturevalue("redis_cluster").url, "true"
    with gunicorn(
        tmp_path_factory.mktemp("races") / "gunicorn.log",
        REDIS_URL=url,
        REDIS_CLUSTER=cluster,
        WEB_CONCURRENCY="2",
        GUNICORN_WORKER_CLASS="gevent",
        CLIENT_SEEDS="true",
        LOG_LEVEL="warning",
        MAX_WAITERS_PER_TOKEN="64",  # a token's many readers here are the flood, not a fault
        STREAM_PING_SECONDS="0.5",  # a stream's reader, closed, stops at its next ping
    ) as server:
        yield server


def at_once(count: int, call: Callable[[int], requests.Response]) -> list[requests.Response]:
    """`call(i)` for i in range(count), each in its own thread, all let go together."""
    barrier = threading.Barrier(count)
    answers: list[requests.Response | None] = [None] * count
    failed: list[BaseException] = []

    def run(index: int) -> None:
        barrier.wait()
        try:
            answers[index] = call(index)
        except BaseException as error:  # raised again in the test's own thread
            failed.append(error)

    threads = [threading.Thread(target=run, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failed:
        raise failed[0]
    return answers  # type: ignore[return-value]


def started(base: str, **extra: Any) -> dict[str, Any]:
    answer = create(base, HUMANS, seed="races", **extra)
    assert answer.status_code == 201, answer.text
    return answer.json()


def seat(base: str, session: dict[str, Any], index: int) -> Seat:
    return Seat(base, session["id"], session["seats"][index]["token"], [])


def test_spectator_tokens_racing_past_the_cap_are_sixteen_made_and_the_rest_409(served):
    session = started(served.url)
    owner = seat(served.url, session, 0)

    def add(_: int) -> requests.Response:
        return requests.post(f"{owner.url}/spectators", headers=owner.http.headers, timeout=60)

    answers = at_once(RACERS, add)
    assert Counter(answer.status_code for answer in answers) == {201: 16, 409: RACERS - 16}
    for answer in answers:
        if answer.status_code == 201:
            watcher = Seat(served.url, session["id"], answer.json()["token"], []).get()
            assert watcher.status_code == 200 and watcher.json()["seat"] is None


def test_racing_moves_on_one_version_apply_once_and_a_shared_key_replays_that_answer(served):
    """Half the racers carry one Idempotency-Key, with the same body or another; half carry
    none: one move applies, a racer with the key and its body gets that very answer, with the
    key and another body a 422, without the key a 409."""
    session = started(served.url)
    seats = [seat(served.url, session, index) for index in range(2)]
    mover = next(index for index, one in enumerate(seats) if one.get().json()["moves"])
    offered = seats[mover].get().json()["moves"]

    def move(index: int) -> requests.Response:
        headers = {"Idempotency-Key": "race"} if index % 2 else {}
        body = {"move": chosen(offered, index // 2 % 2), "version": 0}
        return seats[mover].http.post(
            f"{seats[mover].url}/moves", json=body, headers=headers, timeout=60
        )

    answers = at_once(RACERS, move)
    applied = {answer.text for answer in answers if answer.status_code == 200}
    assert len(applied) == 1
    statuses = Counter(answer.status_code for answer in answers)
    assert set(statuses) <= {200, 409, 422}
    unkeyed = [answer.status_code for index, answer in enumerate(answers) if not index % 2]
    assert unkeyed.count(200) <= 1 and set(unkeyed) <= {200, 409}
    events = seats[1 - mover].events(0).json()
    assert [event["version"] for event in events if event["type"] == "move"] == [1]
    record = requests.get(f"{seats[0].url}/record", headers=seats[0].http.headers, timeout=30)
    assert [entry["version"] for entry in record.json()["moves"]] == [1]


def test_racing_creations_under_one_key_make_one_session(served):
    body = {"game": "basra", "seats": HUMANS}

    def create_once(_: int) -> requests.Response:
        return requests.post(
            f"{served.url}/v1/sessions", json=body, headers={"Idempotency-Key": "one"}, timeout=60
        )

    answers = at_once(RACERS, create_once)
    assert {answer.status_code for answer in answers} <= {201, 409}
    assert len({answer.text for answer in answers if answer.status_code == 201}) == 1
    assert all("Retry-After" in answer.headers for answer in answers if answer.status_code == 409)


def play_turns(seats: list[Seat], turns: int) -> int:
    """`turns` moves, each by the seat to move, on the version it reads; the last version."""
    version = 0
    for turn in range(turns):
        mover = next(one for one in seats if one.get().json()["moves"])
        seen = mover.get().json()
        answer = mover.move(chosen(seen["moves"], turn), seen["version"])
        assert answer.status_code == 200, answer.text
        version = answer.json()["version"]
    return version


def test_streams_on_both_workers_see_each_version_once_in_order_as_their_token_may(served):
    """Opened before the moves, or resumed mid-play with Last-Event-ID: every stream holds
    each version once, in order, exactly as its token's feed has it (a seat's view, or a
    spectator's)."""
    session = started(served.url, spectators=1)
    seats = [seat(served.url, session, index) for index in range(2)]
    tokens = [one.token for one in seats] + [session["spectators"][0]["token"]]
    streams = [Stream(seats[0].url, tokens[index % 3]) for index in range(6)]
    resumed: list[Stream] = []
    for stream in streams:
        stream.__enter__()
    try:
        assert all(stream.wait_for(lambda s: s.pings, 30) for stream in streams)
        middle = play_turns(seats, 6)
        resumed += [Stream(seats[0].url, token, headers={"Last-Event-ID": str(middle)})
                    for token in tokens]  # fmt: skip
        for stream in resumed:
            stream.__enter__()
        last = play_turns(seats, 6)
        for stream in streams + resumed:
            stream.until_version(last)
            first = 0 if stream in streams else middle
            assert stream.versions() == list(range(first + 1, last + 1))
            feed = requests.get(
                f"{seats[0].url}/events",
                params={"after": first},
                headers={"Authorization": f"Bearer {stream.token}"},
                timeout=30,
            )
            assert stream.events() == feed.json()
    finally:
        for stream in streams + resumed:
            stream.stop()


def test_a_delete_racing_moves_long_polls_and_streams_ends_every_reader_cleanly(served):
    session = started(served.url, spectators=1)
    seats = [seat(served.url, session, index) for index in range(2)]
    streams = [Stream(seats[index % 2].url, seats[index % 2].token) for index in range(4)]
    for stream in streams:
        stream.__enter__()
    assert all(stream.wait_for(lambda s: s.pings, 30) for stream in streams)

    def race(index: int) -> requests.Response:
        one = seats[index % 2]
        if index == 0:
            return one.delete()
        if index % 3 == 0:
            return one.events(0 if index % 2 else 100)  # one answers at once, one waits
        seen = one.get()
        if seen.status_code != 200 or not seen.json()["moves"]:
            return seen
        return one.move(chosen(seen.json()["moves"], index), seen.json()["version"])

    answers = at_once(24, race)
    assert answers[0].status_code == 204
    assert {answer.status_code for answer in answers[1:]} <= {200, 404, 409}
    for stream in streams:
        assert stream.wait_for(lambda s: s.closed, 30)
        assert stream.messages[-1].event == "end"
        stream.stop()
    assert seats[1].get().status_code == 404
