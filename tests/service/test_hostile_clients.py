"""What a careless or hostile client can do against real gunicorn on real Redis, on loopback:
each refusal a problem, nobody else held up, no worker held."""

import gzip
import socket
import time
from contextlib import ExitStack

import orjson
import pytest
import requests

from tests.gunicorn_server import gunicorn

HUMANS = [{"type": "human"}, {"type": "human"}]
PER_ADDRESS = 6


@pytest.fixture(scope="module")
def served(redis_server, tmp_path_factory):
    with gunicorn(
        tmp_path_factory.mktemp("hostile") / "gunicorn.log",
        REDIS_URL=redis_server.url,
        WEB_CONCURRENCY="1",
        RATE_LIMITS="false",
        MAX_WAITERS_PER_ADDRESS=str(PER_ADDRESS),
        LOG_LEVEL="warning",
    ) as server:
        yield server


def tokens_of(base: str, spectators: int) -> tuple[str, list[str]]:
    """A new session's id, and its seats' and spectators' tokens."""
    body = {"game": "basra", "seats": HUMANS, "spectators": spectators}
    created = requests.post(f"{base}/v1/sessions", json=body, timeout=10).json()
    tokens = [seat["token"] for seat in created["seats"]]
    return created["id"], tokens + [entry["token"] for entry in created["spectators"]]


def open_stream(port: int, session_id: str, token: str, source: str) -> tuple[socket.socket, bytes]:
    """A stream opened from the loopback address `source`, and its answer's head."""
    sock = socket.socket()
    sock.settimeout(10)
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    sock.sendall(
        f"GET /v1/sessions/{session_id}/stream HTTP/1.1\r\nHost: x\r\n"
        f"Authorization: Bearer {token}\r\n\r\n".encode()
    )
    head = b""
    while b"\r\n\r\n" not in head:
        part = sock.recv(4096)
        if not part:
            break
        head += part
    return sock, head


def body_of(sock: socket.socket, answer: bytes) -> bytes:
    """The body of an answer whose head (and maybe some of its body) is `answer`."""
    head, _, body = answer.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )  # fmt: skip
    while len(body) < length:
        body += sock.recv(4096)
    return body


def test_one_address_with_many_tokens_cannot_take_every_readers_place(served):
    # Tokens are cheap: every session gives its seats' and up to 16 spectators' tokens, each
    # allowed MAX_WAITERS_PER_TOKEN readers. Before, one client held streams on such tokens
    # until the worker's MAX_WAITERS were all its own, and every other client's stream or
    # long poll was a 503 for as long as it kept them open.
    session_id, tokens = tokens_of(served.url, spectators=PER_ADDRESS)
    with ExitStack() as held:
        for token in tokens[:PER_ADDRESS]:  # one stream a token: no token's own cap bites
            sock, head = open_stream(served.port, session_id, token, "127.0.0.1")
            held.callback(sock.close)
            assert head.startswith(b"HTTP/1.1 200"), head
        sock, head = open_stream(served.port, session_id, tokens[PER_ADDRESS], "127.0.0.1")
        held.callback(sock.close)
        assert head.startswith(b"HTTP/1.1 429"), head
        assert b"application/problem+json" in head and b"Retry-After: 1" in head
        assert b"/problems/too-many-readers" in body_of(sock, head)
        # Another client still follows its own session, and the worker answers at once.
        other_id, other_tokens = tokens_of(served.url, spectators=0)
        sock, head = open_stream(served.port, other_id, other_tokens[0], "127.0.0.2")
        held.callback(sock.close)
        assert head.startswith(b"HTTP/1.1 200"), head
        started = time.monotonic()
        assert requests.get(f"{served.url}/livez", timeout=5).status_code == 200
        assert time.monotonic() - started < 0.5


