"""Every error class is RFC 9457 problem details (application/problem+json)."""

import pytest
from werkzeug.exceptions import InternalServerError

from service import create_app
from tests.redis_server import free_port

APP_CONFIG = {"MAX_BODY_BYTES": 4096}

PROBLEM_KEYS = {"type", "title", "status", "detail"}


def assert_problem(response, status: int) -> dict:
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.content_type == "application/problem+json"
    body = response.get_json(force=True)
    assert set(body) >= PROBLEM_KEYS
    assert body["status"] == status
    assert isinstance(body["detail"], str) and body["detail"]
    return body


@pytest.mark.parametrize("body", ["{", '{"state": }', "[1,", "NaN", '{"seed": "\\ud800"', "\xff"])
def test_malformed_json_is_400(client, body):
    response = client.post(
        "/v1/games/basra/new", data=body.encode("latin-1"), content_type="application/json"
    )
    assert_problem(response, 400)


def test_deeply_nested_json_is_400_not_a_crash(client):
    body = "[" * 2000 + "]" * 2000
    response = client.post("/v1/games/basra/score", data=body, content_type="application/json")
    assert_problem(response, 400)


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "application/xml"]
)
def test_a_body_that_is_not_json_is_415(client, content_type):
    response = client.post("/v1/games/basra/new", data='{"seats": 2}', content_type=content_type)
    body = assert_problem(response, 415)
    assert content_type in body["detail"]


def test_a_body_over_the_limit_is_413(client):
    body = b'{"seed": "' + b"x" * 5000 + b'"}'
    body = assert_problem(
        client.post("/v1/games/basra/new", data=body, content_type="application/json"), 413
    )
    assert "4096" in body["detail"]


def test_the_default_body_limit_is_64_kib():
    assert create_app({"REDIS_URL": None}).config["MAX_CONTENT_LENGTH"] == 64 * 1024


@pytest.mark.parametrize("path", ["/nope", "/v1/games/chess/new", "/v1/games/basra"])
def test_an_unknown_path_is_404(client, path):
    assert_problem(client.get(path), 404)
    assert_problem(client.post(path, json={}), 404)


@pytest.mark.parametrize(
    ("method", "path"),
    [("get", "/v1//games"), ("post", "/v1/games//basra/new"), ("get", "/v1/sessions//events"),
     ("post", "/v1/sessions/x//moves")],
)  # fmt: skip
def test_a_path_with_an_empty_segment_is_404_not_a_redirect_elsewhere(client, method, path):
    """An empty segment (an empty session id) is no documented path: Werkzeug merged the
    slashes and answered a 308 HTML page to another path (`/v1/sessions//events` to the
    session named `events`)."""
    assert_problem(getattr(client, method)(path, json={}), 404)


@pytest.mark.parametrize(
    ("method", "path"),
    [("get", "/v1/games/basra/apply"), ("delete", "/v1/games"), ("post", "/livez")],
)
def test_a_wrong_method_is_405_with_allow(client, method, path):
    response = getattr(client, method)(path)
    assert_problem(response, 405)
    assert response.headers["Allow"]


@pytest.mark.parametrize(
    ("action", "body", "path"),
    [
        ("legal-moves", {}, "state"),
        ("legal-moves", {"state": [1, 2]}, "state"),
        ("legal-moves", {"state": "x"}, "state"),
        ("legal-moves", {"state": {}, "extra": 1}, "extra"),
        ("apply", {"state": {}}, "move"),
        ("apply", {"state": {}, "move": {}}, "move.card"),
        ("apply", {"state": {}, "move": {"card": "7D", "capture": "7D"}}, "move.capture"),
        ("apply", {"state": {}, "move": {"card": "7D", "capture": ["7D", "z"]}}, "move.capture.1"),
        ("apply", {"state": {}, "move": "7D"}, "move"),
        ("view", {"state": {}}, "seat"),
        ("view", {"state": {}, "seat": "0"}, "seat"),
        ("legal-moves", [], "body"),
        ("legal-moves", "state", "body"),
    ],
)
def test_an_envelope_failing_its_schema_is_422_naming_each_field(client, action, body, path):
    response = client.post(f"/v1/games/basra/{action}", json=body)
    problem = assert_problem(response, 422)
    assert path in problem["errors"], problem
    assert all(
        isinstance(messages, list) and all(isinstance(m, str) for m in messages)
        for messages in problem["errors"].values()
    )


@pytest.mark.parametrize(
    "state",
    [
        {},
        {"game": "chess"},
        {"rules": {"preset": "x"}},
        {"hands": [[None]]},
        {"scores": [2**70, 0]},
    ],
)
def test_a_state_the_game_cannot_read_is_422_under_state(client, state):
    problem = assert_problem(client.post("/v1/games/basra/legal-moves", json={"state": state}), 422)
    assert all(path == "state" or path.startswith("state.") for path in problem["errors"])


