"""GET /v1/sessions/{id}/stream over real HTTP on both stores: one message per committed
version, resumption with Last-Event-ID or ?after exactly once each, pings, the end."""

import itertools
import time

import orjson
import pytest
import requests

from tests.service.live_client import Stream
from tests.service.sessions_client import Seat, serve

HOSTED_CONFIG = {"STREAM_PING_SECONDS": 0.2}

HUMANS = [{"type": "human"}, {"type": "human"}]
VS_BOT = [{"type": "human"}, {"type": "bot", "level": "greedy"}]


def started(base: str, seats=HUMANS, **extra) -> tuple[dict, dict[int, Seat]]:
    body = {"game": "basra", "seats": seats, "seed": "stream", **extra}
    response = requests.post(f"{base}/v1/sessions", json=body, timeout=30)
    assert response.status_code == 201, response.text
    created = response.json()
    return created, {
        entry["seat"]: Seat(base, created["id"], entry["token"], [])
        for entry in created["seats"]
        if "token" in entry
    }


def play(seats: dict[int, Seat], moves: int) -> int:
    """`moves` human moves, each on the seat whose turn it is; the version after."""
    version = 0
    for turn in range(moves):
        views = {seat: holder.get().json() for seat, holder in seats.items()}
        (mover,) = [seat for seat, view in views.items() if view["moves"]]
        version = views[mover]["version"]
        move = views[mover]["moves"][turn % len(views[mover]["moves"])]
        answer = seats[mover].move({"card": move["card"], "capture": move["capture"]}, version)
        assert answer.status_code == 200, answer.text
        version = answer.json()["version"]
    return version


def test_each_committed_version_is_one_message_as_the_long_poll_sees_it(base):
    created, seats = started(base, VS_BOT)
    with Stream(seats[0].url, seats[0].token) as stream:
        assert stream.wait_for(lambda s: s.status is not None)
        assert stream.status == 200
        assert stream.content_type.startswith("text/event-stream")
        assert stream.wait_for(lambda s: s.pings > 0)  # the stream is open before any move
        version = play(seats, 3)
        stream.until_version(version)
        assert stream.versions() == list(range(1, version + 1))  # a bot's version its own
        assert version > 3
        for message in stream.messages:
            assert message.event == "events"
            assert {event["version"] for event in orjson.loads(message.data)} == {message.id}
        assert stream.events() == seats[0].events(0).json()
        assert stream.wait_for(lambda s: s.pings >= 3)  # `: ping` keeps coming
    assert created["version"] == 0


def test_pings_keep_their_bound_while_versions_keep_coming(base):
    """`: ping` comes at least every STREAM_PING_SECONDS counted from the last ping, not
    from the last message: moves closer together than that must not hold the pings back."""
    _, seats = started(base)
    with Stream(seats[0].url, seats[0].token) as stream:
        assert stream.wait_for(lambda s: s.pings > 0)
        began = time.monotonic()
        moves = 0
        while time.monotonic() - began < 2.0:  # ten ping intervals of moves 0.1 s apart
            time.sleep(0.1)
            moves += 1
            play_next(seats)
        stream.until_version(moves)
        ended = time.monotonic()
    pings = [began, *(t for t in stream.ping_times if t > began), ended]
    assert max(later - earlier for earlier, later in itertools.pairwise(pings)) < 0.6, pings


def play_next(seats: dict[int, Seat]) -> None:
    """One move of the seat whose turn it is (its first legal move)."""
    views = {seat: holder.get().json() for seat, holder in seats.items()}
    (mover,) = [seat for seat, view in views.items() if view["moves"]]
    move = views[mover]["moves"][0]
    answer = seats[mover].move({"card": move["card"], "capture": move["capture"]},
                               views[mover]["version"])  # fmt: skip
    assert answer.status_code == 200, answer.text


@pytest.mark.parametrize("how", ["Last-Event-ID", "after"])
def test_a_dropped_stream_resumed_sees_every_version_once(base, how):
    _, seats = started(base)
    with Stream(seats[1].url, seats[1].token, params={"after": 0}) as first:
        play(seats, 3)
        first.until_version(3)
    seen = first.versions()
    assert seen == [1, 2, 3]
    version = play(seats, 6)  # moves made while nobody listens
    resume = {"headers": {"Last-Event-ID": str(seen[-1])}} if how == "Last-Event-ID" else {}
    params = {"after": seen[-1]} if how == "after" else {"after": 0}
    # The header wins over ?after: with both, the stream starts after Last-Event-ID.
    with Stream(seats[1].url, seats[1].token, params=params, **resume) as second:
        second.until_version(version)
    assert seen + second.versions() == list(range(1, version + 1))


