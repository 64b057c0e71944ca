"""Hosted sessions on real gunicorn (production config) with real Redis, over real HTTP."""

import threading
import time

import pytest
import requests

from tests.gunicorn_server import gunicorn
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
