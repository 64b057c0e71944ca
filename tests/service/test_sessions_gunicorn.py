"""Hosted sessions on real gunicorn (production config) with real Redis, over real HTTP."""

import threading
import time

import pytest
import requests

from tests.gunicorn_server import gunicorn
from tests.service.live_client import Stream
from tests.service.sessions_client import Seat, chosen, create


@pytest.fixture
def served(redis_url, tmp_path):
    with gunicorn(
        tmp_path / "gunicorn.log",
        REDIS_URL=redis_url,
        WEB_CONCURRENCY="2",
        LONG_POLL_SECONDS="6",
        MAX_WAITERS_PER_TOKEN="1000",  # one token polls many times at once here
        LOG_LEVEL="warning",
        CLIENT_SEEDS="true",
    ) as server:
        yield server.url


def holders(base: str, answer: dict) -> dict[int, Seat]:
    return {
        entry["seat"]: Seat(base, answer["id"], entry["token"], [])
        for entry in answer["seats"]
        if "token" in entry
    }


def test_two_clients_play_a_whole_hosted_match(served):
    created = create(served, [{"type": "human"}, {"type": "human"}], seed="gunicorn hosted")
    assert created.status_code == 201
    seats = holders(served, created.json())
    version = 0
    for turn in range(5000):
        views = {seat: holder.get().json() for seat, holder in seats.items()}
        movers = [seat for seat, view in views.items() if view["moves"]]
        if not movers:
            break
        (mover,) = movers
        answer = seats[mover].move(chosen(views[mover]["moves"], turn), version, key=f"t{turn}")
        assert answer.status_code == 200, answer.text
        assert answer.json()["version"] == version + 1
        version += 1
    final = seats[0].get().json()["view"]
    assert final["status"] == "match_over"
    assert max(final["scores"]) >= final["rules"]["target_score"]
    events = seats[1].events(0).json()
    assert sum(event["type"] == "move" for event in events) == version
    assert seats[1].delete().status_code == 204
    assert seats[0].get().status_code == 404


def test_many_waiting_long_polls_do_not_hold_up_moves(served):
    created = create(served, [{"type": "human"}, {"type": "bot", "level": "greedy"}], seed="w")
    seat = holders(served, created.json())[0]
    waiting = 64  # well beyond gthread's 2 workers x 8 threads
    results: list[requests.Response] = []

    def poll() -> None:
        # A client of its own each: requests.Session is not meant to be shared by threads.
        results.append(Seat(served, seat.url.rsplit("/", 1)[1], seat.token, []).events(0))

    pollers = [threading.Thread(target=poll) for _ in range(waiting)]
    for poller in pollers:
        poller.start()
    time.sleep(0.5)
    started = time.monotonic()
    answer = seat.move(chosen(seat.get().json()["moves"], 0), 0)
    assert answer.status_code == 200
    # Far below the 6 s a poller waits: the move did not queue behind the waiting polls.
    assert time.monotonic() - started < 3
    for poller in pollers:
        poller.join()
    assert len(results) == waiting
    odd = [(r.status_code, r.text[:200]) for r in results if r.status_code != 200 or not r.json()]
    assert not odd
    assert all(r.json()[0]["type"] == "move" for r in results)


def test_the_embedded_default_keeps_sessions_with_several_workers_asked_for(tmp_path):
    with gunicorn(
        tmp_path / "gunicorn.log", WEB_CONCURRENCY="2", LOG_LEVEL="warning", CLIENT_SEEDS="true"
    ) as server:
        base = server.url
        created = create(base, [{"type": "human"}, {"type": "human"}], seed="embedded")
        assert created.status_code == 201
        seats = holders(base, created.json())
        for _ in range(20):
            assert seats[0].get().status_code == 200
        # A long poll on the in-process store wakes when the other seat moves.
        waiting: list[requests.Response] = []
        poller = threading.Thread(target=lambda: waiting.append(seats[1].events(0)))
        poller.start()
        time.sleep(0.3)
        move = chosen(seats[0].get().json()["moves"], 0)
        assert seats[0].move(move, 0).status_code == 200
        poller.join()
        assert waiting[0].json()[0]["card"] == move["card"]
        for seat in seats.values():
            seat.http.close()
        assert requests.get(f"{base}/readyz", timeout=5).status_code == 200


HUMAN = {"type": "human"}
ABSENT = {"type": "human", "absent": True}  # a human seat whose client never calls


def bot(level: str) -> dict[str, str]:
    return {"type": "bot", "level": level}


