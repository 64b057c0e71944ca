"""A body that does not come (stalled or trickled: a slowloris on the body) holds its
connection BODY_TIMEOUT_SECONDS at most and is answered 408 problem details; such clients
never take the connections everybody else needs (contract-operations.md §1, nobody can
starve the others). Before, gunicorn's reader waited for the rest of a body for ever."""

import json
import select
import socket
import threading
import time

import pytest
import requests

from tests.gunicorn_server import gunicorn as serve

BOUND = 1.0  # BODY_TIMEOUT_SECONDS in these servers
CONNECTIONS = 10  # GUNICORN_WORKER_CONNECTIONS: few, so that a handful of stalls fills them
HEAD = (
    b"POST /v1/games/basra/new HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
)


@pytest.fixture(scope="module", params=["default", "gthread"])
def server(request, tmp_path_factory):
    log = tmp_path_factory.mktemp("gunicorn") / "gunicorn.log"
    worker = {} if request.param == "default" else {"GUNICORN_WORKER_CLASS": request.param}
    with serve(log, within=20.0, GUNICORN_THREADS="4", RATE_LIMITS="false",
               BODY_TIMEOUT_SECONDS=str(BOUND),
               GUNICORN_WORKER_CONNECTIONS=str(CONNECTIONS), **worker) as running:  # fmt: skip
        yield request.param, running


def answer_to(port: int, parts: list[bytes], pause: float = 0.0, within: float = 15.0):
    """The status line and the body of the answer to `parts` sent on one connection, `pause`
    seconds apart (without closing: the client stays), and how long it took."""
    with socket.create_connection(("127.0.0.1", port), timeout=within) as connection:
        started = time.monotonic()
        try:
            for part in parts:
                connection.sendall(part)
                if select.select([connection], [], [], pause)[0]:
                    break  # answered before the client was done
        except OSError:
            pass  # answered (and closed) before the client was done
        received = b""
        while b"\r\n\r\n" not in received or not complete(received):
            data = connection.recv(65536)
            if not data:
                break
            received += data
        head, _, body = received.partition(b"\r\n\r\n")
        return head.split(b"\r\n")[0], head, body, time.monotonic() - started


def complete(received: bytes) -> bool:
    head, _, body = received.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return len(body) >= int(line.split(b":")[1])
    return False


def assert_timed_out(status: bytes, head: bytes, body: bytes, took: float) -> None:
    assert b" 408 " in status, (status, body)
    assert b"content-type: application/problem+json" in head.lower()
    problem = json.loads(body)
    assert problem["status"] == 408 and problem["detail"] and problem["type"]
    assert took < BOUND + 3


def test_a_stalled_body_is_a_408_problem_within_the_bound(server):
    _, running = server
    sent = [HEAD + b"Content-Length: 100\r\n\r\n{\"seed\": "]
    assert_timed_out(*answer_to(running.port, sent))


def test_a_stalled_chunked_body_is_a_408_problem_within_the_bound(server):
    _, running = server
    sent = [HEAD + b"Transfer-Encoding: chunked\r\n\r\n20\r\n{\"seed\": "]
    assert_timed_out(*answer_to(running.port, sent))


def test_a_trickled_body_does_not_renew_the_bound(server):
    """A byte every 0.3 s: each read gets data, the whole body still never comes in time.
    (Under threads the bound is per read of the socket: gevent, the default, only.)"""
    worker, running = server
    if worker != "default":
        pytest.skip("a thread's socket timeout bounds each read, not the whole body")
    sent = [HEAD + b"Content-Length: 60\r\n\r\n", *[b" "] * 30]
    assert_timed_out(*answer_to(running.port, sent, pause=0.3))


def test_a_body_sent_in_pieces_within_the_bound_is_answered(server):
    _, running = server
    body = b'{"seed": "pieces"}'
    sent = [HEAD + b"Content-Length: %d\r\n\r\n" % len(body), body[:5], body[5:]]
    status, _, answered, _ = answer_to(running.port, sent, pause=0.2)
    assert b" 200 " in status, answered
    assert json.loads(answered)["state"]["seed"] == "pieces"


def test_stalled_bodies_on_every_connection_do_not_lock_the_others_out(server):
    """As many stalled bodies as a worker takes connections: within the bound (plus
    gunicorn's keep-alive wait for the rest of the body) they are gone, and a request is
    answered. (gevent, the default: a gthread worker keeps each answered connection in its
    count through the keep-alive wait as well.)"""
    worker, running = server
    if worker != "default":
        pytest.skip("gevent workers only")
    stalls = []
    for _ in range(CONNECTIONS * 2):
        connection = socket.create_connection(("127.0.0.1", running.port), timeout=30)
        connection.sendall(HEAD + b"Content-Length: 100\r\n\r\n{")
        stalls.append(connection)
    answered: list[int] = []

    def call() -> None:
        answered.append(requests.get(f"{running.url}/v1/games", timeout=30).status_code)

    caller = threading.Thread(target=call)
    started = time.monotonic()
    caller.start()
    caller.join(timeout=BOUND + 12)
    try:
        assert answered == [200]
        assert time.monotonic() - started < BOUND + 12
    finally:
        for connection in stalls:
            connection.close()


@pytest.fixture(scope="module")
def send_bounded(tmp_path_factory):
    """gevent (the default) with a 1 s bound on each write of an answer."""
    log = tmp_path_factory.mktemp("gunicorn") / "gunicorn.log"
    with serve(log, within=20.0, RATE_LIMITS="false", SEND_TIMEOUT_SECONDS="1",
               GUNICORN_WORKER_CONNECTIONS=str(CONNECTIONS)) as running:  # fmt: skip
        yield running


def test_clients_that_do_not_read_their_answers_do_not_lock_the_others_out(send_bounded):
    """A slow reader: many large answers asked for at once (pipelined) and none read, with
    the smallest receive window. Its writes stall once the socket's buffers are full, and
    each is dropped SEND_TIMEOUT_SECONDS later, instead of holding one of the worker's
    connections for ever."""
    asked = b"GET /docs/swagger-ui-bundle.js HTTP/1.1\r\nHost: x\r\n\r\n" * 20  # 34 MB
    readers = []
    for _ in range(CONNECTIONS * 2):
        connection = socket.socket()
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
        connection.settimeout(30)
        connection.connect(("127.0.0.1", send_bounded.port))
        connection.sendall(asked)
        readers.append(connection)
    answered: list[int] = []

    def call() -> None:
        answered.append(requests.get(f"{send_bounded.url}/v1/games", timeout=30).status_code)

    caller = threading.Thread(target=call)
    caller.start()
    caller.join(timeout=15)
    try:
        assert answered == [200]
    finally:
        for connection in readers:
            connection.close()


def test_a_keep_alive_connection_outlives_the_send_bound_between_requests(send_bounded):
    """The bound is on an answer's writes only: a connection idle between two requests
    longer than it is still served (gunicorn's keep-alive wait, 5 s, decides)."""
    dropped = send_bounded.log.read_text().count("Socket error")  # slow readers' (above)
    with requests.Session() as session:
        assert session.get(f"{send_bounded.url}/v1/games", timeout=10).status_code == 200
        time.sleep(2.5)
        assert session.get(f"{send_bounded.url}/v1/games", timeout=10).status_code == 200
    assert send_bounded.log.read_text().count("Socket error") == dropped
