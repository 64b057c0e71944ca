"""Real gunicorn with gunicorn.conf.py on a free port: a whole match over real HTTP."""

import json
import random
import time

import pytest
import requests

from tests.gunicorn_server import gunicorn as serve


@pytest.fixture(scope="module", params=["default", "gthread"])
def gunicorn(request, tmp_path_factory):
    """The production configuration without Redis, with its default worker class and with
    threads; yields (base URL, log path)."""
    log = tmp_path_factory.mktemp("gunicorn") / "gunicorn.log"
    worker = {} if request.param == "default" else {"GUNICORN_WORKER_CLASS": request.param}
    with serve(log, within=20.0, GUNICORN_THREADS="4", **worker) as server:
        yield server.url, server.log


def call(session: requests.Session, base: str, action: str, body: dict) -> dict:
    response = session.post(f"{base}/v1/games/basra/{action}", json=body, timeout=10)
    assert response.status_code == 200, response.text
    return response.json()


def test_a_whole_match_over_real_http(gunicorn):
    base, _ = gunicorn
    rng = random.Random(2024)
    with requests.Session() as session:
        state = call(session, base, "new", {"seed": "gunicorn-match"})["state"]
        rounds_ended = 0
        for _ in range(5000):
            if state["status"] == "match_over":
                break
            moves = call(session, base, "legal-moves", {"state": state})["moves"]
            answer = call(session, base, "apply", {"state": state, "move": rng.choice(moves)})
            state = answer["state"]
            rounds_ended += sum(event["type"] == "round_end" for event in answer["events"])
        assert state["status"] == "match_over"
        assert state["turn"] is None and state["winner"] in (0, 1)
        assert max(state["scores"]) >= state["rules"]["target_score"]
        assert rounds_ended == state["round"]
        assert call(session, base, "legal-moves", {"state": state}) == {"moves": []}
        sides = call(session, base, "score", {"state": state})["sides"]
        assert len(sides) == 2


def test_errors_over_real_http_are_problem_details_with_the_request_id(gunicorn):
    base, log = gunicorn
    response = requests.post(
        f"{base}/v1/games/basra/apply",
        data="{not json",
        headers={"Content-Type": "application/json", "X-Request-ID": "real-http-1"},
        timeout=10,
    )
    assert response.status_code == 400
    assert response.headers["Content-Type"] == "application/problem+json"
    assert response.headers["X-Request-ID"] == "real-http-1"
    assert response.json()["status"] == 400
    time.sleep(0.5)  # the access line is written after the answer
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    (logged,) = [line for line in lines if line["request_id"] == "real-http-1"]
    assert logged["status"] == 400 and logged["path"] == "/v1/games/basra/apply"