def test_without_a_position_the_stream_starts_after_the_current_version(base):
    _, seats = started(base)
    before = play(seats, 2)
    with Stream(seats[0].url, seats[0].token) as stream:
        assert stream.wait_for(lambda s: s.pings > 0)
        after = play(seats, 1)
        stream.until_version(after)
    assert stream.versions() == list(range(before + 1, after + 1))


def test_the_stream_ends_when_the_session_is_deleted(base):
    _, seats = started(base)
    with Stream(seats[0].url, seats[0].token) as stream:
        assert stream.wait_for(lambda s: s.pings > 0)
        assert seats[1].delete().status_code == 204
        assert stream.wait_for(lambda s: s.closed)
    assert stream.messages[-1].event == "end"


def test_a_stream_without_a_good_token_or_session_is_a_problem(base):
    _, seats = started(base)
    url = seats[0].url
    assert requests.get(f"{url}/stream", timeout=10).status_code == 401
    wrong = requests.get(f"{url}/stream", headers={"Authorization": "Bearer x"}, timeout=10)
    assert wrong.status_code == 401
    missing = requests.get(
        f"{base}/v1/sessions/{'0' * 26}/stream",
        headers={"Authorization": f"Bearer {seats[0].token}"},
        timeout=10,
    )
    assert missing.status_code == 404
    assert missing.headers["Content-Type"] == "application/problem+json"


@pytest.mark.parametrize(
    "headers, params, field",
    [
        ({"Last-Event-ID": "seven"}, {}, "Last-Event-ID"),
        ({"Last-Event-ID": "-1"}, {}, "Last-Event-ID"),
        ({"Last-Event-ID": "²"}, {}, "Last-Event-ID"),  # a digit to str.isdigit, not to int
        ({"Last-Event-ID": "7" * 5000}, {}, "Last-Event-ID"),  # past int's 4,300 digits
        ({}, {"after": "-1"}, "query.after"),
        ({}, {"after": "x"}, "query.after"),
    ],
)
def test_a_bad_position_is_a_422_naming_it(base, headers, params, field):
    _, seats = started(base)
    response = requests.get(
        f"{seats[0].url}/stream",
        headers={"Authorization": f"Bearer {seats[0].token}", **headers},
        params=params,
        timeout=10,
    )
    assert response.status_code == 422
    assert field in response.json()["errors"]


def test_a_waiting_stream_fires_the_turn_timer_at_the_deadline_by_itself(base):
    """No scanner runs in this app: only the waiting stream can play for seat 0."""
    _, seats = started(base, turn_seconds=1, timeout_level="random")
    with Stream(seats[1].url, seats[1].token) as stream:
        stream.until_version(1)
    (message,) = stream.messages
    events = orjson.loads(message.data)
    assert events[0] == {"type": "timeout", "seat": 0, "version": 1}
    assert events[1]["seat"] == 0
    assert seats[1].get().json()["moves"]  # seat 1's turn now, its own deadline running


@pytest.mark.parametrize("kind", ["memory", "redis"])
def test_the_stream_ends_when_its_idle_session_expires(request, kind):
    """An open stream does not keep an idle session alive: it only looks whether it is
    still there, and ends once it has expired."""
    config = {"SESSION_TTL_SECONDS": 1.0, "STREAM_PING_SECONDS": 0.2}
    if kind == "redis":
        config["REDIS_URL"] = request.getfixturevalue("redis_url")
    with serve(config) as base:
        _, seats = started(base)
        with Stream(seats[0].url, seats[0].token) as stream:
            assert stream.wait_for(lambda s: s.closed)
        assert stream.messages[-1].event == "end" and stream.pings >= 2
        assert seats[1].get().status_code == 404


@pytest.mark.parametrize("kind", ["memory", "redis"])
def test_a_long_poll_answers_404_soon_after_its_idle_session_expires(request, kind):
    """A long poll waiting on a session that expires answers 404 within about a ping's time,
    as a stream ends, not only at the end of its long-poll bound (holding its reader's place
    on a session that is gone)."""
    config = {"SESSION_TTL_SECONDS": 1.0, "STREAM_PING_SECONDS": 0.5, "LONG_POLL_SECONDS": 20}
    if kind == "redis":
        config["REDIS_URL"] = request.getfixturevalue("redis_url")
    with serve(config) as base:
        created, seats = started(base)
        begun = time.monotonic()
        answer = requests.get(
            f"{base}/v1/sessions/{created['id']}/events",
            params={"after": 0},
            headers={"Authorization": f"Bearer {seats[1].token}"},
            timeout=30,
        )
        assert answer.status_code == 404
        assert time.monotonic() - begun < 5.0