@pytest.fixture
def served_live(redis_url, tmp_path):
    """Two workers whose turn timers fire within 0.1 s, no rate limits (a whole match is
    thousands of calls from one address)."""
    with gunicorn(
        tmp_path / "gunicorn.log",
        REDIS_URL=redis_url,
        WEB_CONCURRENCY="2",
        LONG_POLL_SECONDS="3",
        LOG_LEVEL="warning",
        CLIENT_SEEDS="true",
        RATE_LIMITS="false",
        TIMER_SCAN_SECONDS="0.1",
        STREAM_PING_SECONDS="0.5",  # a stream's reader, closed, stops at its next ping
    ) as server:
        yield server.url


def hidden_draws(events: list[dict], seat: int | None) -> list[dict]:
    """Events as `seat` (None: a spectator) sees them: another seat's Bank draw names no card."""
    return [
        {**event, "card": None} if event["type"] == "draw" and event["seat"] != seat else event
        for event in events
    ]


@pytest.mark.parametrize(
    ("game", "seats"),
    [
        ("basra", [HUMAN, bot("random")]),
        ("basra", [HUMAN, bot("greedy"), ABSENT, bot("expert")]),
        ("bank", [HUMAN, bot("expert")]),
        ("bank", [ABSENT, bot("random"), HUMAN]),
        ("bank", [bot("greedy"), HUMAN, bot("random"), bot("expert")]),
    ],
)
def test_whole_matches_agree_in_answers_feeds_streams_records_and_replays(served_live, game, seats):
    """Whole matches over both workers, in every game and seat count, humans beside bots of
    every level and a timed seat that never moves (absent after its first timeout): each
    move's answer is its versions' events in the seat's feed; each reader's feed holds every
    version, another seat's Bank draw without its card; the record has one move per version,
    `timeout` exactly where the feed has a timeout; its replay gives the same events."""
    base = served_live
    body = {
        "game": game, "rules": {"target_score": 1}, "seed": f"whole {game} {len(seats)}",
        "seats": [{"type": "human"} if seat is ABSENT else seat for seat in seats],
        "spectators": 1, "turn_seconds": 1, "absent_after": 1,
    }  # fmt: skip
    created = requests.post(f"{base}/v1/sessions", json=body, timeout=30)
    assert created.status_code == 201, created.text
    session = created.json()
    players = {
        number: Seat(base, session["id"], session["seats"][number]["token"], [])
        for number, seat in enumerate(seats)
        if seat is HUMAN
    }
    spectator = Seat(base, session["id"], session["spectators"][0]["token"], [])
    answered: dict[int, list[dict]] = {number: [] for number in players}
    for turn in range(3000):
        watched = spectator.get().json()
        if watched["view"]["status"] == "match_over":
            break
        mover = players.get(watched["view"]["turn"])
        read = mover.get().json() if mover else None
        if not read or not read["moves"] or read["version"] != watched["version"]:
            spectator.events(watched["version"])  # the bots, a timeout or the absent seat
            continue
        move = read["moves"][turn % len(read["moves"])]
        answer = mover.move(move, read["version"], key=f"t{turn}")
        if answer.status_code == 409:
            continue  # the turn timer played first
        assert answer.status_code == 200, answer.text
        events = answer.json()["events"]
        versions = [event["version"] for event in events]
        assert versions == sorted(versions)
        assert set(versions) == set(range(read["version"] + 1, answer.json()["version"] + 1))
        answered[read["seat"]].extend(events)
    else:
        pytest.fail("the match did not end")
    version = watched["version"]
    record = spectator.http.get(f"{spectator.url}/record", timeout=30).json()
    assert record["status"] == "match_over"
    assert [entry["version"] for entry in record["moves"]] == list(range(1, version + 1))
    replayed = requests.post(f"{base}/v1/games/{game}/replay", json={"record": record}, timeout=30)
    assert replayed.json()["verified"] == {"commitment": True, "moves": version}
    played = [event for batch in replayed.json()["events"] for event in batch]
    timeouts = {event["version"] for event in played if event["type"] == "timeout"}
    assert timeouts == {e["version"] for e in record["moves"] if e["by"] == "timeout"}
    if ABSENT in seats:
        assert timeouts  # the absent seat's turns were played for it
    assert spectator.events(0).json() == hidden_draws(played, None)
    for number, player in players.items():
        feed = player.events(0).json()
        assert feed == hidden_draws(played, number)
        assert answered[number] == [event for event in feed if event in answered[number]]
    with Stream(spectator.url, spectator.token, headers={"Last-Event-ID": "0"}) as stream:
        stream.until_version(version)
    assert stream.versions() == list(range(1, version + 1))  # each version once, in order
    assert stream.events() == hidden_draws(played, None)