@pytest.mark.parametrize("coding", ["gzip", "deflate", "br"])
def test_a_content_encoded_body_is_a_415_not_read_as_malformed_json(served, coding):
    # Before: the body was read as it came, a gzipped one as "malformed JSON" (400), as if
    # the JSON inside were wrong, and a plain one labelled gzip was taken as it was.
    new = f"{served.url}/v1/games/basra/new"
    for body in (gzip.compress(b'{"seed": "x"}'), b'{"seed": "x"}'):
        refused = requests.post(new, data=body, timeout=10, headers={
            "Content-Type": "application/json", "Content-Encoding": coding})  # fmt: skip
        assert refused.status_code == 415, refused.text
        assert refused.headers["Content-Type"] == "application/problem+json"
        assert refused.headers["Accept-Encoding"] == "identity"
        assert refused.json()["type"] == "/problems/unsupported-media-type"
        assert "Content-Encoding" in refused.json()["detail"]
    # A hosted move (the lean path's) alike, and it changes nothing.
    session_id, tokens = tokens_of(served.url, spectators=0)
    seat = {"Authorization": f"Bearer {tokens[0]}"}
    read = requests.get(f"{served.url}/v1/sessions/{session_id}", headers=seat, timeout=10)
    move = {"move": read.json()["moves"][0], "version": 0}
    refused = requests.post(
        f"{served.url}/v1/sessions/{session_id}/moves", data=orjson.dumps(move), timeout=10,
        headers={**seat, "Content-Type": "application/json", "Content-Encoding": coding},
    )  # fmt: skip
    assert refused.status_code == 415
    assert refused.json()["type"] == "/problems/unsupported-media-type"
    again = requests.get(f"{served.url}/v1/sessions/{session_id}", headers=seat, timeout=10)
    assert again.json()["version"] == 0
    # `identity` is no coding at all.
    plain = requests.post(new, data=b'{"seed": "x"}', timeout=10, headers={
        "Content-Type": "application/json", "Content-Encoding": "identity"})  # fmt: skip
    assert plain.status_code == 200


@pytest.fixture(scope="module")
def limited(redis_server, tmp_path_factory):
    with gunicorn(
        tmp_path_factory.mktemp("limited") / "gunicorn.log",
        REDIS_URL=redis_server.url,
        WEB_CONCURRENCY="2",
        RATE_LIMITS="true",
        RATE_LIMIT_ADDRESS="1000/second",
        RATE_LIMIT_TOKEN="1000/second",
        RATE_LIMIT_COSTLY="14/minute",
        LOG_LEVEL="warning",
    ) as server:
        yield server


def play_first_move(base: str, session_id: str, token: str) -> requests.Response:
    seat = {"Authorization": f"Bearer {token}"}
    read = requests.get(f"{base}/v1/sessions/{session_id}", headers=seat, timeout=10).json()
    body = {"move": read["moves"][0], "version": read["version"]}
    return requests.post(f"{base}/v1/sessions/{session_id}/moves", json=body, headers=seat,
                         timeout=30)  # fmt: skip


def test_the_expert_replies_to_hosted_moves_count_against_the_costly_limit(limited):
    # Before, only a creation paid for its expert bots (1 + 10 each): every move after it
    # had them search again (~0.1 s of CPU each) for free, so one address kept both cores
    # busy with some 30 expert replies a second. A move now pays 1 per expert bot seat.
    base = limited.url
    # Moves that no expert answers cost nothing more.
    greedy = [{"type": "human"}, {"type": "bot", "level": "greedy"}]
    created = requests.post(f"{base}/v1/sessions", json={"game": "basra", "seats": greedy},
                            timeout=30)  # fmt: skip
    assert created.status_code == 201  # 1 of 14
    for _ in range(5):
        moved = play_first_move(base, created.json()["id"], created.json()["seats"][0]["token"])
        assert moved.status_code == 200
    seats = [{"type": "human"}, {"type": "bot", "level": "expert"}]
    created = requests.post(f"{base}/v1/sessions", json={"game": "basra", "seats": seats},
                            timeout=30).json()  # fmt: skip  # 11 more: 12
    session_id, token = created["id"], created["seats"][0]["token"]
    for _ in range(2):  # 1 each: 14
        assert play_first_move(base, session_id, token).status_code == 200
    refused = play_first_move(base, session_id, token)  # 15: over
    assert refused.status_code == 429, refused.text
    assert refused.headers["Content-Type"] == "application/problem+json"
    assert refused.json()["type"] == "/problems/rate-limited"
    assert int(refused.headers["Retry-After"]) >= 1
    seat = {"Authorization": f"Bearer {token}"}
    after = requests.get(f"{base}/v1/sessions/{session_id}", headers=seat, timeout=10).json()
    assert after["version"] == 4  # two moves and their two replies: the refused one changed nothing


@pytest.mark.parametrize("path", ["/", "/docs"])
def test_no_redirect_goes_to_the_host_a_client_names(served, path):
    # Before, GET /docs was Werkzeug's 308 to http://<the request's Host header>/docs/: a
    # permanent, cacheable redirect to whatever host the client named.
    answer = requests.get(f"{served.url}{path}", headers={"Host": "evil.example"},
                          allow_redirects=False, timeout=10)  # fmt: skip
    assert answer.is_redirect
    assert answer.headers["Location"] == "/docs/"
