"""Turn timers and absent seats on both stores, under a clock the test moves (no sleeping):
the deadline a reader sees, the server playing for a seat whose time ran out with nobody
connected, the race of a human move against the timeout for one version, absent seats."""

import threading
from datetime import datetime

import pytest
import requests

from service.hosted.problems import StaleVersion
from service.hosted.sessions import Sessions, checked_move
from tests.service.hosted.core_client import HUMANS, bearer, play
from tests.service.hosted.core_client import begin as begun
from tests.service.sessions_client import serve

START = 1_800_000_000.0
HOSTED_CONFIG = {"LONG_POLL_SECONDS": 1.0}


def body(**live) -> dict:
    return {"game": "basra", "rules": {"preset": "levantine"}, "seats": HUMANS, **live}


def begin(sessions: Sessions, **live) -> tuple[str, list[str]]:
    return begun(sessions, seed="timers", spectators=0, **live)


def events_of(sessions: Sessions, session_id: str, token: str, after: int) -> list[dict]:
    return sessions.events(session_id, token, after)


def test_a_reader_sees_the_deadline_and_the_time_left(sessions, clock):
    session_id, tokens = begin(sessions, turn_seconds=30)
    seen = sessions.read(session_id, tokens[1])
    assert seen["deadline"] == "2027-01-15T08:00:30.000Z"
    assert datetime.fromisoformat(seen["deadline"]).timestamp() == START + 30
    assert seen["time_left"] == 30 and seen["absent"] == []
    clock.now += 12.5
    assert sessions.read(session_id, tokens[0])["time_left"] == 17.5
    moved = play(sessions, session_id, tokens[0])
    assert moved["deadline"] == "2027-01-15T08:00:42.500Z"  # seat 1's turn began with it
    untimed, others = begin(sessions)
    assert sessions.read(untimed, others[0])["deadline"] is None


def test_the_server_plays_for_a_seat_whose_time_ran_out_with_nobody_connected(
    store_kind, open_hosted, sessions, clock
):
    session_id, tokens = begin(sessions, turn_seconds=30, timeout_level="random")
    clock.now += 29.999
    assert sessions.timers.fire_due() == 0
    clock.now += 0.001
    # Another process's scanner (on Redis another store and schedule) finds it due.
    elsewhere = open_hosted() if store_kind == "redis" else sessions
    assert elsewhere.timers.fire_due() == 1
    seen = sessions.read(session_id, tokens[1])
    assert seen["version"] == 1
    assert seen["moves"] and seen["deadline"] == "2027-01-15T08:01:00.000Z"
    events = events_of(sessions, session_id, tokens[1], 0)
    assert events[0] == {"type": "timeout", "seat": 0, "version": 1}
    assert events[1]["type"] == "move" and events[1]["seat"] == 0
    assert {event["version"] for event in events} == {1}
    assert sessions.timers.fire_due() == 0  # settled: the next look is at seat 1's deadline


def test_a_reader_fires_a_due_timer_itself(sessions, clock):
    session_id, tokens = begin(sessions, turn_seconds=5)
    clock.now += 5
    assert sessions.read(session_id, tokens[0])["version"] == 1
    assert sessions.timers.fire_due() == 0  # its commit planned the next look, at seat 1's deadline
    assert sessions.read(session_id, tokens[0])["version"] == 1


def test_a_move_just_before_the_deadline_wins_and_the_timer_does_not_fire(sessions, clock):
    session_id, tokens = begin(sessions, turn_seconds=10)
    clock.now += 9.999
    assert play(sessions, session_id, tokens[0])["version"] == 1
    clock.now += 0.001
    assert sessions.timers.fire_due() == 0  # the move planned the next look, at seat 1's deadline
    events = events_of(sessions, session_id, tokens[0], 0)
    assert [event["type"] for event in events].count("timeout") == 0
    assert sessions.read(session_id, tokens[0])["version"] == 1


