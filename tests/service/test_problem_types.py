"""Every kind of problem answers its own `type` (`/problems/<kind>`) and title, described at
that path and in docs/api.md."""

import re
from pathlib import Path

import pytest
from werkzeug.exceptions import BadRequest

from service import create_app
from service.errors import KINDS, PROBLEM_TYPES
from tests.redis_server import free_port
from tests.service.test_engine_limits import crowded_state

APP_CONFIG = {"MAX_BODY_BYTES": 4096}
API_DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"
HUMANS = [{"type": "human"}, {"type": "human"}]
NO_POINTS = {"preset": "levantine", "basra_points": 0, "jack_basra_points": 0,
             "majority_points": 0, "card_points": False}  # fmt: skip


def assert_kind(response, name: str) -> dict:
    kind = KINDS[name]
    assert response.status_code == kind.status, response.get_data(as_text=True)
    assert response.mimetype == "application/problem+json"
    body = response.get_json()
    assert (body["type"], body["title"], body["status"]) == (kind.type, kind.title, kind.status)
    return body


def new_state(client, seed: str = "kinds") -> dict:
    return client.post("/v1/games/basra/new", json={"seed": seed}).get_json()["state"]


class Hosted:
    """One two-human session through the test client."""

    def __init__(self, client, **extra) -> None:
        self.client = client
        created = client.post("/v1/sessions", json={"seats": HUMANS, "seed": "k", **extra})
        assert created.status_code == 201, created.get_data(as_text=True)
        self.created = created.get_json()
        self.path = f"/v1/sessions/{self.created['id']}"
        self.tokens = [seat["token"] for seat in self.created["seats"]]

    def auth(self, token: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}"}

    def read(self, seat: int = 0) -> dict:
        return self.client.get(self.path, headers=self.auth(self.tokens[seat])).get_json()

    def move(self, seat: int, move: object, version: int, **headers: str):
        return self.client.post(
            f"{self.path}/moves",
            json={"move": move, "version": version},
            headers={**self.auth(self.tokens[seat]), **headers},
        )

    def to_move(self) -> tuple[int, dict]:
        for seat in (0, 1):
            read = self.read(seat)
            if read["moves"]:
                return seat, read
        raise AssertionError("nobody is to move")


@pytest.fixture(scope="module")
def hosted_app():
    app = create_app({"REDIS_URL": None, "LONG_POLL_SECONDS": 0.0, "CLIENT_SEEDS": True})
    yield app
    app.extensions["sessions"].close()


@pytest.fixture
def hosted(hosted_app) -> Hosted:
    return Hosted(hosted_app.test_client())


# -- the stateless endpoints and HTTP itself ----------------------------------------------


def test_malformed_json(client):
    response = client.post("/v1/games/basra/new", data="{", content_type="application/json")
    assert_kind(response, "malformed-body")


def test_werkzeugs_own_bad_request(app):
    with app.test_request_context():
        assert_kind(app.handle_user_exception(BadRequest()), "bad-request")


def test_unknown_path_method_media_type_and_size(client):
    assert_kind(client.get("/nope"), "not-found")
    assert_kind(client.post("/v1/games/chess/new", json={}), "unknown-game")
    assert_kind(client.get("/v1/games/basra/apply"), "method-not-allowed")
    assert_kind(client.post("/v1/games/basra/new", data="{}", content_type="text/plain"),
                "unsupported-media-type")  # fmt: skip
    big = b'{"seed": "' + b"x" * 5000 + b'"}'
    assert_kind(client.post("/v1/games/basra/new", data=big, content_type="application/json"),
                "body-too-large")  # fmt: skip


def test_the_engines_kinds_of_rejection(client):
    state = new_state(client)
    assert_kind(client.post("/v1/games/basra/view", json={"state": state, "seat": 7}),
                "invalid-request")  # fmt: skip
    assert_kind(client.post("/v1/games/basra/new", json={"rules": NO_POINTS}), "invalid-rules")
    twice = {**state, "hands": [state["hands"][1], state["hands"][1]]}
    assert_kind(client.post("/v1/games/basra/legal-moves", json={"state": twice}),
                "invalid-state")  # fmt: skip
    apply = "/v1/games/basra/apply"
    assert_kind(client.post(apply, json={"state": state, "move": {"card": 5}}), "not-a-move")
    body = assert_kind(client.post(apply, json={"state": state, "move": {"card": "2C"}}),
                       "illegal-move")  # fmt: skip
    assert body["errors"] == {"move.card": ["card not in hand: 2C"]}
    assert_kind(client.post("/v1/games/basra/legal-moves", json={"state": crowded_state()}),
                "too-large")  # fmt: skip


def test_an_ambiguous_move_lists_its_choices(client):
    for seed in map(str, range(500)):
        state = new_state(client, seed)
        moves = client.post("/v1/games/basra/legal-moves", json={"state": state}).get_json()
        cards = [move["card"] for move in moves["moves"]]
        several = next((card for card in cards if cards.count(card) > 1), None)
        if several:
            break
    else:
        raise AssertionError("no deal of 500 has a card with several captures")
    response = client.post(
        "/v1/games/basra/apply", json={"state": state, "move": {"card": several}}
    )
    body = assert_kind(response, "ambiguous-move")
    assert len(body["choices"]["move.capture"]) > 1


def test_an_unexpected_exception():
    app = create_app({"REDIS_URL": None})

    @app.get("/explode")
    def explode():
        raise RuntimeError("internals")

    assert_kind(app.test_client().get("/explode"), "internal-error")


def test_rate_limited():
    client = create_app(
        {"REDIS_URL": None, "RATE_LIMITS": True, "RATE_LIMIT_ADDRESS": "1/minute"}
    ).test_client()
    assert client.get("/v1/games").status_code == 200
    response = assert_kind(client.get("/v1/games"), "rate-limited")
    assert response["detail"]


