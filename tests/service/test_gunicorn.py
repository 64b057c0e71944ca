"""Real gunicorn with gunicorn.conf.py on a free port: a whole match over real HTTP."""

import http.client
import json
import random
import socket
import threading
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


def raw_answer(base: str, request: bytes) -> tuple[http.client.HTTPResponse, bytes]:
    """gunicorn's answer to `request`, sent as is on one connection, and its body."""
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        connection.sendall(request)
        answer = http.client.HTTPResponse(connection)
        answer.begin()
        return answer, answer.read()


def raw_status(base: str, request: bytes) -> int:
    """The status code of gunicorn's answer to `request`, sent as is on one connection."""
    return raw_answer(base, request)[0].status


@pytest.mark.parametrize("length", [b"abc", b"-1", b"1, 2"])
def test_a_request_gunicorn_refuses_is_a_logged_400_not_a_500(gunicorn, length):
    """gunicorn answers a request it cannot parse itself, and writes its access line with an
    answer that has a status but no status_code: the access logger must read that one too,
    or its exception turns the 400 into a 500."""
    base, log = gunicorn
    request = (
        b"POST /v1/games/basra/new HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: " + length + b"\r\nConnection: close\r\n\r\n{}"
    )
    assert raw_status(base, request) == 400
    time.sleep(0.5)  # the access line is written after the answer
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    assert {"status": 400, "method": "POST"}.items() <= lines[-1].items()


@pytest.mark.parametrize(
    "request_bytes, status",
    [
        (b"GET /livez HTTP/1.1\r\nBad Header: y\r\n", 400),
        (b"G@T /livez HTTP/1.1\r\n", 400),
        (b"GET /livez HTTP/9.9\r\n", 400),
        (b"GET /livez HTTP/1.1\r\nX-A: a\x00b\r\n", 400),
        (b"GET /livez?" + b"a" * 9000 + b" HTTP/1.1\r\n", 414),
        (b"GET /livez HTTP/1.1\r\nX-A: " + b"a" * 9000 + b"\r\n", 431),
        (b"GET /livez HTTP/1.1\r\n" + b"".join(b"X-%d: a\r\n" % i for i in range(101)), 431),
    ],
)
def test_a_request_gunicorn_refuses_is_answered_with_problem_details(
    gunicorn, request_bytes, status
):
    """What gunicorn refuses before the app sees it is a problem too, not gunicorn's HTML
    page (contract.md: every 4xx body is problem details, never an HTML error page)."""
    base, _ = gunicorn
    answer, body = raw_answer(base, request_bytes + b"Host: x\r\nConnection: close\r\n\r\n")
    assert answer.status == status
    assert answer.getheader("Content-Type") == "application/problem+json"
    problem = json.loads(body)
    assert problem["status"] == status and problem["detail"]
    assert {"type", "title"} <= problem.keys()


def test_a_preloaded_app_on_redis_answers_concurrent_hosted_moves(redis_url, tmp_path):
    """gunicorn --preload makes the app before gevent patches the workers: the moves of
    concurrent players, whose calls share round trips to Redis, must still wait for a
    round as greenlets (a wait that blocked a worker's thread stopped it for good)."""
    with serve(tmp_path / "gunicorn.log", "--preload", ready="/readyz", REDIS_URL=redis_url,
               RATE_LIMITS="false", LOG_LEVEL="warning") as server:  # fmt: skip
        played: list[int] = []

        def play() -> None:
            with requests.Session() as http:
                seats = [{"type": "human"}, {"type": "human"}]
                created = http.post(f"{server.url}/v1/sessions", timeout=10,
                                    json={"game": "basra", "seats": seats}).json()  # fmt: skip
                url = f"{server.url}/v1/sessions/{created['id']}"
                moves = f"{url}/moves"
                seated = [{"Authorization": f"Bearer {seat['token']}"} for seat in created["seats"]]
                for _ in range(20):
                    for headers in seated:
                        answer = http.get(url, headers=headers, timeout=10).json()
                        if answer["moves"]:
                            body = {"move": answer["moves"][0], "version": answer["version"]}
                            moved = http.post(moves, json=body, headers=headers, timeout=10)
                            assert moved.status_code == 200, moved.text
                            break
                played.append(http.get(url, headers=seated[0], timeout=10).json()["version"])

        threads = [threading.Thread(target=play) for _ in range(16)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert played == [20] * 16


def test_a_refused_header_line_is_not_quoted_in_the_log_nor_the_answer(gunicorn):
    """gunicorn quoted a header line without a colon whole, in its warning and its answer:
    a client's `Authorization Bearer <token>` (colon forgotten) wrote the token to the log."""
    base, log = gunicorn
    token = "q" * 52
    request = f"GET /livez HTTP/1.1\r\nAuthorization Bearer {token}\r\n".encode()
    answer, body = raw_answer(base, request + b"Host: x\r\nConnection: close\r\n\r\n")
    assert answer.status == 400
    assert json.loads(body)["detail"] == "Invalid HTTP Header: 'a malformed header line'"
    assert "Invalid HTTP Header: 'a malformed header line'" in log.read_text()
    assert token not in log.read_text()


def access_line(log, request_id: str) -> dict:
    """The access line of the request `request_id`, once written (after the answer)."""
    deadline = time.monotonic() + 10
    while request_id not in log.read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    (line,) = [line for line in lines if line.get("request_id") == request_id]
    return line


def test_a_token_put_where_a_session_id_goes_is_not_written_to_the_access_line(gunicorn):
    """A client that sent its token in the path (GET /v1/sessions/<token>) had it written to
    the access log; the path is written with `<not-an-id>` there, as its 404 names it."""
    base, log = gunicorn
    token = "q" * 52
    answer = requests.get(f"{base}/v1/sessions/{token}/events", timeout=10)
    assert answer.status_code == 404 and token not in answer.text
    line = access_line(log, answer.headers["X-Request-ID"])
    assert line["path"] == "/v1/sessions/<not-an-id>/events"
    assert token not in log.read_text()


def test_a_token_sent_in_the_query_or_as_a_header_of_the_log_is_not_written(gunicorn):
    """A careless client's token, in the query string (EventSource sends no header), as its
    user agent or as its request id: the access line hides it, and the answer's
    X-Request-ID is one of the service's own."""
    base, log = gunicorn
    token = "q" * 52
    answer = requests.get(
        f"{base}/v1/sessions?access_token={token}&limit=5",
        headers={"User-Agent": f"app/1.0 {token}", "X-Request-ID": f"req-{token}"},
        timeout=10,
    )
    assert token not in answer.headers["X-Request-ID"]
    line = access_line(log, answer.headers["X-Request-ID"])
    assert line["query"] == "access_token=<hidden>&limit=5"
    assert line["user_agent"] == "app/1.0 <hidden>"
    assert token not in log.read_text()