def test_a_move_after_the_deadline_is_a_409_and_the_timeout_applies(sessions, clock):
    session_id, tokens = begin(sessions, turn_seconds=10)
    seen = sessions.read(session_id, tokens[0])  # the process knows version 0
    clock.now += 10
    move = seen["moves"][0]
    request = {"move": {"card": move["card"], "capture": move["capture"]}, "version": 0}
    with pytest.raises(StaleVersion) as stale:
        sessions.move(session_id, tokens[0], lambda: request, None)
    assert stale.value.version == 1
    events = events_of(sessions, session_id, tokens[0], 0)
    assert events[0] == {"type": "timeout", "seat": 0, "version": 1}


def test_of_a_move_and_timeouts_racing_for_one_version_exactly_one_applies(
    store_kind, open_hosted, clock
):
    """On Redis six processes race; in process memory, six threads of the one process."""
    first = open_hosted()
    racers = [first] + [open_hosted() if store_kind == "redis" else first for _ in range(5)]
    session_id, tokens = begin(first, turn_seconds=10)
    seen = first.read(session_id, tokens[0])
    move = seen["moves"][0]
    request = {"move": {"card": move["card"], "capture": move["capture"]}, "version": 0}
    record = first.commits.recent.get(session_id)
    clock.now += 10
    start = threading.Barrier(len(racers))
    outcomes: list[str] = []

    def human(sessions: Sessions) -> None:
        start.wait()
        try:
            sessions.commit_move(record, 0, checked_move(record, 0, request), "race", None)
            outcomes.append("moved")
        except StaleVersion:
            outcomes.append("409")

    def timer(sessions: Sessions) -> None:
        start.wait()
        outcomes.append("fired" if sessions.timers.fire_on(record) is not None else "dropped")

    threads = [threading.Thread(target=human, args=(racers[0],))]
    threads += [threading.Thread(target=timer, args=(racer,)) for racer in racers[1:]]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes).count("moved") + sorted(outcomes).count("fired") == 1
    seen = racers[1].read(session_id, tokens[1])
    assert seen["version"] == 1
    events = events_of(racers[1], session_id, tokens[1], 0)
    assert [event["type"] for event in events].count("timeout") == outcomes.count("fired")


def test_a_seat_timed_out_in_a_row_is_absent_until_it_uses_its_token(sessions, clock):
    session_id, tokens = begin(sessions, turn_seconds=10, absent_after=2)
    for _ in range(2):  # seat 0 times out, seat 1 moves, seat 0 times out again
        clock.now += 10
        sessions.timers.fire_due()
        seen = sessions.events(session_id, tokens[1], 0)
        play(sessions, session_id, tokens[1])
    # Seat 0 is absent now: seat 1's move was answered with seat 0's turn played at once.
    seen = sessions.read(session_id, tokens[1])
    assert seen["absent"] == [0]
    assert seen["moves"], "seat 0's turn was played at once"
    events = sessions.events(session_id, tokens[1], 0)
    timeouts = [event for event in events if event["type"] == "timeout"]
    assert timeouts[:2] == [
        {"type": "timeout", "seat": 0, "version": 1},
        {"type": "timeout", "seat": 0, "version": 3},
    ]
    assert timeouts[2] == {"type": "timeout", "seat": 0, "absent": True, "version": 5}
    # Seat 0 reads with its token: present again, and its next turn waits for it.
    assert sessions.read(session_id, tokens[0])["absent"] == []
    moved = play(sessions, session_id, tokens[1])
    assert moved["absent"] == [] and moved["deadline"] is not None
    assert sessions.read(session_id, tokens[0])["moves"]


USES = {
    "read": lambda sessions, session_id, token: sessions.read(session_id, token),
    "long poll": lambda sessions, session_id, token: sessions.events(session_id, token, 0),
    "stream": lambda sessions, session_id, token: sessions.stream(session_id, token, 0).close(),
    "spectators": lambda sessions, session_id, token: sessions.add_spectator(session_id, token),
    "record": lambda sessions, session_id, token: sessions.match_record(session_id, token),
}


