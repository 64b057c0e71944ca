"""Real gunicorn with gunicorn.conf.py on a free port: a whole match over real HTTP."""

import json
import os
import random
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

ROOT = Path(__file__).resolve().parents[2]
GUNICORN = Path(sys.executable).with_name("gunicorn")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until_live(base: str, server: subprocess.Popen, deadline: float = 20.0) -> None:
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if server.poll() is not None:
            raise RuntimeError(f"gunicorn exited with {server.returncode}")
        try:
            if requests.get(f"{base}/livez", timeout=1).status_code == 200:
                return
        except requests.RequestException:
            time.sleep(0.1)
    raise TimeoutError("gunicorn did not come up")


@pytest.fixture(scope="module", params=["default", "gthread"])
def gunicorn(request, tmp_path_factory):
    """The production configuration without Redis, with its default worker class and with
    threads; yields (base URL, log path)."""
    port = free_port()
    log = tmp_path_factory.mktemp("gunicorn") / "gunicorn.log"
    env = {key: value for key, value in os.environ.items() if key != "REDIS_URL"}
    env.update(PORT=str(port), HOST="127.0.0.1", GUNICORN_THREADS="4")
    if request.param != "default":
        env["GUNICORN_WORKER_CLASS"] = request.param
    with log.open("w") as out:
        server = subprocess.Popen(
            [str(GUNICORN), "-c", "gunicorn.conf.py"], cwd=ROOT, env=env, stdout=out, stderr=out
        )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_live(base, server)
        yield base, log
    finally:
        server.terminate()
        server.wait(timeout=15)


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