# -- hosted sessions ------------------------------------------------------------------------


def test_tokens_and_sessions(hosted):
    assert_kind(hosted.client.get(hosted.path), "unauthorized")
    assert_kind(hosted.client.get(hosted.path, headers=hosted.auth("x" * 52)), "unauthorized")
    missing = hosted.path[:-1] + ("a" if hosted.path[-1] != "a" else "b")
    assert_kind(hosted.client.get(missing, headers=hosted.auth(hosted.tokens[0])),
                "session-not-found")  # fmt: skip


def test_moves_in_the_contracts_order(hosted):
    seat, read = hosted.to_move()
    move = {"card": read["moves"][0]["card"], "capture": read["moves"][0]["capture"]}
    body = assert_kind(hosted.move(seat, move, read["version"] + 5), "stale-version")
    assert body["version"] == read["version"]
    assert body["detail"].startswith(f"version {read['version'] + 5} is ahead of the session's")
    assert_kind(hosted.move(1 - seat, move, read["version"]), "not-your-turn")
    assert_kind(hosted.move(seat, {"card": "ZZ"}, read["version"]), "not-a-move")
    assert hosted.move(seat, move, read["version"], **{"Idempotency-Key": "k1"}).status_code == 200
    again = hosted.move(seat, {"card": "AS"}, read["version"], **{"Idempotency-Key": "k1"})
    assert_kind(again, "idempotency-key-reused")


def test_a_creation_retried_while_the_first_still_holds_its_key(hosted_app):
    from service.hosted.tokens import digest, fingerprint
    from service.store import HOLD

    body = {"game": "basra", "seats": [{"type": "human"}] * 2}
    sessions = hosted_app.extensions["sessions"]
    held = f"{HOLD}{fingerprint('create', body)}:the first request"
    assert sessions.store.remember_creation(digest("held-key"), held, 30) is None
    busy = hosted_app.test_client().post(
        "/v1/sessions", json=body, headers={"Idempotency-Key": "held-key"}
    )
    assert_kind(busy, "idempotency-key-in-use")
    assert busy.headers["Retry-After"] == "1"


def test_a_finished_match(hosted_app):
    hosted = Hosted(hosted_app.test_client(), rules={"preset": "levantine", "target_score": 1})
    for _ in range(1000):
        read = hosted.read()
        if read["view"]["status"] == "match_over":
            break
        seat, read = hosted.to_move()
        move = read["moves"][0]
        moved = hosted.move(seat, {"card": move["card"], "capture": move["capture"]},
                            read["version"])  # fmt: skip
        assert moved.status_code == 200
    assert_kind(hosted.move(0, {"card": "AS"}, read["version"]), "match-over")


def test_spectators(hosted_app):
    hosted = Hosted(hosted_app.test_client(), spectators=16)
    watcher = hosted.created["spectators"][0]["token"]
    spectators = f"{hosted.path}/spectators"
    assert_kind(hosted.client.post(spectators, headers=hosted.auth(watcher)),
                "seat-token-required")  # fmt: skip
    assert_kind(hosted.client.post(spectators, headers=hosted.auth(hosted.tokens[0])),
                "spectator-limit")  # fmt: skip


@pytest.mark.parametrize(
    ("settings", "name"),
    [({"MAX_WAITERS_PER_TOKEN": 0}, "too-many-readers"), ({"MAX_WAITERS": 0}, "server-busy")],
)
def test_readers_over_a_cap(settings, name):
    app = create_app({"REDIS_URL": None, "LONG_POLL_SECONDS": 0.0, **settings})
    try:
        client = app.test_client()
        created = client.post("/v1/sessions", json={"seats": HUMANS}).get_json()
        headers = {"Authorization": f"Bearer {created['seats'][0]['token']}"}
        response = client.get(f"/v1/sessions/{created['id']}/events?after=0", headers=headers)
        assert_kind(response, name)
        assert int(response.headers["Retry-After"]) >= 1
    finally:
        app.extensions["sessions"].close()


def test_the_store_unreachable():
    app = create_app({"REDIS_URL": f"redis://127.0.0.1:{free_port()}/0",
                      "READY_GRACE_SECONDS": 0, "REDIS_TIMEOUT_SECONDS": 0.2})  # fmt: skip
    response = app.test_client().post("/v1/sessions", json={"seats": HUMANS})
    assert_kind(response, "unavailable")
    assert response.headers["Retry-After"]
    app.extensions["sessions"].close()


# -- where the kinds are told -------------------------------------------------------------


def test_each_kind_is_described_at_its_type(client):
    listed = client.get(PROBLEM_TYPES.rstrip("/")).get_json()["kinds"]
    assert [kind["type"] for kind in listed] == [kind.type for kind in KINDS.values()]
    for kind in KINDS.values():
        described = client.get(kind.type).get_json()
        assert described == {"type": kind.type, "status": kind.status, "title": kind.title,
                             "meaning": kind.meaning, "advice": kind.advice}  # fmt: skip
    assert_kind(client.get(f"{PROBLEM_TYPES}no-such-kind"), "not-found")


def test_docs_api_lists_every_kind_with_its_status():
    rows = re.findall(r"^\| `(/problems/[a-z-]+)` \| (\d{3}) \|", API_DOC.read_text(), re.M)
    assert rows == [(kind.type, str(kind.status)) for kind in KINDS.values()]


def test_every_kind_is_answered_by_a_test_here():
    """A kind added to the table needs a test above that answers it (`assert_kind(…, name)`,
    or a parametrized name)."""
    named = set(re.findall(r'"([a-z][a-z-]+)"\)', Path(__file__).read_text()))
    assert set(KINDS) <= named