@pytest.mark.parametrize("use", USES)
def test_an_absent_seat_is_present_again_once_its_token_is_used_on_any_endpoint(
    sessions, clock, use
):
    """The contract: "present again as soon as its token is used on any session endpoint"."""
    session_id, tokens = begin(sessions, turn_seconds=10, absent_after=1)
    clock.now += 10
    sessions.timers.fire_due()  # seat 0 times out once: absent
    assert sessions.read(session_id, tokens[1])["absent"] == [0]
    USES[use](sessions, session_id, tokens[0])
    assert sessions.read(session_id, tokens[1])["absent"] == []


def test_a_long_poll_waiting_on_the_session_wakes_when_the_timer_fires(sessions, clock):
    sessions.long_poll_seconds = 20.0
    session_id, tokens = begin(sessions, turn_seconds=10)
    answers: list[list[dict]] = []
    waiting = threading.Thread(
        target=lambda: answers.append(sessions.events(session_id, tokens[1], 0))
    )
    waiting.start()
    clock.now += 10
    sessions.timers.fire_due()
    waiting.join(timeout=15)
    assert answers and answers[0][0] == {"type": "timeout", "seat": 0, "version": 1}


def test_spectators_and_moves_do_not_undo_each_other_in_the_live_record(sessions, clock):
    session_id, tokens = begin(sessions, turn_seconds=10, absent_after=1)
    added = sessions.add_spectator(session_id, tokens[1])
    clock.now += 10
    sessions.timers.fire_due()  # seat 0 absent now
    assert sessions.read(session_id, bearer(added["token"]))["absent"] == [0]
    assert sessions.read(session_id, bearer(added["token"]))["seat"] is None


@pytest.mark.parametrize(
    "field, value",
    [
        ("turn_seconds", 0),
        ("turn_seconds", 86401),
        ("turn_seconds", "30"),
        ("turn_seconds", 1.5),
        ("timeout_level", "smart"),
        ("timeout_level", None),
        ("absent_after", 0),
        ("absent_after", True),
        ("time_bank", -1),
        ("time_bank", 30),  # without turn_seconds
    ],
)
def test_bad_timer_settings_are_a_422_naming_the_field(field, value):
    with serve({}) as base:
        response = requests.post(f"{base}/v1/sessions", json=body(**{field: value}), timeout=10)
    assert response.status_code == 422
    assert response.headers["Content-Type"] == "application/problem+json"
    assert list(response.json()["errors"]) == [field]
    assert "<" not in response.text


def test_timer_settings_over_http_come_back_in_every_answer():
    with serve({}) as base:
        response = requests.post(
            f"{base}/v1/sessions",
            json=body(turn_seconds=86400, timeout_level="expert", absent_after=3),
            timeout=10,
        )
        assert response.status_code == 201
        created = response.json()
        seat = requests.get(
            f"{base}/v1/sessions/{created['id']}",
            headers={"Authorization": bearer(created["seats"][0]["token"])},
            timeout=10,
        ).json()
    assert seat["deadline"].endswith("Z") and 86399 < seat["time_left"] <= 86400
    assert seat["absent"] == []
    assert seat["seat"] == 0


def test_a_time_bank_lengthens_a_turn_and_is_spent_by_what_goes_beyond(sessions, clock):
    session_id, tokens = begin(sessions, turn_seconds=10, time_bank=20)
    seen = sessions.read(session_id, tokens[0])
    assert seen["time_left"] == 30 and seen["time_banks"] == [20, 20]
    clock.now += 25  # 15 s of seat 0's bank used
    moved = play(sessions, session_id, tokens[0])
    assert moved["time_banks"] == [5, 20]
    assert moved["time_left"] == 30  # seat 1's turn: 10 s and its whole bank
    clock.now += 4  # within turn_seconds: the bank is untouched
    play(sessions, session_id, tokens[1])
    seen = sessions.read(session_id, tokens[0])
    assert seen["time_banks"] == [5, 20] and seen["time_left"] == 15
    clock.now += 15
    sessions.timers.fire_due()  # seat 0's time and bank ran out: the bank is gone
    seen = sessions.read(session_id, tokens[1])
    assert seen["version"] == 3 and seen["time_banks"] == [0, 20]
    untimed, others = begin(sessions, turn_seconds=10)
    assert sessions.read(untimed, others[0])["time_banks"] is None