@pytest.mark.parametrize("endpoint", ["legal-moves", "score", "view"])
@pytest.mark.parametrize(("own", "other"), [("basra", "bank"), ("bank", "basra")])
def test_another_games_state_is_422_naming_state_game(client, endpoint, own, other):
    """A whole state of another game says what is wrong with it: its game, not the first
    key this game's states have and that one lacks."""
    state = client.post(f"/v1/games/{other}/new", json={"seed": "other"}).get_json()["state"]
    body = {"state": state, **({"seat": 0} if endpoint == "view" else {})}
    problem = assert_problem(client.post(f"/v1/games/{own}/{endpoint}", json=body), 422)
    assert list(problem["errors"]) == ["state.game"]
    assert f'must be "{own}", not "{other}"' in problem["errors"]["state.game"][0]


def test_huge_numbers_in_a_state_never_break_the_answer(client):
    state = client.post("/v1/games/basra/new", json={"seed": "big"}).get_json()["state"]
    state["scores"] = [2**64 - 1, 0]
    response = client.post("/v1/games/basra/score", json={"state": state})
    assert response.status_code == 200
    view = client.post("/v1/games/basra/view", json={"state": state, "seat": 0}).get_json()
    assert view["view"]["scores"] == [2**64 - 1, 0]


def test_an_unexpected_exception_is_a_logged_500_problem(caplog):
    app = create_app({"REDIS_URL": None})

    @app.get("/explode")
    def explode():
        raise RuntimeError("secret internals")

    body = assert_problem(app.test_client().get("/explode"), 500)
    assert "secret internals" not in body["detail"]
    assert any("secret internals" in record.getMessage() or record.exc_info
               for record in caplog.records)  # fmt: skip


def test_an_aborted_500_is_a_problem_too(app):
    assert InternalServerError.code == 500
    with app.test_request_context():
        response = app.handle_user_exception(InternalServerError())
    assert response.status_code == 500
    assert response.content_type == "application/problem+json"


def test_every_answer_carries_the_request_id_it_was_given_or_a_fresh_one(client):
    given = client.get("/livez", headers={"X-Request-ID": "trace-42"})
    assert given.headers["X-Request-ID"] == "trace-42"
    failed = client.get("/nope", headers={"X-Request-ID": "trace-43"})
    assert failed.headers["X-Request-ID"] == "trace-43"
    fresh = {client.get("/livez").headers["X-Request-ID"] for _ in range(3)}
    assert len(fresh) == 3 and all(fresh)
    unsafe = client.get("/livez", headers={"X-Request-ID": 'a"b c'}).headers["X-Request-ID"]
    assert unsafe != 'a"b c' and unsafe


def test_a_request_id_ending_in_a_newline_is_replaced_not_echoed(client):
    # `$` matches before a trailing newline: such an id passed the check, then broke the
    # answer's header (a 500) and went into the log line as given.
    for given in ("trace-44\n", "trace-44\r\n"):
        answer = client.get("/livez", environ_overrides={"HTTP_X_REQUEST_ID": given})
        assert answer.status_code == 200
        assert "\n" not in answer.headers["X-Request-ID"]
        assert answer.headers["X-Request-ID"] != given.rstrip()


def test_livez_is_always_ok(client):
    response = client.get("/livez")
    assert response.status_code == 200 and response.get_json() == {"status": "ok"}


def test_readyz_without_redis_is_ready(client):
    response = client.get("/readyz")
    assert response.status_code == 200 and response.get_json() == {"status": "ok"}


def test_readyz_checks_the_configured_redis(redis_url):
    response = create_app({"REDIS_URL": redis_url}).test_client().get("/readyz")
    assert response.status_code == 200 and response.get_json() == {"status": "ok"}


def test_readyz_is_503_when_the_configured_redis_is_down():
    # No grace: a blip shorter than READY_GRACE_SECONDS keeps /readyz at 200 (test_fail_fast).
    app = create_app({"REDIS_URL": f"redis://127.0.0.1:{free_port()}/0", "READY_GRACE_SECONDS": 0})
    body = assert_problem(app.test_client().get("/readyz"), 503)
    assert "reachable" in body["detail"]


def test_limits_come_from_the_environment_and_the_dict_wins(monkeypatch):
    monkeypatch.setenv("MAX_BODY_BYTES", "100")
    small = create_app({"REDIS_URL": None}).test_client()
    body = {"seed": "x" * 120}  # over 100 bytes, a seed within its 128 characters
    assert_problem(small.post("/v1/games/basra/new", json=body), 413)
    roomy = create_app({"REDIS_URL": None, "MAX_BODY_BYTES": 1000}).test_client()
    assert roomy.post("/v1/games/basra/new", json=body).status_code == 200


def test_the_service_serves_no_benchmark_route():
    """The benchmark's echo floor is an app of its own (bench/echo.py), not a route here."""
    body = {"state": {"any": "object"}, "move": {"card": "10d"}}
    client = create_app({"REDIS_URL": None}).test_client()
    assert_problem(client.post("/bench/echo", json=body), 404)
