"""Floods on one session through real gunicorn (two gevent workers, the shipped config) on
real Redis: many clients at once, each answer checked against invariants (how many writes
applied, every version once, no 500) rather than one expected answer."""

import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
import requests

from tests.gunicorn_server import gunicorn
from tests.service.sessions_client import Seat, create

HUMANS = [{"type": "human"}, {"type": "human"}]
RACERS = 40


@pytest.fixture(scope="module")
def served(redis_server, tmp_path_factory):
    redis_server.start()  # a no-op unless an earlier test left it stopped
    with gunicorn(
        tmp_path_factory.mktemp("races") / "gunicorn.log",
        REDIS_URL=redis_server.url,
        WEB_CONCURRENCY="2",
        GUNICORN_WORKER_CLASS="gevent",
        CLIENT_SEEDS="true",
        LOG_LEVEL="warning",
    ) as server:
        yield server


def at_once(count: int, call: Callable[[int], requests.Response]) -> list[requests.Response]:
    """`call(i)` for i in range(count), each in its own thread, all let go together."""
    barrier = threading.Barrier(count)
    answers: list[requests.Response | None] = [None] * count

    def run(index: int) -> None:
        barrier.wait()
        answers[index] = call(index)

    threads = [threading.Thread(target=run, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(answer is not None for answer in answers)
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
